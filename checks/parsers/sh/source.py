"""Shell text with its origin: which physical line of the file each offset of the text came from.

A `Source` is what the lexer reads. It is built from a whole file, from a Dockerfile RUN whose continued lines
were already joined (each segment from its own line), or from the lines of a YAML block scalar (`run: |`).
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Iterable
from dataclasses import dataclass

from npu_review.checks.fastinit import fast_init


@fast_init
@dataclass(frozen=True, slots=True)
class Source:
    """`text` and a sorted map (offset in `text`, physical line): the text from that offset on came from that line.

    `base` is added to every offset the lexer reports (a RUN's words are read after its `--mount` flags but
    report offsets of the whole instruction text). `plain` says the text is a file: the lines of `text`
    (split on `\\n`) are the physical lines `first`, `first + 1`, ... (the lexer's fast path).
    """

    text: str
    marks: tuple[tuple[int, int], ...]
    base: int = 0
    plain: bool = False

    @classmethod
    def file(cls, text: str, first: int = 1) -> Source:
        """A whole file (or a script body): line `first` starts at offset 0, each `\\n` starts the next."""
        return cls(text, ((0, first),), 0, True)

    @classmethod
    def joined(cls, pieces: Iterable[tuple[int, str]]) -> Source:
        """Pieces (physical line, text) concatenated as they are (a Dockerfile instruction's segments)."""
        parts: list[str] = []
        marks: list[tuple[int, int]] = []
        offset = 0
        for line, text in pieces:
            marks.append((offset, line))
            parts.append(text)
            offset += len(text)
        return cls("".join(parts), tuple(marks) or ((0, 1),))

    @classmethod
    def lines(cls, lines: Iterable[tuple[int, str]], end: str = "\n") -> Source:
        """Physical lines (number, text) joined with newlines, `end` after the last (a YAML block scalar)."""
        items = list(lines)
        if not items:
            return cls("", ((0, 1),))
        first = items[0][0]
        if all(n == first + k for k, (n, _t) in enumerate(items)):
            return cls.file("\n".join(t for _, t in items) + end, first)
        marks: list[tuple[int, int]] = []
        offset = 0
        for line, text in items:
            marks.append((offset, line))
            offset += len(text) + 1
        return cls("\n".join(t for _, t in items) + end, tuple(marks))

    @classmethod
    def single(cls, text: str, line: int) -> Source:
        """Text that all counts as one physical line (a `bash -c` script in a JSON-form RUN)."""
        return cls(text, ((0, line),))

    def tail(self, start: int) -> Source:
        """The text from `start` on, its offsets still those of this source."""
        if start <= 0:
            return self
        rest = self.text[start:]
        first = self.line_at(start)
        if self.plain:
            if self.text.rfind("\n", 0, start) + 1 == start:  # the tail starts a line: still a plain file
                return Source(rest, ((0, first),), self.base + start, True)
            later = [(m.end(), first + k + 1) for k, m in enumerate(re.finditer("\n", rest))]
            return Source(rest, ((0, first), *later), self.base + start)
        k = bisect.bisect_right(self.marks, (start, 1 << 62)) - 1
        marks = [(0, first)] + [(off - start, line) for off, line in self.marks[k + 1 :]]
        return Source(rest, tuple(marks), self.base + start)

    def line_at(self, offset: int) -> int:
        """The physical line of the character at `offset` of `text`."""
        if self.plain:
            return self.marks[0][1] + self.text.count("\n", 0, offset)
        k = bisect.bisect_right(self.marks, (offset, 1 << 62)) - 1
        return self.marks[k][1] if k >= 0 else self.marks[0][1]
