"""NPU308 torch-pin-overwritten: its fixture cases (tests/fixtures/NPU308/), and what they cannot say."""

from __future__ import annotations

import pytest

from tests.rules.support import (
    file_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU308")


def test_npu308_messages_name_the_install_and_the_reason() -> None:
    got = file_findings("NPU308/bad_requirements_npu_torchvision", "NPU308")
    assert "pins torchvision 0.20.1, built for torch 2.5.1" in got[("Dockerfile.ascend_8.3.rc1_a2", 9)][2]
    # The requirement pins torchvision itself: the advice is to change that pin, not to pin after it.
    assert got[("Dockerfile.ascend_8.3.rc1_a2", 9)][2].endswith(
        "torch 2.7.1's is 0.22.1. Change that torchvision requirement to the one of the pinned torch, or install "
        "that step with `--no-deps`."
    )
    got = file_findings("NPU308/change_dropped_no_deps", "NPU308")
    sev, suggestion, message = got[("Dockerfile.ascend_8.5.0_a2", 8)]
    assert (sev, suggestion) == ("warning", None)
    assert "vllm-ascend v0.11.0 on line 8" in message
    assert "it requires torch-npu==2.7.1, which replaces 2.7.1.post2" in message
    # It needs another torch_npu: never "install the pins after" (that would break the install).
    assert "install the pins after" not in message and "`--no-deps` to keep the pins" in message


@pytest.mark.parametrize(
    "case",
    [
        "NPU308/trap_same_resolution_constrains_torchvision",  # torch==2.7.1 in vllm-ascend's requirements
        "NPU308/trap_re_resolution_lands_on_table_version",  # 2.5.1 -> 2.5.1.post1, CANN 8.2.rc1's torch_npu
        "NPU308/trap_vllm_ascend_at_sha",  # requirements at a sha: not known here
    ],
)
def test_npu308_silent_on_its_traps(case: str) -> None:
    assert file_findings(case, "NPU308") == {}
