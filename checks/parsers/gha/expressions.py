"""`${{ }}` expressions: context references (`env.X`, `matrix.X`, `steps.S.outputs.O`, ...) and substitution."""

from __future__ import annotations

import re
from collections.abc import Callable

from npu_review.checks import lazyre
from npu_review.checks.parsers.gha.values import WILD, Val, concat

EXPR = lazyre.compile(r"\$\{\{\s*(.*?)\s*\}\}", re.S)
_CONTEXT_REF = lazyre.compile(
    r"(?P<ctx>env|matrix|steps|needs|inputs|vars)"
    r"(?P<rest>(?:\.[A-Za-z_][\w-]*|\[\s*'[^']*'\s*\])+)\Z"
)

_REF_PART = lazyre.compile(r"\.([A-Za-z_][\w-]*)|\[\s*'([^']*)'\s*\]")

Lookup = Callable[[str, tuple[str, ...]], "list[Val] | None"]


def context_ref(expr: str) -> tuple[str, tuple[str, ...]] | None:
    """`steps.version.outputs.tag` -> ("steps", ("version", "outputs", "tag")); None for anything else."""
    m = _CONTEXT_REF.match(expr.strip())
    if not m:
        return None
    parts = tuple(name or quoted for name, quoted in _REF_PART.findall(m.group("rest")))
    return m.group("ctx"), parts


def substitute(text: str, lookup: Lookup, origin: tuple[str, int] | None = None) -> list[Val]:
    """Replace every `${{ ... }}` in `text` using `lookup(context, parts)`; unknowns become WILD."""
    base = frozenset({origin}) if origin else frozenset()
    pieces: list[list[Val]] = []
    pos = 0
    for m in EXPR.finditer(text):
        pieces.append([Val(text[pos : m.start()], base)])
        ref = context_ref(m.group(1))
        alts = lookup(ref[0], ref[1]) if ref else None
        pieces.append([Val(v.text, v.origins | base) for v in alts] if alts else [Val(WILD, base)])
        pos = m.end()
    pieces.append([Val(text[pos:], base)])
    return concat(pieces)
