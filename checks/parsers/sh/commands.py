"""Simple commands: the words of each command between operators, with its assignments, argv and redirections.

    for cmd in commands(Source.joined(segments)):      # a Dockerfile RUN, a `run:` block, a script
        cmd.name, cmd.argv                               # `pip`, ("pip", "install", "x")
        cmd.words[cmd.start].line                        # the physical line of the command's name
        cmd.op                                           # the operator after it: "&&", "|", ...

This is the view rules that judge commands use (hadolint's `Shell.hs` shape); the launch-script model in
`checks.parsers.shell` reads the same tokens with the `if`/`case` structure around them.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.fastinit import fast_init
from npu_review.checks.parsers.sh.lexer import REDIRECT, LogicalLine, Token, lex, tokens
from npu_review.checks.parsers.sh.source import Source
from npu_review.checks.parsers.sh.words import Op, Word

__all__ = ["ASSIGNMENT", "PREFIX_WORDS", "Command", "Redirect", "commands", "line_commands"]

# Reserved words and prefixes that come before a command's own name.
PREFIX_WORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "(", "time"})
ASSIGNMENT = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")

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


@fast_init
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

    @functools.cached_property
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

    @functools.cached_property
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


def commands(
    source: Source,
    in_heredoc: bool = False,
    glue: bool = True,
    heredoc_bodies: bool = False,
    keep: Callable[[LogicalLine], bool] | None = None,
) -> list[Command]:
    """The simple commands of shell text, in order. A command of redirections only (`> file`) is left out.

    With `glue`, a `<` or `>` inside a word is part of it, as authors of `pip install torch>=2.1` mean (bash
    would write to a file `=2.1`), and only a word that starts with one is a redirection (`>log`, `2>&1`,
    `> log`); without, every `<` and `>` outside quotes starts one, as bash reads them. `heredoc_bodies`: see
    `split_logical`. With `keep`, only the commands of the logical lines it accepts (no command spans two).
    """
    out: list[Command] = []
    lexed = lex(source, heredoc_bodies)
    if keep is None:
        for ll, toks in zip(lexed.lines, lexed.tokens(), strict=True):
            _line_commands(out, toks, "\n" if ll.newline else "", in_heredoc, glue)
        return out
    for k, ll in enumerate(lexed.lines):
        if keep(ll):
            _line_commands(out, lexed.line_tokens(k), "\n" if ll.newline else "", in_heredoc, glue)
    return out


def line_commands(text: str, line: int, glue: bool = True) -> list[Command]:
    """`commands` of one logical line (continuations already joined, comments already gone), all on `line`."""
    out: list[Command] = []
    ll = LogicalLine(text, line, line, ((0, line),))
    _line_commands(out, tokens(ll), "", False, glue)
    return out


def _line_commands(out: list[Command], toks: Sequence[Token], end_op: str, in_heredoc: bool, glue: bool) -> None:
    words: list[Word] = []
    redirects: list[Redirect] = []
    pending: str | None = None  # a redirection waiting for its target
    pieces: list[Token] = []  # tokens that touch each other: one word (or redirection) as written
    for t in [*toks, None]:
        joins = t is not None and (not isinstance(t, Op) or REDIRECT.fullmatch(t.text) is not None)
        if joins and glue and pieces and t is not None and _touch(pieces[-1], t):
            pieces.append(t)
            continue
        if pieces:
            first = pieces[0]
            if isinstance(first, Op):  # a redirection, maybe with its target attached (`>log`)
                if pending is not None:
                    redirects.append(Redirect(pending, None, len(words)))
                if len(pieces) == 1:
                    pending = first.text
                else:
                    redirects.append(Redirect(first.text, _joined(pieces[1:]), len(words)))
                    pending = None
            else:
                word = _joined(pieces)
                if pending is not None:
                    redirects.append(Redirect(pending, word, len(words)))
                    pending = None
                else:
                    words.append(word)
            pieces = []
        if t is None:
            break
        if joins:
            pieces = [t]
            continue
        assert isinstance(t, Op)
        if t.text in ("(", ")"):  # a subshell's or a case pattern's parenthesis: no word, no end
            continue
        if pending is not None:
            redirects.append(Redirect(pending, None, len(words)))
            pending = None
        if words:
            out.append(Command(tuple(words), _OP_NAMES.get(t.text, t.text), tuple(redirects), in_heredoc))
        words, redirects = [], []
    if pending is not None:
        redirects.append(Redirect(pending, None, len(words)))
    if words:
        out.append(Command(tuple(words), end_op, tuple(redirects), in_heredoc))


def _end(t: Token) -> int:
    return t.offset + len(t.text if isinstance(t, Op) else t.raw)


def _touch(a: Token, b: Token) -> bool:
    """`b` starts where `a` ends: no blank between them."""
    return _end(a) == b.offset


def _joined(pieces: list[Token]) -> Word:
    first = pieces[0]
    if len(pieces) == 1 and isinstance(first, Word):
        return first
    raw = "".join(p.text if isinstance(p, Op) else p.raw for p in pieces)
    return Word(raw, first.line, first.offset)
