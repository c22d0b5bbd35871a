"""A change between two small trees, reviewed as a pull request (for the rule tests of this folder)."""

from __future__ import annotations

from checks.config import DEFAULT_CONFIG
from checks.diffing import changes_between
from checks.engine import Report, run
from checks.model import ChangeSet, MemoryTree


def change(base: dict[str, str | None], head: dict[str, str | None]) -> Report:
    """Review base..head as a pull request with no config."""
    return run(
        ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head)), DEFAULT_CONFIG
    )


def got(report: Report, rule: str) -> list[tuple[str, int, str, str]]:
    assert report.errors == []
    return [(f.path, f.line, f.severity.label, f.message) for f in report.findings if f.rule == rule]
