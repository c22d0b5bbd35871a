"""Markdown's blocks as CommonMark reads them (markdown-it-py): code blocks and paragraphs, with their lines.

The one Markdown code-block scanner. The docs parser (which lines are code, so that a link there is no link),
the shell blocks of docs (what a launch rule reads) and the App's `/recheck` (a command counts only in a
paragraph) all ask it, so they agree on what is code: fences of any length closed by a longer one, indented
blocks, fences inside list items and quotes, an unclosed fence running to the end, a fence swallowed by an HTML
block or an indented block not being one. Besides CommonMark, the blocks of MkDocs (Material) docs whose body is
indented four spaces are containers, as MkDocs renders them: admonitions (`!!! note`, `??? tip`, `???+ tip`) and
content tabs (`=== "Atlas A2"`), so a fence inside a tab is a fence (vllm-ascend's docs hold their launch
commands there), not an indented code block.

    for block in blocks(text):
        block.kind, block.start, block.end     # "fence" | "code" | "paragraph", 1-based first and last line
        block.info                              # a fence's info string (`bash`, `{code-block} bash`)
        block.body                              # ((line, text), ...): the content, container markers removed

Lines are those of `str.splitlines()`, as everywhere else in the engine. Never raises.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache, lru_cache
from typing import TYPE_CHECKING, Literal

from npu_review.checks import lazyre
from npu_review.checks.fastinit import fast_init

if TYPE_CHECKING:
    from markdown_it import MarkdownIt
    from markdown_it.rules_block import StateBlock

Kind = Literal["fence", "code", "paragraph"]

# The first line of an MkDocs block whose body is indented: an admonition (Python-Markdown's `!!!`, pymdownx
# details' `???` and `???+`) or a content tab (pymdownx tabbed's `===`, `===+`, `===!`).
_MKDOCS_CONTAINER = lazyre.compile(r"(?:(?:!!!|\?\?\?\+?)[ \t]+[\w-]|===[!+]?[ \t]+\")")
_CONTAINER_INDENT = 4


def _mkdocs_container(state: StateBlock, start: int, end: int, silent: bool) -> bool:
    """A block rule: the marker line, then every blank line or line indented four more columns than it is the
    body, parsed as blocks of its own (as a list item's)."""
    if state.is_code_block(start):
        return False
    first = state.bMarks[start] + state.tShift[start]
    if not _MKDOCS_CONTAINER.match(state.src, first, state.eMarks[start]):
        return False
    if silent:
        return True
    indent = state.sCount[start] + _CONTAINER_INDENT
    after, line = start + 1, start + 1
    while line < end and (state.isEmpty(line) or state.sCount[line] >= indent):
        line += 1
        if not state.isEmpty(line - 1):
            after = line
    token = state.push("mkdocs_container_open", "div", 1)
    token.map = [start, after]
    token.info = state.src[first : state.eMarks[start]]
    old_indent, old_parent = state.blkIndent, state.parentType
    state.blkIndent, state.parentType = indent, "mkdocs_container"
    state.md.block.tokenize(state, start + 1, after)
    state.blkIndent, state.parentType = old_indent, old_parent
    state.push("mkdocs_container_close", "div", -1)
    state.line = after
    return True


@cache
def _parser() -> MarkdownIt:
    """Block structure only: the inline rules (emphasis, links, ...) cost five times the block parse and say
    nothing about where code is. Made (and markdown-it imported, ~10 ms) when a first text is parsed."""
    from markdown_it import MarkdownIt

    parser = MarkdownIt("commonmark").disable(["inline", "text_join"])
    parser.block.ruler.before("fence", "mkdocs_container", _mkdocs_container)
    return parser


_KINDS: dict[str, Kind] = {"fence": "fence", "code_block": "code", "paragraph_open": "paragraph"}


@fast_init
@dataclass(frozen=True)
class MdBlock:
    kind: Kind
    start: int  # 1-based first line (a fence's opening line)
    end: int  # 1-based last line (a fence's closing line; the last line of the text for an unclosed fence)
    info: str  # a fence's info string, "" for the other kinds
    # The content, (1-based line, text): a code block's lines without the container markers (`> `, a list item's
    # indentation) and the fence's own indentation; a paragraph's source lines as written.
    body: tuple[tuple[int, str], ...]
    quoted: bool  # inside a block quote: the source lines carry `>` markers that the body does not


@lru_cache(maxsize=32)  # the docs parser and the shell blocks read the same file: one parse for both
def blocks(text: str) -> tuple[MdBlock, ...]:
    """The code blocks and paragraphs of a Markdown text, in order (nested ones included)."""
    lines = text.splitlines()
    try:
        # markdown-it breaks lines at \n (and \r) only; splitlines() also at \f, \x1c, \u2028, ...: one \n per
        # line of ours keeps the line numbers the same.
        tokens = _parser().parse("\n".join(lines) + "\n")
    except Exception:  # pragma: no cover - defensive: odd input degrades to no blocks
        return ()
    out: list[MdBlock] = []
    quotes = 0
    for token in tokens:
        if token.type == "blockquote_open":
            quotes += 1
        elif token.type == "blockquote_close":
            quotes -= 1
        kind = _KINDS.get(token.type)
        if kind is None or token.map is None:
            continue
        first, after = token.map  # 0-based, the end exclusive
        if kind == "paragraph":
            body = tuple((n + 1, lines[n]) for n in range(first, min(after, len(lines))))
        else:
            content = token.content.split("\n")[:-1]  # the content ends with a newline
            offset = first + 2 if kind == "fence" else first + 1
            body = tuple((offset + k, t) for k, t in enumerate(content))
        out.append(MdBlock(kind, first + 1, max(first + 1, min(after, len(lines))), token.info, body, quotes > 0))
    return tuple(out)
