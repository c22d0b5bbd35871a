"""Shell code blocks of Markdown (fenced, MyST `{code-block}`) and reStructuredText (`.. code-block::`) docs.
Markdown's are found by the one Markdown scanner (`mdblocks`), as CommonMark reads them.

    for block in shell_blocks(text, "md"):       # or "rst"
        block.lines                                # ((physical line, text without the block's indent), ...)

Only blocks whose language says shell (`bash`, `sh`, `shell`, `zsh`): a `console` block holds prompts and
output, an unlabeled one may hold anything. Never raises; an unclosed fence runs to the end of the file.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Literal

from npu_review.checks import lazyre

SHELL_LANGUAGES = frozenset({"bash", "sh", "shell", "zsh"})

_RST_DIRECTIVE = lazyre.compile(r"^([ \t]*)\.\.[ \t]+(?:code-block|code|sourcecode)::[ \t]*(\S*)[ \t]*$")


@dataclass(frozen=True)
class Block:
    language: str
    lines: tuple[tuple[int, str], ...]  # (1-based line, text with the block's indentation removed)


@lru_cache(maxsize=8)
def _fence_of(languages: frozenset[str]) -> re.Pattern[str]:
    names = "|".join(re.escape(name) for name in sorted(languages))
    return re.compile(rf"(?:```|~~~)[^\n]*?(?:{names})", re.IGNORECASE)


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
    # The quick no: every fence holds ``` or ~~~, every directive `::`; and a fence of one of the languages has
    # the language's name on its line (the Markdown parse costs more than the rest of a doc's rules).
    if ("```" not in text and "~~~" not in text) if flavor == "md" else "::" not in text:
        return []
    if flavor == "md" and not _fence_of(languages).search(text):
        return []
    try:
        found = _md(text, languages) if flavor == "md" else _rst(text.splitlines(), languages)
    except Exception:  # pragma: no cover - defensive: odd input degrades to nothing
        return []
    # A session pasted into a shell block is read as a console one: its output is not shell. A block labelled
    # shell that holds CMake (a guide's "uncomment this in CMakeLists.txt") is not shell at all.
    # Printed output pasted after a command (a help listing, `ls -l` lines) is not shell either, nor a command's
    # synopsis (`[--output-path PATH]` lines: optional arguments in brackets).
    return [
        without_output(console_commands(b) if transcript(b) else b) if b.language in SHELL_LANGUAGES else b
        for b in found
        if b.language not in SHELL_LANGUAGES or not (cmake(b) or synopsis(b))
    ]


# A line that is an optional argument in brackets, as a synopsis writes it: `[--log-level level]`, `[-h]`.
# (a note may follow it: `[--keys ${KEYS}] \\   # the metric to plot`, mmyolo's guide; sweep-r32, judged false)
_OPTIONAL_ARG = lazyre.compile(r"[ \t]*\[-{1,2}[A-Za-z][^\]\n]*\][ \t\\]*(?:#.*)?$")


def synopsis(block: Block) -> bool:
    """The block is a command's synopsis, not a command: a line holds only an optional argument in brackets
    (`msserviceprofiler split` / `--input-path PATH` / `[--output-path PATH]`), which no shell runs."""
    return any(_OPTIONAL_ARG.match(t) for _n, t in block.lines)


# A program's help as argparse and most CLIs print it: `usage: prog [-h] ...` (Go's flag package: `Usage of prog:`; a
# script's own `USAGE:` alone on its line, Paddle-Lite's auto_transform.sh, sweep-r35),
# then `options:`, `optional arguments:`, `required arguments:`... on lines of their own. No shell command is named so.
_HELP_HEADER = lazyre.compile(
    r"[ \t]*(?:usage:(?:[ \t]|$)|usage of \S+:[ \t]*$|options:[ \t]*$"
    r"|(?:(?:optional|positional|required|named|other)[ \t]+)?arguments:[ \t]*$)",
    re.IGNORECASE,
)
# A row of a help listing with no header (.NET's CommandLineParser, many CLIs): an option (or several, comma-separated),
# a gap of two blanks or more, and a description of several words; no `\\` at its end. A command's option line with
# its value after a gap (`--tp  8 \\`) is no such row: its value is one word, or the line continues.
_HELP_ROW = lazyre.compile(
    r"[ \t]*-{1,2}[A-Za-z][\w-]*(?:,[ \t]*-{1,2}[A-Za-z][\w-]*)*[ \t]{2,}[^\s\\#][^\n]*?[ \t][^\s\\]"
)
# How many such rows make a listing (one or two may be a command's option lines that lost their `\\`).
_HELP_ROWS = 3
# A line `ls -l` prints (`-rw-r--r-- 1 user group 1.4M Mar 30 11:04 m.onnx`, `drwxr-xr-x 2 ...`): no command either.
_LS_LONG = lazyre.compile(r"[ \t]*[-dlcbps][-rwxsStT]{9}[.+@]?[ \t]+\d+[ \t]")


def without_output(block: Block) -> Block:
    """A shell block with the output pasted into it blanked (line numbers stay): from a help listing's header (or,
    with none, its first row of three or more: `--tokens   Required. Path to tokens.txt`) to the block's end, and
    `ls -l` lines. The same block when it has none."""
    lines = block.lines
    start = next((k for k, (_n, t) in enumerate(lines) if _HELP_HEADER.match(t)), len(lines))
    # A listing with no header: from its first row, when it has _HELP_ROWS rows.
    rows = [k for k, (_n, t) in enumerate(lines) if _HELP_ROW.match(t) and not t.rstrip().endswith("\\")]
    if len(rows) >= _HELP_ROWS:
        start = min(start, rows[0])
    if start == len(lines) and not any(_LS_LONG.match(t) for _n, t in lines):
        return block
    out = tuple((n, "" if k >= start or _LS_LONG.match(t) else t) for k, (n, t) in enumerate(lines))
    return Block(block.language, out)


# CMake's block ends (`endif()`, `endforeach(x)`): in a shell, `endif()` opens a function definition that never
# gets a body, so no shell script has one on a line of its own.
_CMAKE_END = lazyre.compile(r"^[ \t]*end(?:if|foreach|function|macro|while|block)[ \t]*\(")
# A command call with arguments in parentheses (`link_libraries(stdc++fs)`, `set(X ON)`): no shell syntax either.
_CMAKE_CALL = lazyre.compile(r"^[ \t]*[A-Za-z_]\w*[ \t]*\([^()]*[^()\s][^()]*\)[ \t]*$")


def cmake(block: Block) -> bool:
    """The block holds CMake, whatever its label says: a line ends a CMake block, or every line that holds
    anything (comments aside) is a CMake command call with arguments."""
    lines = [t for _n, t in block.lines if t.strip() and not t.lstrip().startswith("#")]
    return bool(lines) and (any(_CMAKE_END.match(t) for t in lines) or all(_CMAKE_CALL.match(t) for t in lines))


_PROMPT = lazyre.compile(r"^(?:\([\w.-]+\) ?)?\$ ")
# A terminal's prompt with its user and host (`root@node:~/src# `, `(venv) user@host:/work$ `, `[root@host dir]# `):
# a block in a shell language that starts with one is a pasted session, its other lines the commands' output.
_HOST_PROMPT = lazyre.compile(r"^(?:\([\w.-]+\) ?)?(?:[\w.-]+@[\w.-]+:[^\s#$]*|\[[\w.-]+@[\w.-]+[^\]]*\])[#$] ")


def transcript(block: Block) -> bool:
    """The block is a pasted terminal session: its first line that holds anything starts with a prompt, a host's
    or a bare `$ ` (`$ shmem-config --ldflags` then the flags it prints: rs-r76, the printed lines judged false as
    a cut command)."""
    first = next((t for _n, t in block.lines if t.strip()), "")
    return _HOST_PROMPT.match(first) is not None or _PROMPT.match(first) is not None


def console_commands(block: Block) -> Block:
    """A `console` block's commands (or a pasted session's, `transcript`): the lines after a `$ ` or host prompt
    and the lines that continue them (after a trailing backslash); every other line (output) blank, so that line
    numbers stay."""
    out: list[tuple[int, str]] = []
    continued = False
    for n, text in block.lines:
        m = _PROMPT.match(text) or _HOST_PROMPT.match(text)
        if m is not None:
            text = text[m.end() :]
        elif not continued:
            out.append((n, ""))
            continue
        out.append((n, text))
        continued = text.rstrip().endswith("\\")
    return Block(block.language, tuple(out))


def _md(text: str, languages: frozenset[str]) -> list[Block]:
    """The fenced blocks of the languages, as CommonMark reads them (checks/parsers/mdblocks.py). A fence inside a
    block quote is left out: its lines carry the quote's `>`, which a suggestion made from the body would drop."""
    from npu_review.checks.parsers import mdblocks

    out: list[Block] = []
    for block in mdblocks.blocks(text):
        if block.kind == "fence" and not block.quoted:
            lang = _language(block.info)
            if lang in languages:
                out.append(Block(lang, block.body))
    return out


