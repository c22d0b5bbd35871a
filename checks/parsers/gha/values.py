"""Values of a workflow as far as they can be known statically, with the places they were built from.

Values that cannot be known statically are kept as the WILD character inside the text (`quay.io/x:tmp-\\x00`),
so that callers can tell "unknown" from "different" and match patterns instead of guessing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from npu_review.checks.fastinit import fast_init

WILD = "\x00"  # stands for an unknown part of a value
MAX_ALTERNATIVES = 32  # alternative values carried per expression


@fast_init
@dataclass(frozen=True)
class Val:
    """A value (possibly with WILD parts) and the (path, line) places it was built from."""

    text: str
    origins: frozenset[tuple[str, int]] = frozenset()

    @property
    def known(self) -> bool:
        return WILD not in self.text

    def __add__(self, other: Val) -> Val:
        return Val(self.text + other.text, self.origins | other.origins)


def concat(parts: Iterable[list[Val]], limit: int = MAX_ALTERNATIVES) -> list[Val]:
    """Cartesian concatenation of alternative lists (capped: past the cap the value becomes unknown)."""
    out = [Val("")]
    for alts in parts:
        if not alts:
            alts = [Val(WILD)]
        nxt = [a + b for a in out for b in alts]
        if len(nxt) > limit:
            origins = frozenset().union(*(v.origins for v in nxt))
            nxt = [Val(WILD, origins)]
        out = nxt
    return dedupe(out)


def dedupe(vals: list[Val]) -> list[Val]:
    seen: dict[str, Val] = {}
    for v in vals:
        if v.text in seen:
            seen[v.text] = Val(v.text, seen[v.text].origins | v.origins)
        else:
            seen[v.text] = v
    return list(seen.values())


def wild_regex(text: str) -> re.Pattern[str]:
    """A regex for a value with WILD parts: each WILD matches any run of characters."""
    return re.compile("".join(".*" if part == WILD else re.escape(part) for part in re.split(f"({WILD})", text)))
