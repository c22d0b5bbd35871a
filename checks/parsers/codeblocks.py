"""Shell code blocks of Markdown (fenced, MyST `{code-block}`) and reStructuredText (`.. code-block::`) docs.

    for block in shell_blocks(text, "md"):       # or "rst"
        block.lines                                # ((physical line, text without the block's indent), ...)

Only blocks whose language says shell (`bash`, `sh`, `shell`, `zsh`): a `console` block holds prompts and
output, an unlabeled one may hold anything. Never raises; an unclosed fence runs to the end of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh"})

_FENCE = re.compile(r"^([ \t]*)(`{3,}|~{3,})[ \t]*(.*)$")
_RST_DIRECTIVE = re.compile(r"^([ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode)::[ \t]*(\S*)[ \t]*$")


@dataclass(frozen=True)
class Block:
    language: str
    lines: tuple[tuple[int, str], ...]  # (1-based line, text with the block's indentation removed)


def _language(info: str) -> str:
    """`bash`, `{code-block} bash`, `bash title="x"`, `{.bash}` -> `bash`."""
    info = info.strip()
    m = re.match(r"\{(?:code-block|code|sourcecode)\}[ \t]*(\S*)", info)
    if m:
        return m.group(1).lower()
    m = re.match(r"\{?\.?([A-Za-z0-9_+-]*)", info)
    return m.group(1).lower() if m else ""


def shell_blocks(text: str, flavor: Literal["md", "rst"], languages: frozenset[str] = SHELL_LANGUAGES) -> list[Block]:
    """The code blocks whose language is one of `languages` (the shell ones unless told)."""
    # The quick no: every fence holds ``` or ~~~, every directive `::`.
    if ("```" not in text and "~~~" not in text) if flavor == "md" else "::" not in text:
        return []
    try:
        lines = text.splitlines()
        return _md(lines, languages) if flavor == "md" else _rst(lines, languages)
    except Exception:  # pragma: no cover - defensive: odd input degrades to nothing
        return []


_PROMPT = re.compile(r"^(?:\([\w.-]+\) ?)?\$ ")


def console_commands(block: Block) -> Block:
    """A `console` block's commands: the lines after a `$ ` prompt and the lines that continue them (after a
    trailing backslash); every other line (output) blank, so that line numbers stay."""
    out: list[tuple[int, str]] = []
    continued = False
    for n, text in block.lines:
        m = _PROMPT.match(text)
        if m is not None:
            text = text[m.end() :]
        elif not continued:
            out.append((n, ""))
            continue
        out.append((n, text))
        continued = text.rstrip().endswith("\\")
    return Block(block.language, tuple(out))


def _md(lines: list[str], languages: frozenset[str]) -> list[Block]:
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _FENCE.match(lines[i])
        if m is None:
            i += 1
            continue
        indent, fence, info = len(m.group(1)), m.group(2), m.group(3)
        body: list[tuple[int, str]] = []
        i += 1
        while i < len(lines):
            close = _FENCE.match(lines[i])
            if close and close.group(2)[0] == fence[0] and len(close.group(2)) >= len(fence) and not close.group(3):
                break
            raw = lines[i]
            strip = min(indent, len(raw) - len(raw.lstrip(" ")))
            body.append((i + 1, raw[strip:]))
            i += 1
        i += 1
        lang = _language(info)
        if lang in languages:
            out.append(Block(lang, tuple(body)))
    return out


def _rst(lines: list[str], languages: frozenset[str]) -> list[Block]:
    out: list[Block] = []
    i = 0
    while i < len(lines):
        m = _RST_DIRECTIVE.match(lines[i])
        if m is None:
            i += 1
            continue
        base = len(m.group(1).expandtabs())
        lang = m.group(2).lower()
        i += 1
        while i < len(lines) and re.match(r"^[ \t]+:[\w-]+:", lines[i]):  # directive options
            i += 1
        body: list[tuple[int, str]] = []
        indent: int | None = None
        while i < len(lines):
            raw = lines[i]
            if raw.strip():
                width = len(raw) - len(raw.lstrip())
                if width <= base:
                    break
                indent = width if indent is None else min(indent, width)
            body.append((i + 1, raw))
            i += 1
        while body and not body[-1][1].strip():
            body.pop()
        if lang in languages and indent is not None:
            out.append(Block(lang, tuple((n, t[indent:]) for n, t in body)))
    return out
