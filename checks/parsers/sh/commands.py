"""Simple commands: the words of each command between operators, with its assignments, argv and redirections.

    for cmd in commands(Source.joined(segments)):      # a Dockerfile RUN, a `run:` block, a script
        cmd.name, cmd.argv                               # `pip`, ("pip", "install", "x")
        cmd.words[cmd.start].line                        # the physical line of the command's name
        cmd.op                                           # the operator after it: "&&", "|", ...

This is the view rules that judge commands use (hadolint's `Shell.hs` shape); the launch-script model in
`checks.parsers.shell` reads the same tokens with the `if`/`case` structure around them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from checks.parsers.sh.lexer import REDIRECT, split_logical, tokens
from checks.parsers.sh.source import Source
from checks.parsers.sh.words import Op, Word

__all__ = ["ASSIGNMENT", "PREFIX_WORDS", "Command", "Redirect", "commands"]

# Reserved words and prefixes that come before a command's own name.
PREFIX_WORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "(", "time"})
ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

# The operator that ends a command, as Command.op spells it.
_OP_NAMES = {"|&": "|", ";&": ";;", ";;&": ";;"}


@dataclass(frozen=True, slots=True)
class Redirect:
    """A redirection: its operator (`>`, `2>&`, `<<`, ...), its target word, and how many words come before it."""

    op: str
    target: Word | None
    index: int

    @property
    def text(self) -> str:
        return self.op if self.target is None else f"{self.op}{self.target.raw}"


@dataclass(frozen=True)
class Command:
    """A simple command: its words (redirections left out), and the operator that follows it."""

    words: tuple[Word, ...]
    op: str  # "&&", "||", ";", ";;", "|", "&", "\n" (end of a line) or "" (end of the text)
    redirects: tuple[Redirect, ...] = ()
    in_heredoc: bool = False  # read from a here-document a shell runs (`RUN <<EOF`)

    @property
    def line(self) -> int:
        return self.words[0].line

    @property
    def end_line(self) -> int:
        return self.words[-1].line

    @property
    def start(self) -> int:
        """Index of the command's name in `words`: after reserved words (`then`, `do`, …) and `NAME=value`."""
        i = 0
        while i < len(self.words):
            w = self.words[i]
            if w.raw in PREFIX_WORDS or (ASSIGNMENT.match(w.raw) and not w.quoted):
                i += 1
                continue
            break
        return i

    @property
    def argv(self) -> tuple[str, ...]:
        """The command's name and arguments, unquoted."""
        return tuple(w.unquoted for w in self.words[self.start :])

    @property
    def name(self) -> str:
        argv = self.argv
        return argv[0] if argv else ""

    def assignments(self) -> list[tuple[str, str, Word]]:
        """The leading `NAME=value` words (the whole command when it is only assignments): (name, unquoted
        value, word)."""
        out = []
        for w in self.words[: self.start]:
            m = ASSIGNMENT.match(w.raw)
            if m and not w.quoted:
                name = w.raw[: m.end()].rstrip("=").rstrip("+")
                out.append((name, w.unquoted[len(name) :].lstrip("+").removeprefix("="), w))
        return out


def commands(source: Source, in_heredoc: bool = False) -> list[Command]:
    """The simple commands of shell text, in order. A command of redirections only (`> file`) is left out."""
    out: list[Command] = []
    for ll in split_logical(source)[0]:
        words: list[Word] = []
        redirects: list[Redirect] = []
        pending: str | None = None  # a redirection waiting for its target
        for t in tokens(ll, source.base):
            if isinstance(t, Op):
                if t.text in ("(", ")"):  # a subshell's or a case pattern's parenthesis: no word, no end
                    continue
                if pending is not None:
                    redirects.append(Redirect(pending, None, len(words)))
                    pending = None
                if REDIRECT.fullmatch(t.text):
                    pending = t.text
                    continue
                if words:
                    out.append(Command(tuple(words), _OP_NAMES.get(t.text, t.text), tuple(redirects), in_heredoc))
                words, redirects = [], []
                continue
            word = t if isinstance(t, Word) else Word(t.raw, t.line, t.offset)
            if pending is not None:
                redirects.append(Redirect(pending, word, len(words)))
                pending = None
            else:
                words.append(word)
        if pending is not None:
            redirects.append(Redirect(pending, None, len(words)))
        if words:
            out.append(Command(tuple(words), "\n" if ll.newline else "", tuple(redirects), in_heredoc))
    return out
