"""NPU402 npu-workaround-removed: its fixture cases (tests/fixtures/NPU402/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from tests.fixture_support import audit
from tests.rules.support import (
    fixture_tests,
    locations,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU402")


def test_npu402_pure_deletion_without_added_lines_is_not_reported_and_does_not_crash() -> None:
    base = {"verl/utils/vllm/npu_vllm_patch.py": "def apply_npu_vllm_patches():\n    pass\n"}
    change = FileChange("verl/utils/vllm/npu_vllm_patch.py", ChangeStatus.DELETED)
    report = run(ChangeSet(head=MemoryTree({}), base=MemoryTree(base), changes={change.path: change}))
    assert report.errors == []
    assert locations(report, "NPU402") == []


def test_npu402_audit_is_silent() -> None:
    assert locations(audit({"verl/utils/vllm/npu_vllm_patch.py": "def apply_npu_patch():\n    pass\n"}), "NPU402") == []
