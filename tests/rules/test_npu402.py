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


def test_npu402_reads_no_python_file_where_no_workaround_is_named(monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """With no project profile, nothing names an NPU patch module, call or marker, so no side of a change can hold
    a workaround: both sides of its Python files are not read (PaddlePaddle/PaddleTest's 1,300-file commits spent
    23 s parsing them and stopped the rule at its time budget, rs-r38). In verl's layout they are."""
    from npu_review.checks.rules import npu402_npu_workaround_removed as rule

    read: list[str] = []
    real = rule._side

    def spy(ctx, change, rev, kb):  # type: ignore[no-untyped-def]
        read.append(change.path)
        return real(ctx, change, rev, kb)

    monkeypatch.setattr(rule, "_side", spy)
    text = "from npu_patch import apply_npu_patch\n\napply_npu_patch()\n"
    for path, expected in (("src/app/train.py", []), ("verl/trainer/main_ppo.py", ["verl/trainer/main_ppo.py"] * 2)):
        read.clear()
        change = FileChange(path, ChangeStatus.MODIFIED, added_lines=frozenset({1}))
        run(ChangeSet(head=MemoryTree({path: text + "x = 1\n"}), base=MemoryTree({path: text}), changes={path: change}))
        assert read == expected
