"""What counts as a launch command, as data: entry points and the style of arguments they take.

The shell parser knows commands, not launchers. A project's facts declare its launchers (verl: Hydra
overrides after `python3 -m verl...`; a vLLM server: argparse options after `vllm serve`), and the views
recognise launches with these declarations:

    Launchers(entry_points=(EntryPoint("hydra", modules=("verl",)),), hydra_any_command=True, not_launchers=())
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

__all__ = ["Arg", "ArgparseLaunch", "EntryPoint", "Launchers", "argparse_args", "argparse_options"]

Style = Literal["hydra", "argparse"]


@dataclass(frozen=True)
class EntryPoint:
    """One launcher: `style` says how its arguments read; the other fields say which commands it is.

    `modules`: `python -m MODULE` with MODULE starting with one of these; `paths`: a word of the command holds
    one of these (a script path); `commands`: the program's name (a CLI on PATH, `vllm`), with `subcommands`
    the first argument it must be followed by (`serve`) when given.
    """

    style: Style
    modules: tuple[str, ...] = ()  # absent: none
    paths: tuple[str, ...] = ()  # absent: none
    commands: tuple[str, ...] = ()  # absent: none
    subcommands: tuple[str, ...] = ()  # absent: any
    engine: str | None = None  # what it starts, for the rules that know it (`vllm`: checks/parsers/vllm_cli.py)
    wrappers: tuple[str, ...] = ()  # programs that run it (`nohup vllm serve ...`, argparse style only)

    def names(self, program: str, module: str | None, words: Sequence[str]) -> bool:
        """The command (its program without a directory, `-m` module and words) is this entry point."""
        if module is not None and any(module.startswith(m) for m in self.modules):
            return True
        if self.paths:
            text = "\0".join(words)  # a path without a NUL is in this text where it is in one of the words
            if any(p in text if "\0" not in p else any(p in w for w in words) for p in self.paths):
                return True
        if program in self.commands:
            return not self.subcommands or (len(words) > 1 and words[1] in self.subcommands)
        return False


@dataclass(frozen=True)
class Launchers:
    """A project's launchers. `hydra_any_command`: any command that passes Hydra overrides is a Hydra launch
    (torchrun, `ray job submit -- ...`) unless its program is one of `not_launchers`."""

    entry_points: tuple[EntryPoint, ...]
    hydra_any_command: bool
    not_launchers: tuple[str, ...]

    def of_style(self, style: Style) -> tuple[EntryPoint, ...]:
        return self._by_style.get(style, ())

    @functools.cached_property
    def _by_style(self) -> dict[str, tuple[EntryPoint, ...]]:
        """The entry points of each style, in order (`of_style` is asked for every command of every script)."""
        return {
            style: tuple(e for e in self.entry_points if e.style == style)
            for style in {e.style for e in self.entry_points}
        }

    @functools.cached_property
    def wrappers(self) -> frozenset[str]:
        """The `wrappers` of every argparse entry point."""
        return frozenset(w for e in self.of_style("argparse") for w in e.wrappers)

    @functools.cached_property
    def never(self) -> frozenset[str]:
        """`not_launchers` as a set (asked for every command of every script)."""
        return frozenset(self.not_launchers)


@dataclass(frozen=True)
class Arg:
    """One option of an argparse launch as the program receives it.

    `value`: the word after shell quote removal and expansion; None for a bare switch; `known` is False when a
    word could not be resolved (then `value` is None). `line`: the flag's line; `value_line`: the line where the
    value starts. `conditional`: the option comes from an array element added in an arm that may not run.
    `via_variable`: the flag or value was written with a `$` expansion (what runs depends on the caller).
    """

    flag: str
    value: str | None
    line: int
    value_line: int
    known: bool = True
    conditional: bool = False
    via_variable: bool = False


@dataclass(frozen=True)
class ArgparseLaunch:
    """A command of an argparse-style launcher: its options in order, `(flag, value or None, line)`, and the
    same with what is known of each (`args`); `index` is the statement's order (for `View.env(..., at=index)`)."""

    program: str
    line: int
    options: tuple[tuple[str, str | None, int], ...]
    entry: EntryPoint
    args: tuple[Arg, ...] = ()
    index: int = -1
    prefix: tuple[tuple[str, str | None, int], ...] = ()  # `NAME=value cmd`: (name, value or None if unknown, line)

    def option(self, flag: str) -> str | None:
        """The value of the last `flag` (argparse: the last one wins); None when absent or a bare switch."""
        found = None
        for name, value, _line in self.options:
            if name == flag:
                found = value
        return found


def argparse_options(words: Sequence[tuple[str, int]]) -> tuple[tuple[str, str | None, int], ...]:
    """`--flag value`, `--flag=value`, `-f value` and bare switches among (unquoted word, line) pairs. A flag
    takes the next word as its value unless that word is a flag itself."""
    out: list[tuple[str, str | None, int]] = []
    i = 0
    while i < len(words):
        text, line = words[i]
        i += 1
        if not text.startswith("-") or text in ("-", "--"):
            continue
        name, eq, value = text.partition("=")
        if eq:
            out.append((name, value, line))
        elif i < len(words) and not words[i][0].startswith("-"):
            out.append((name, words[i][0], line))
            i += 1
        else:
            out.append((name, None, line))
    return tuple(out)


# A word of a command as the program gets it: (text or None when unknown, line, conditional, via_variable,
# opaque: an unknown word that may stand for several options, such as an unquoted `$EXTRA_ARGS`).
ArgWord = tuple[str | None, int, bool, bool, bool]


def argparse_args(words: Sequence[ArgWord]) -> tuple[Arg, ...]:
    """The options among the command's words, as `argparse_options` reads them, keeping what is known of each.
    An opaque word is kept as an option named "" whose value is unknown (it may hold any option)."""
    out: list[Arg] = []
    i = 0
    while i < len(words):
        text, line, cond, via, opaque = words[i]
        i += 1
        if text is None:
            if opaque:
                out.append(Arg("", None, line, line, False, cond, via))
            continue
        if not text.startswith("-") or text in ("-", "--"):
            continue
        name, eq, value = text.partition("=")
        if eq:
            out.append(Arg(name, value, line, line, True, cond, via))
            continue
        nxt = words[i][0] if i < len(words) else "-"
        if nxt is None or not nxt.startswith("-"):
            vtext, vline, vcond, vvia, _opaque = words[i]
            out.append(Arg(name, vtext, line, vline, vtext is not None, cond or vcond, via or vvia))
            i += 1
        else:
            out.append(Arg(name, None, line, line, True, cond, via))
    return tuple(out)
