"""One cause, one comment: findings that share a cause (checks.engine.cause_id — the same rule and the same
offending text, in one RUN, one file or several files of a change) are said once, on the first of their lines,
naming the other places. Every finding stays an annotation and a JSON entry of its own; only what is said inline
is grouped. Pure: the App's review and the replay's comment count both read it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from npu_review.checks.model import Finding


@dataclass(frozen=True)
class Comment:
    """What one inline comment says: its finding, and the other places of the same cause."""

    lead: Finding
    also: tuple[Finding, ...] = ()

    @property
    def findings(self) -> tuple[Finding, ...]:
        return (self.lead, *self.also)


def by_cause(findings: Iterable[Finding]) -> list[Comment]:
    """The findings grouped by cause, each group led by its most severe finding, the first place (path, then
    line) of those, and the groups in their leads' order: a required input no call passes (an error) leads the
    warning that the called workflow never reads it. A finding without a cause id is a cause of its own."""
    groups: dict[str, list[Finding]] = {}
    alone: list[list[Finding]] = []
    for f in sorted(findings, key=lambda f: (-f.severity, f.sort_key())):
        if f.cause:
            groups.setdefault(f.cause, []).append(f)
        else:
            alone.append([f])
    ordered = sorted([*groups.values(), *alone], key=lambda g: g[0].sort_key())
    return [Comment(g[0], tuple(g[1:])) for g in ordered]


def places(comment: Comment, limit: int = 10) -> str:
    """`path:line` of the other places, the first `limit` of them, then how many more."""
    shown = [f"`{f.path}:{f.line}`" for f in comment.also[:limit]]
    rest = len(comment.also) - limit
    if rest > 0:
        shown.append(f"and {rest} more")
    return ", ".join(shown)
