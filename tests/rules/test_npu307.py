"""NPU307 cann-torch-npu-incompatible: its fixture cases (tests/fixtures/NPU307/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import (
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU307")


def test_npu307_error_for_newer_cann_with_the_fitting_version() -> None:
    got = file_findings("NPU307/bad_torch_npu_for_newer_cann", "NPU307")
    sev, suggestion, message = got[("Dockerfile.ascend_8.3.rc1_a2", 12)]
    assert sev == "error"
    assert "built for CANN 8.5.0, newer than CANN 8.3.rc1" in message
    assert suggestion == (
        "    pip install torch==2.7.1 torch_npu==2.7.1 torchvision==0.22.1 transformers==4.57.6 && \\"
    )


def test_npu307_warnings_for_older_pairing_and_mismatches() -> None:
    got = file_findings("NPU307/bad_older_pairing_and_mismatches", "NPU307")
    name = "Dockerfile.ascend_8.5.0_a2_v0.7.1"
    # An older, once-valid pairing is a notice (issue 13), with the exact fix still attached.
    assert got[(name, 7)][:2] == ("notice", "    pip install torch==2.8.0 torch_npu==2.8.0.post2 && \\")
    assert "(line 1)" in got[(name, 7)][2]  # the first stage's FROM, not the second one's
    assert got[(name, 9)][:2] == ("warning", None)
    assert "whose torchvision is 0.23.0" in got[(name, 9)][2]
    assert got[(name, 14)][:2] == ("warning", None)
    assert "torch_npu 2.9.0 extends torch 2.9.0" in got[(name, 14)][2]


def test_npu307_installer_updates_cann_and_arg_wheel_has_no_fix() -> None:
    got = file_findings("NPU307/bad_cann_installer_and_wheel_arg", "NPU307")
    sev, suggestion, message = got[("Dockerfile.ascend.sglang_8.5.2_a2", 5)]
    assert (sev, suggestion) == ("error", None)
    assert "CANN 8.5.2 of the CANN installer (line 10)" in message
