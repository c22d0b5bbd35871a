"""NPU311 triton-uninstalled-after-triton-ascend: its fixture cases (tests/fixtures/NPU311/), and what they cannot
say."""

from __future__ import annotations

from tests.rules.support import (
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU311")


def test_npu311_points_at_the_first_install() -> None:
    got = file_findings("NPU311/bad_after_vllm_ascend_requirements", "NPU311")
    sev, _, message = got[("Dockerfile.ascend_9.0.0_a2", 20)]
    assert sev == "warning" and "vllm-ascend v0.18.0 installed triton-ascend (line 16)" in message
