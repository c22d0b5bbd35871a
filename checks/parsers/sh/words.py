"""Shell words and operators as the lexer gives them, and quote removal.

One `Word` type for every shell text: `raw` is the word as written (quotes kept), `unquoted` the word with
quotes and backslash escapes removed but nothing expanded (`$(…)`, `${…}` and backticks stay as written).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.fastinit import fast_init

__all__ = ["ArrayWord", "Op", "Word", "matching_close", "unquote"]


@fast_init
@dataclass(frozen=True, slots=True)
class Word:
    """A shell word as written, with the physical line of its first character and its source offset.

    `marks` maps offsets inside a word that spans several physical lines (a multi-line string) to lines.
    """

    raw: str
    line: int
    offset: int = 0
    marks: tuple[tuple[int, int], ...] = ()

    @property
    def unquoted(self) -> str:
        """Quotes and backslash escapes removed; no expansion."""
        return unquote(self.raw)

    @property
    def quoted(self) -> bool:
        """The word starts with a quote."""
        return self.raw[:1] in ("'", '"')

    def line_at(self, offset: int) -> int:
        found = self.line
        for start, phys in self.marks:
            if start > offset:
                break
            found = phys
        return found


@fast_init
@dataclass(frozen=True, slots=True)
class ArrayWord:
    """`NAME=( … )` or `NAME+=( … )`: an array assignment, its elements as words."""

    name: str
    append: bool
    elements: tuple[Word, ...]
    line: int
    end_line: int
    raw: str = ""  # the whole assignment as written
    offset: int = 0

    @property
    def text(self) -> str:
        return f"{self.name}{'+' if self.append else ''}=({' '.join(e.raw for e in self.elements)})"


@fast_init
@dataclass(frozen=True, slots=True)
class Op:
    """An operator (`&&`, `;`, `|`, `(`, ...) or a redirection (`>`, `2>&`, `<<`, ...)."""

    text: str
    line: int
    offset: int = 0


_QUOTING = lazyre.compile(r"[\\'\"`$<>]")
# Runs of characters `unquote` copies as they are, and `_skip_double` steps over.
_UNQUOTE_RUN = lazyre.compile(r"[^\\'\"`$<>]+")
_DOUBLE_RUN = lazyre.compile(r'[^\\"$`]+')
_DQ_ESCAPE = lazyre.compile(r'\\([$`"\\\n])')


@functools.lru_cache(maxsize=16384)  # words repeat within and across files
def unquote(raw: str) -> str:
    """`raw` with quotes and backslash escapes removed; `$(…)`, `${…}`, backticks and `<(…)` kept as written."""
    if _QUOTING.search(raw) is None:
        return raw
    out: list[str] = []
    i, n = 0, len(raw)
    while i < n:
        run = _UNQUOTE_RUN.match(raw, i)
        if run is not None:  # characters that stand for themselves, copied in one slice
            out.append(run.group())
            i = run.end()
            continue
        c = raw[i]
        if c == "\\":
            if i + 1 < n:
                out.append(raw[i + 1])
            i += 2
        elif c == "'":
            j = raw.find("'", i + 1)
            j = n if j < 0 else j
            out.append(raw[i + 1 : j])
            i = j + 1
        elif c == '"':
            j = _skip_double(raw, i + 1)
            out.append(_DQ_ESCAPE.sub(lambda m: "" if m.group(1) == "\n" else m.group(1), raw[i + 1 : j]))
            i = j + 1
        elif c == "`":
            j = _skip_backtick(raw, i + 1)
            out.append(raw[i : j + 1])
            i = j + 1
        elif c in "$<>" and i + 1 < n and raw[i + 1] in ("({" if c == "$" else "("):
            j = matching_close(raw, i + 1)
            out.append(raw[i : j + 1])
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _skip_double(text: str, i: int) -> int:
    """Index of the closing `"` (or len(text)), honouring escapes and `$(…)` inside."""
    n = len(text)
    while i < n:
        run = _DOUBLE_RUN.match(text, i)
        if run is not None:  # nothing in it ends the string or nests
            i = run.end()
            if i >= n:
                break
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i
        if c == "$" and i + 1 < n and text[i + 1] in "({":
            i = matching_close(text, i + 1) + 1
            continue
        if c == "`":
            i = _skip_backtick(text, i + 1) + 1
            continue
        i += 1
    return n


def _skip_backtick(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i
        i += 1
    return n


def matching_close(text: str, i: int) -> int:
    """`text[i]` is `(` or `{`: index of its matching closer (or len(text) - 1), skipping quotes inside."""
    opener = text[i]
    closer = ")" if opener == "(" else "}"
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and opener == "(":
            j = text.find("'", i + 1)
            i = (n if j < 0 else j) + 1
            continue
        if c == '"':
            i = _skip_double(text, i + 1) + 1
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n - 1
