"""Lines a change only moves: old debt, not the change's business.

A diff marks a line as added when it moved (a reordered block, a file rewritten by a formatter, a section
moved down a guide), though its text was in the file before. A finding on such a line that the file had
before, on the same text, is old debt that the contract keeps off a change's review, like a finding on an
untouched line. Which ones the file had before is asked of the rules themselves: the changed files as they
were at base, in the tree as it was (the unchanged files are the same at base and head), reviewed as a change
that adds just the moved lines' old places. A finding the change causes on a moved line (a link the change
broke by moving its target, a setting a reordering now overrides) is not found there, and stays.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping

from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, Finding, Tree

_DIGITS = re.compile(r"\d+")


class BaseView:
    """The tree at base, from what a review holds: the changed files' base texts over the head's unchanged
    ones (the App fetches only the changed files at base; the rest is the same in both revisions)."""

    def __init__(self, changeset: ChangeSet) -> None:
        self._cs = changeset
        new = (ChangeStatus.ADDED, ChangeStatus.RENAMED)
        self._added = {p for p, c in changeset.changes.items() if c.status in new}
        self._old = {
            c.old_path or p
            for p, c in changeset.changes.items()
            if c.status in (ChangeStatus.DELETED, ChangeStatus.RENAMED, ChangeStatus.MODIFIED)
        }

    def paths(self) -> Iterable[str]:
        return sorted((set(self._cs.head.paths()) - self._added) | self._old)

    def read(self, path: str) -> str | None:
        if path in self._old:
            return self._cs.base.read(path)
        return None if path in self._added else self._cs.head.read(path)

    def exists(self, path: str) -> bool:
        if path in self._old:
            return True
        return path not in self._added and self._cs.head.exists(path)


def moved_lines(base: str, head: str, added: Iterable[int]) -> dict[int, int]:
    """Head line -> base line (1-based) for the `added` lines (as the diff marks them) whose text, trailing blanks
    aside, a base line had that no unchanged line accounts for: each such base line pairs with one added line, in
    order. Blank lines are left out. (A file whose line ends went from CRLF to LF is all moved lines.)"""
    old, new = base.splitlines(), head.splitlines()
    marked = set(added)
    unchanged = Counter(new[j].rstrip() for j in range(len(new)) if j + 1 not in marked)
    removed: dict[str, list[int]] = {}
    for i, line in enumerate(old):
        text = line.rstrip()
        if unchanged[text] > 0:
            unchanged[text] -= 1
        elif text.strip():
            removed.setdefault(text, []).append(i)
    out: dict[int, int] = {}
    for j in sorted(marked):
        left = removed.get(new[j - 1].rstrip()) if 0 < j <= len(new) else None
        if left:
            out[j] = left.pop(0) + 1
    return out


def _same(a: Finding, b: Finding) -> bool:
    """The same finding, wherever its line moved to: its rule, and its message but for the line numbers it names."""
    return a.rule == b.rule and _DIGITS.sub("#", a.message) == _DIGITS.sub("#", b.message)


def drop_old_debt(
    findings: list[Finding],
    changeset: ChangeSet,
    review: Callable[[ChangeSet], list[Finding]],
    order_free: Callable[[str], bool],
) -> list[Finding]:
    """`findings` without those on moved lines that the file had before (see the module's docstring), for the
    rules whose findings do not depend on the order of lines (`order_free(rule id)`: a pin moved to fix an install
    order that it still does not fix is the change's business). `review` runs the rules on a change (the
    engine's run, without this step)."""
    if changeset.audit or not findings:
        return findings
    moved: dict[str, dict[int, int]] = {}
    for f in findings:
        if not all(order_free(r) for r in f.rule_ids):
            continue
        change = changeset.changes.get(f.path)
        if change is None or change.status != ChangeStatus.MODIFIED or f.line not in change.added_lines:
            continue
        if f.path not in moved:
            base, head = changeset.base.read(f.path), changeset.head.read(f.path)
            moved[f.path] = moved_lines(base, head, change.added_lines) if base is not None and head is not None else {}
    candidates = [f for f in findings if f.line in moved.get(f.path, {}) and all(order_free(r) for r in f.rule_ids)]
    if not candidates:
        return findings
    view: Tree = BaseView(changeset)
    old_places: Mapping[str, FileChange] = {
        path: FileChange(path, ChangeStatus.MODIFIED, None, frozenset(lines.values()))
        for path, lines in moved.items()
        if lines
    }
    before = ChangeSet(
        head=view,
        base=view,
        changes=old_places,
        title=changeset.title,
        repository=changeset.repository,
        when=changeset.when,
    )
    had: dict[tuple[str, int], list[Finding]] = {}
    for g in review(before):
        had.setdefault((g.path, g.line), []).append(g)
    old_debt = {id(f) for f in candidates if any(_same(f, g) for g in had.get((f.path, moved[f.path][f.line]), ()))}
    return [f for f in findings if id(f) not in old_debt]
