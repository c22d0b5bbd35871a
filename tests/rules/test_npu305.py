"""NPU305 from-device-mismatch: its fixture cases (tests/fixtures/NPU305/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import (
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU305")


def test_npu305_suggests_the_device_token_and_soc_value() -> None:
    got = file_findings("NPU305/bad_a3_file_on_910b_base", "NPU305")
    sev, suggestion, message = got[("Dockerfile.ascend_9.0.0_a3", 2)]
    assert sev == "error"
    assert suggestion == "FROM swr.cn-south-1.myhuaweicloud.com/ascendhub/cann:9.0.0-a3-ubuntu22.04-py3.11"
    assert "overwrites the other device's image" in message
    got = file_findings("NPU305/bad_soc_and_ops_package", "NPU305")
    assert got[("Dockerfile.ascend_8.5.2_a2_qwen3-5", 4)][1] == 'ARG SOC_VERSION="ascend910b1"'
    assert got[("Dockerfile.ascend_8.5.2_a2_qwen3-5", 7)][1] == (
        "COPY Ascend-cann-toolkit_8.5.2_linux-aarch64.run Ascend-cann-910b-ops_8.5.2_linux-aarch64.run /tmp/"
    )
    assert "A3 CANN ops package (also on line 10)" in got[("Dockerfile.ascend_8.5.2_a2_qwen3-5", 7)][2]
    got = file_findings("NPU305/bad_no_suffix_soc_disagrees", "NPU305")
    assert got[("Dockerfile.ascend_dev", 3)][1] == "ENV SOC_VERSION=ascend910_9392"
    assert got[("Dockerfile.ascend_dev", 8)][2].startswith("The base image `9.1.0-a3-")
