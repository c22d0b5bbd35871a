"""What the change itself is: lines it adds to many files at once (a sweep), which some rules read differently
from a line written for one file."""

from __future__ import annotations

import re

from npu_review.checks.context import Context

# The same line added to this many files of one change is a sweep: a mechanical edit made everywhere at once
# (a setting added to every CI script), not a decision about each file.
SWEEP_FILES = 3


def swept(ctx: Context, path: str, line: int) -> bool:
    """The change adds this line's text (whitespace-folded, a trailing `\\` left out) to SWEEP_FILES files or more.
    Never in an audit: there is no change."""
    if ctx.audit or not ctx.is_added_line(path, line):
        return False
    src = ctx.source(path)
    if src is None:
        return False
    key = _norm(src.line(line))
    return bool(key) and len(_sweeps(ctx).get(key, ())) >= SWEEP_FILES


def _norm(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip().rstrip("\\").strip()


def _sweeps(ctx: Context) -> dict[str, frozenset[str]]:
    """Added-line text -> the changed files that add it (only texts added to two files or more are kept)."""

    def build() -> dict[str, frozenset[str]]:
        where: dict[str, set[str]] = {}
        for path, change in ctx.changeset.changes.items():
            if not change.added_lines:
                continue
            src = ctx.source(path)
            if src is None:
                continue
            for n in change.added_lines:
                key = _norm(src.line(n))
                if key:
                    where.setdefault(key, set()).add(path)
        return {k: frozenset(v) for k, v in where.items() if len(v) > 1}

    return ctx.memo(("change-sweeps", "head", ""), build)


def adds_text(ctx: Context, needle: str) -> bool:
    """Whether the change adds a line whose lower-cased text holds `needle` (lower case): the cheap no before a
    rule that reports only on added lines naming a package goes over every file of a kind. Always true in an
    audit (every line counts)."""
    if ctx.audit:
        return True

    def find() -> bool:
        for path, change in ctx.changeset.changes.items():
            if not change.added_lines:
                continue
            src = ctx.source(path)
            if src is not None and any(needle in src.line(n).lower() for n in change.added_lines):
                return True
        return False

    return ctx.memo(("change-adds", "head", needle), find)
