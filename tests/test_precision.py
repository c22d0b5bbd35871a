"""Issue 13: the false and noisy findings seen on verl's history, as exact findings (rule, line, severity,
message) on small trees written here. The fixture cases under tests/fixtures/*/trap_* hold the same traps as
(rule, path, line) sets; this module pins what the findings say."""

from __future__ import annotations

import textwrap

from checks import engine
from checks.model import ChangeSet, ChangeStatus, FileChange, Finding, MemoryTree, Severity
from tests.fixture_support import FIXTURES, load_case


def _dedent(files: dict[str, str]) -> dict[str, str | None]:
    return {k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}


def audit(files: dict[str, str]) -> list[Finding]:
    return engine.run(ChangeSet(head=MemoryTree(_dedent(files)), audit=True)).findings


def change(base: dict[str, str], head: dict[str, str], title: str = "") -> list[Finding]:
    """Review base..head; every head file that differs from base is a change (all its lines added)."""
    b, h = _dedent(base), _dedent(head)
    changes = {}
    for path, text in h.items():
        old = b.get(path)
        if old == text:
            continue
        old_lines = (old or "").split("\n")
        added = frozenset(n for n, line in enumerate((text or "").split("\n"), 1) if line not in old_lines)
        status = ChangeStatus.ADDED if old is None else ChangeStatus.MODIFIED
        changes[path] = FileChange(path, status, added_lines=added)
    for path in b:
        if path not in h:
            changes[path] = FileChange(path, ChangeStatus.DELETED)
    cs = ChangeSet(head=MemoryTree(h), base=MemoryTree(b), changes=changes, title=title)
    return engine.run(cs).findings


def case_findings(name: str) -> list[Finding]:
    case = load_case(FIXTURES / name)
    assert case.base is None
    return engine.run(ChangeSet(head=MemoryTree(case.head), audit=True)).findings


def test_npu212_suggests_the_owner_of_the_repository_at_that_revision() -> None:
    (f,) = case_findings("NPU212/trap_owner_from_project_url")
    assert (f.rule, f.line, f.severity) == ("NPU212", 10, Severity.ERROR)
    assert f.message.endswith("Add `if: github.repository_owner == 'volcengine'`.")
    assert f.suggestion is not None and "github.repository_owner == 'volcengine'" in f.suggestion
