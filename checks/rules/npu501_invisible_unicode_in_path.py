"""NPU501: a file name or a link target contains invisible Unicode (zero-width or bidirectional controls)."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator
from itertools import repeat

from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS
from npu_review.checks.model import ChangeStatus, Severity
from npu_review.checks.rule import Hit, Rule


class InvisibleUnicodeInPath(Rule):
    """A file name or a link target contains an invisible character.

    Why: U+200B–U+200F (zero-width space/joiners, direction marks), U+202A–U+202E (bidirectional
    overrides), U+2060 (word joiner) and U+FEFF render as nothing. A path that contains one looks right in
    the diff and in the docs, yet `docker build -f`, a workflow `paths:` filter, `git grep` or a reader who
    types the name finds no such file, and a link that contains one is broken on GitHub and in Sphinx.
    They slip in when text is pasted from chat tools or rich-text editors, often next to Chinese text.
    Chinese punctuation (`，。、：（）`) and full-width spaces are visible and fine.

    Bad (`<U+200B>` stands for the invisible character, in the file name and in the link target):
        # docs/ascend_tutorial/get_start/quick<U+200B>_start.md
        见[安装指南](./install<U+200B>_guidance.md)，请先阅读。

    Good:
        # docs/ascend_tutorial/get_start/quick_start.md
        见[安装指南](./install_guidance.md)，请先阅读。

    Fix: retype the name or delete the invisible character (the suggestion removes it from the link target);
    for a file name, `git mv` it to the clean name.
    """

    id = "NPU501"
    name = "invisible-unicode-in-path"
    severity = Severity.ERROR
    title = "Invisible Unicode character in a file name or link target"
    kinds = frozenset({DOCS})
    reports_on_any_path = True  # a file name of any kind

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        ranges = _ranges(ctx)
        if src.text.isascii() or not ranges.search(src.text):
            return
        doc = ctx.document(src)
        if doc is None:
            return
        for link in doc.links:
            bad = _invisible(link.target, ranges)
            if not bad:
                continue
            line = doc.text(link.line)
            clean = "".join(ch for ch in link.target if not _is_invisible(ch, ranges))
            yield Hit(
                src.path,
                link.line,
                f"The link target `{_shown(link.target, ranges)}` contains {_describe(bad)}: it looks right but "
                "points to a name that does not exist.",
                suggestion=line[: link.start] + clean + line[link.end :],
            )

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        ranges = _ranges(ctx)
        yield from _paths(ctx, ranges)


_NO_LINES: frozenset[int] = frozenset()


def _paths(ctx: Context, ranges: re.Pattern[str]) -> Iterator[Hit]:
    candidates: Iterable[tuple[str, frozenset[int]]]
    if ctx.audit:  # every path, one at a time (a list of 40,000 pairs, each with an empty set, held 10 MiB)
        candidates = zip(ctx.head_paths(), repeat(_NO_LINES))
    else:
        candidates = [
            (c.path, c.added_lines) for c in ctx.changeset.changes.values() if c.status != ChangeStatus.DELETED
        ]
    for path, added in candidates:
        bad = _invisible(path, ranges)
        if not bad:
            continue
        # A file name has no line: report on the first line the change adds (line 1 of a new file).
        line = min(added) if added else 1
        yield Hit(
            path,
            line,
            f"The file name `{_shown(path, ranges)}` contains {_describe(bad)}: scripts, `paths:` filters and "
            "links that spell the name normally will not find this file. Rename it (`git mv`).",
        )


def _ranges(ctx: Context) -> re.Pattern[str]:
    def load() -> re.Pattern[str]:
        pairs = [(lo, hi) for lo, hi in ctx.facts.invisible_unicode.ranges if 0 <= lo <= hi <= 0x10FFFF]
        if not pairs:
            return re.compile("(?!)")  # no ranges: nothing is invisible
        return re.compile("[" + "".join(f"\\U{lo:08x}-\\U{hi:08x}" for lo, hi in pairs) + "]")

    return ctx.memo(("npu501-ranges", "", ""), load)


def _is_invisible(ch: str, ranges: re.Pattern[str]) -> bool:
    return ranges.match(ch) is not None


def _invisible(text: str, ranges: re.Pattern[str]) -> list[str]:
    if text.isascii():
        return []
    return list(dict.fromkeys(ranges.findall(text)))


def _describe(chars: list[str]) -> str:
    names = [f"U+{ord(ch):04X} {unicodedata.name(ch, 'format character')}" for ch in chars]
    return ("the invisible character " if len(names) == 1 else "the invisible characters ") + ", ".join(names)


def _shown(text: str, ranges: re.Pattern[str]) -> str:
    return "".join(f"<U+{ord(ch):04X}>" if _is_invisible(ch, ranges) else ch for ch in text)
