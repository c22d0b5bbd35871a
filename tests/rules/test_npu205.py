"""NPU205 gha-cache-scope-collision: its fixture cases (tests/fixtures/NPU205/)."""

from __future__ import annotations

from pathlib import Path

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, MemoryTree
from tests.rules.support import (
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU205")


def _workflows() -> dict[str, str]:
    head = Path(__file__).parent.parent / "fixtures/NPU205/bad_new_build_default_scope/head"
    return {str(p.relative_to(head)): p.read_text() for p in sorted(head.rglob("*.yml"))}


A3 = ".github/workflows/docker-build-ascend-sglang-a3.yml"


def test_a_change_that_adds_no_cache_to_line_gets_nothing_for_a_shared_scope_it_lives_with() -> None:
    """Two builds already share the default scope; a change to one of them that writes no `cache-to` line (its
    checkout step's name) is not the change that made them share it: nothing is said. An audit says it."""
    files = _workflows()
    base = {**files, A3: files[A3].replace("      - name: Checkout code\n", "      - name: Checkout\n")}
    changes = {A3: FileChange(A3, ChangeStatus.MODIFIED, added_lines=frozenset({19}))}
    report = run(ChangeSet(head=MemoryTree(files), base=MemoryTree(base), changes=changes))
    assert [f for f in report.findings if f.rule == "NPU205"] == []
    audit = run(ChangeSet(head=MemoryTree(files), audit=True))
    assert sorted((f.path, f.line) for f in audit.findings if f.rule == "NPU205") == [
        (".github/workflows/docker-build-ascend-sglang-a2.yml", 45),
        (A3, 45),
    ]
