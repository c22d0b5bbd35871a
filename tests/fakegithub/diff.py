"""Per-file patches as GitHub shows them, and the lines a review comment may target."""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

HUNK_HEADER = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@")
NO_NEWLINE = "\\ No newline at end of file"
CONTEXT = 3  # git's default, which GitHub uses


@dataclass(frozen=True)
class DiffLine:
    kind: str  # "+", "-", " " or "\\"
    old: int | None
    new: int | None
    position: int  # GitHub's diff position: 1 = the line below the first @@ header
    text: str


@dataclass
class Hunk:
    header: str
    header_position: int  # 0 for the first hunk, else its position
    lines: list[DiffLine]


def parse_patch(patch: str) -> list[Hunk]:
    hunks: list[Hunk] = []
    old = new = 0
    position = -1
    body = patch[:-1] if patch.endswith("\n") else patch
    for raw in body.split("\n"):
        m = HUNK_HEADER.match(raw)
        if m:
            position += 1
            old, new = int(m.group(1)), int(m.group(3))
            hunks.append(Hunk(raw, position, []))
            continue
        if not hunks:
            continue
        position += 1
        kind = raw[:1] or " "
        if kind == "+":
            hunks[-1].lines.append(DiffLine("+", None, new, position, raw[1:]))
            new += 1
        elif kind == "-":
            hunks[-1].lines.append(DiffLine("-", old, None, position, raw[1:]))
            old += 1
        elif kind == "\\":
            hunks[-1].lines.append(DiffLine("\\", None, None, position, raw))
        else:
            hunks[-1].lines.append(DiffLine(" ", old, new, position, raw[1:]))
            old += 1
            new += 1
    return hunks


class FileDiff:
    """Which (side, line) pairs of one file's patch can carry a review comment."""

    def __init__(self, patch: str | None) -> None:
        self.hunks = parse_patch(patch) if patch else []

    def locate(self, side: str, line: int) -> tuple[int, DiffLine] | None:
        for index, hunk in enumerate(self.hunks):
            for dl in hunk.lines:
                if side == "RIGHT" and dl.kind in "+ " and dl.new == line:
                    return index, dl
                if side == "LEFT" and dl.kind in "- " and dl.old == line:
                    return index, dl
        return None

    def at_position(self, position: int) -> tuple[int, DiffLine] | None:
        for index, hunk in enumerate(self.hunks):
            for dl in hunk.lines:
                if dl.position == position and dl.kind != "\\":
                    return index, dl
        return None

    def diff_hunk(self, hunk_index: int, upto: DiffLine) -> str:
        """GitHub's `diff_hunk`: the hunk header and the hunk's lines down to the commented one."""
        hunk = self.hunks[hunk_index]
        out = [hunk.header]
        for dl in hunk.lines:
            out.append(dl.text if dl.kind == "\\" else dl.kind + dl.text)
            if dl is upto:
                break
        return "\n".join(out)


def _range(start: int, length: int) -> str:
    # Same convention as git and difflib: an empty range names the line before it.
    if length == 1:
        return f"{start + 1}"
    if length == 0:
        return f"{start},0"
    return f"{start + 1},{length}"


def make_patch(old: str | None, new: str | None) -> tuple[str, int, int]:
    """(patch, additions, deletions) for one file, as the pull request files API shows it."""
    a = (old or "").splitlines(keepends=True)
    b = (new or "").splitlines(keepends=True)
    out: list[str] = []
    additions = deletions = 0

    def emit(prefix: str, line: str) -> None:
        out.append(prefix + line.rstrip("\n"))
        if not line.endswith("\n"):
            out.append(NO_NEWLINE)

    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    for group in matcher.get_grouped_opcodes(CONTEXT):
        first, last = group[0], group[-1]
        out.append(f"@@ -{_range(first[1], last[2] - first[1])} +{_range(first[3], last[4] - first[3])} @@")
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                for line in a[i1:i2]:
                    emit(" ", line)
                continue
            for line in a[i1:i2]:
                emit("-", line)
                deletions += 1
            for line in b[j1:j2]:
                emit("+", line)
                additions += 1
    return "\n".join(out), additions, deletions