def _rst(lines: list[str], languages: frozenset[str]) -> list[Block]:
    out: list[Block] = []
    # Only a line with `::` can open a directive: the others are stepped over (a body's lines are not looked at).
    directives = [k for k, line in enumerate(lines) if "::" in line]
    n = len(lines)
    d = 0  # directives[d]: the next candidate line
    i = 0
    while d < len(directives):
        if directives[d] < i:
            d += 1
            continue
        i = directives[d]
        d += 1
        m = _RST_DIRECTIVE.match(lines[i])
        if m is None:
            i += 1
            continue
        base = len(m.group(1).expandtabs())
        lang = m.group(2).lower()
        keep = lang in languages  # the body of another language is stepped over, not copied
        i += 1
        while i < n and re.match(r"^[ \t]+:[\w-]+:", lines[i]):  # directive options
            i += 1
        body: list[tuple[int, str]] = []
        indent: int | None = None
        while i < n:
            raw = lines[i]
            if raw.strip():
                width = len(raw) - len(raw.lstrip())
                if width <= base:
                    break
                indent = width if indent is None else min(indent, width)
            if keep:
                body.append((i + 1, raw))
            i += 1
        while body and not body[-1][1].strip():
            body.pop()
        if keep and indent is not None:
            out.append(Block(lang, tuple((n, t[indent:]) for n, t in body)))
    return out
