"""The shell lexer: logical lines (continuations, multi-line quotes, comments, here-documents) and tokens.

    lines, breaks, heredocs = split_logical(Source.file(text))   # or logical_lines(source)
    for ll in lines:
        tokens(ll)        # [Word | ArrayWord | Op]: words as written, operators, redirections
    lexed = lex(source)   # both, memoised for the last sources: every reader of one script shares one lexing

Quotes, `$( )`, `$(( ))`, `${ }` and backticks are followed in both steps, so an operator or a `#` inside them
is text. The scanner copies runs of characters that change nothing in one regex step; keep it that way (the
lexer is the hot spot of a whole-tree run). It never raises on odd input: an unclosed quote runs to the end.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Iterable
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.fastinit import fast_init
from npu_review.checks.parsers.sh.source import Source
from npu_review.checks.parsers.sh.words import ArrayWord, Op, Word

__all__ = [
    "REDIRECT",
    "Lexed",
    "LogicalLine",
    "Token",
    "lex",
    "logical_lines",
    "open_after",
    "read_word",
    "split_logical",
    "split_words",
    "tokens",
]


@fast_init
@dataclass(frozen=True, slots=True)
class LogicalLine:
    """One logical line: continuations joined, comments and here-document bodies removed.

    `marks` is a sorted tuple of (offset in `text`, physical line): the text from that offset on came from
    that physical line. `starts` maps offsets of `text` back to the source: (offset in `text`, offset in the
    source's text) for each physical piece. `newline`: a newline of the source follows the line.
    """

    text: str
    line: int
    end_line: int
    marks: tuple[tuple[int, int], ...]
    starts: tuple[tuple[int, int], ...] = ((0, 0),)
    newline: bool = False

    def line_at(self, offset: int) -> int:
        """The physical line of the character at `offset`."""
        k = bisect.bisect_right(self.marks, (offset, 1 << 62)) - 1
        return self.marks[k][1] if k >= 0 else self.line

    def marks_between(self, start: int, end: int) -> tuple[tuple[int, int], ...]:
        lo = bisect.bisect_right(self.marks, (start, 1 << 62))
        hi = bisect.bisect_left(self.marks, (end, 0))
        return self.marks[lo:hi]

    def source_offset(self, offset: int) -> int:
        """The offset in the source's text (its `base` not added) of the character at `offset`."""
        starts = self.starts
        if len(starts) == 1:
            return starts[0][1] + offset
        k = bisect.bisect_right(starts, (offset, 1 << 62)) - 1
        ll_off, src_off = starts[max(k, 0)]
        return src_off + offset - ll_off


# -- logical lines ----------------------------------------------------------------------------------------------

HEREDOC = lazyre.compile(r"<<(-?)[ \t]*(?:'([^'\n]*)'|\"([^\"\n]*)\"|\\?([A-Za-z_0-9][\w.-]*))")

_ALL_OPENERS = ("$((", "$(", "${")
_WORD_OPENERS = ("$(", "${")  # a word's end only needs to know the nesting, not arithmetic


def _open_expansion(
    line: str, i: int, stack: list[str], out: list[str] | None = None, openers: tuple[str, ...] = _ALL_OPENERS
) -> int:
    """At `i`: open the first of `openers` that starts there (pushed on the stack, copied to `out` when given)
    and return its length, else 0."""
    for opener in openers:
        if line.startswith(opener, i):
            stack.append(opener)
            if out is not None:
                out.append(opener)
            return len(opener)
    return 0


# Runs of characters that change nothing in `_scan_physical` under each top of the quoting stack: the scanner
# copies such a run in one slice. Every character left out is one the per-character code below handles.
_SCAN_CODE = lazyre.compile(r"[^\\#'\"`$()<]+")
_SCAN_RUN = {
    None: _SCAN_CODE,
    "$(": _SCAN_CODE,
    "(": _SCAN_CODE,
    "<(": _SCAN_CODE,
    "$((": _SCAN_CODE,
    '"': lazyre.compile(r'[^\\"$`]+'),
    "`": lazyre.compile(r"[^\\`]+"),
    "${": lazyre.compile(r"[^\\}'\"`$]+"),
}


def _heredoc_context(stack: list[str]) -> bool:
    """A `<<` here opens a here-document: in code at the top, in `$(...)`, `<(...)` or a subshell's `( ... )`,
    not in arithmetic (`$(( x << 2 ))`, `(( x << 2 ))`: a shift)."""
    top = stack[-1] if stack else None
    if top in (None, "$(", "<("):
        return True
    return top == "(" and not (len(stack) > 1 and stack[-2] == "(")


def _scan_physical(line: str, stack: list[str]) -> tuple[str, bool, list[tuple[str, bool]]]:
    """Scan one physical line under the quoting `stack` (mutated in place).

    Returns (text without comment, ends with a line-continuation backslash, heredoc markers (word, strip_tabs)).
    """
    out: list[str] = []
    heredocs: list[tuple[str, bool]] = []
    i, n = 0, len(line)
    while i < n:
        top = stack[-1] if stack else None
        if top == "'":  # nothing but the closing quote ends a single-quoted string
            j = line.find("'", i)
            if j < 0:
                out.append(line[i:])
                break
            out.append(line[i : j + 1])
            stack.pop()
            i = j + 1
            continue
        run = _SCAN_RUN[top].match(line, i)
        if run is not None:
            out.append(run.group())
            i = run.end()
            if i == n:
                break
        c = line[i]
        if c == "\\":
            if i == n - 1:
                if top in (None, '"', "$(", "(", "<(", "${", "`"):
                    return "".join(out), True, heredocs
                out.append(c)
                i += 1
                continue
            out.append(line[i : i + 2])
            i += 2
            continue
        if top == '"':
            if c == '"':
                stack.pop()
            elif c == "$" and (step := _open_expansion(line, i, stack, out)):
                i += step
                continue
            elif c == "`":
                stack.append("`")
            out.append(c)
            i += 1
            continue
        if top == "`":
            if c == "`":
                stack.pop()
            out.append(c)
            i += 1
            continue
        if top == "${":
            if c == "}":
                stack.pop()
            elif c in "'\"`":
                stack.append(c)
            elif c == "$" and (step := _open_expansion(line, i, stack, out)):
                i += step
                continue
            out.append(c)
            i += 1
            continue
        # top is None, "$(", "(", "<(" or "$((": code context
        if c == "#" and top != "$((" and (i == 0 or line[i - 1] in " \t;&|(\n"):
            break  # a comment runs to the end of the physical line
        if c in "'\"`":
            stack.append(c)
        elif c == "$" and (step := _open_expansion(line, i, stack, out)):
            i += step
            continue
        elif c == "(":
            # `<(cmd)` / `>(cmd)`: a process substitution, a script of its own (its here-documents included)
            stack.append("<(" if i > 0 and line[i - 1] in "<>" else "(")
        elif c == ")":
            if top == "$((":
                if line.startswith("))", i):
                    stack.pop()
                    out.append("))")
                    i += 2
                    continue
            elif top in ("$(", "(", "<("):
                stack.pop()
            # top None: a `case` pattern's closing parenthesis
        elif c == "<" and line.startswith("<<<", i):
            out.append("<<<")  # a here-string: its `<<` must not be read again as a here-document
            i += 3
            continue
        elif c == "<" and line.startswith("<<", i) and _heredoc_context(stack):
            m = HEREDOC.match(line, i)
            if m:
                word = m.group(2) if m.group(2) is not None else m.group(3) if m.group(3) is not None else m.group(4)
                heredocs.append((word or "", m.group(1) == "-"))
                out.append(m.group(0))
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out), False, heredocs


@functools.lru_cache(maxsize=8192)
def _scan_line(line: str, stack: tuple[str, ...]) -> tuple[str, bool, tuple[tuple[str, bool], ...], tuple[str, ...]]:
    """`_scan_physical` as a pure function, with the quoting stack after the line returned; memoised because
    launch scripts repeat most of their lines (98% of the lines of the synthetic tree, 78% at verl HEAD)."""
    after = list(stack)
    text, cont, heredocs = _scan_physical(line, after)
    return text, cont, tuple(heredocs), tuple(after)


def open_after(lines: Iterable[str]) -> tuple[str, ...]:
    """What is still open (quotes, `$(`, `${`, ...) after these physical lines of shell, read in order."""
    stack: tuple[str, ...] = ()
    for line in lines:
        stack = _scan_line(line, stack)[3]
    return stack


def heredoc_markers(text: str) -> list[tuple[str, bool]]:
    """The here-documents a line of shell opens, in order: (delimiter word, `<<-` strips tabs)."""
    return list(_scan_line(text, ())[2])


def split_logical(
    source: Source, heredoc_bodies: bool = False
) -> tuple[list[LogicalLine], list[int], list[tuple[int, int]]]:
    """Logical lines, the physical lines of comments skipped inside a continuation, and here-document body
    ranges (first and last physical line). With `heredoc_bodies`, a here-document's body is read as lines of
    shell like the rest (a CI step's `cat <<EOF > run.sh` writes a script that runs elsewhere)."""
    lexed = lex(source, heredoc_bodies)
    return list(lexed.lines), list(lexed.comment_breaks), list(lexed.heredocs)


class Lexed:
    """One source lexed: its logical lines, comment breaks and here-document ranges (see `split_logical`), and
    the tokens of each logical line on first use. Shared by every reader of the source (read-only)."""

    __slots__ = ("_tokens", "comment_breaks", "heredocs", "lines", "source", "unclosed_quote")

    def __init__(
        self,
        source: Source,
        lines: tuple[LogicalLine, ...],
        comment_breaks: tuple[int, ...],
        heredocs: tuple[tuple[int, int], ...],
        unclosed_quote: tuple[str, int] | None = None,
    ) -> None:
        self.source = source
        self.lines = lines
        self.comment_breaks = comment_breaks
        self.heredocs = heredocs
        # A quote (or a backquote, `$(`, `${`, `(`) still open at the end of the text: the opener and the line of
        # the logical line it leaves open (the shell reads to the end looking for its match: "unexpected EOF").
        self.unclosed_quote = unclosed_quote
        self._tokens: tuple[tuple[Token, ...], ...] | None = None

    def tokens(self) -> tuple[tuple[Token, ...], ...]:
        """`tokens(ll, source.base)` of each logical line, in order."""
        if self._tokens is None:
            base = self.source.base
            self._tokens = tuple(tuple(tokens(ll, base)) for ll in self.lines)
        return self._tokens

    def line_tokens(self, index: int) -> tuple[Token, ...]:
        """`tokens()[index]`, read alone when no reader has asked for every line's tokens yet."""
        if self._tokens is not None:
            return self._tokens[index]
        return tuple(tokens(self.lines[index], self.source.base))


# Sources lexed lately: the rules that read one script (NPU101's launch model, NPU110's assignments, NPU111's
# continuations) or one RUN (the Dockerfile parser, content detection) run one after the other on it.
LEXED_SOURCES = 64


def lex(source: Source, heredoc_bodies: bool = False) -> Lexed:
    """`source` lexed (memoised: a pure function of the source); the parts are shared, never change them."""
    return _lex(source, bool(heredoc_bodies))  # one key whichever way the caller spelled the arguments


@functools.lru_cache(maxsize=LEXED_SOURCES)
def _lex(source: Source, heredoc_bodies: bool) -> Lexed:
    lines, breaks, heredocs, unclosed = _split_logical(source, heredoc_bodies)
    return Lexed(source, tuple(lines), tuple(breaks), tuple(heredocs), unclosed)


def _split_logical(
    source: Source, heredoc_bodies: bool
) -> tuple[list[LogicalLine], list[int], list[tuple[int, int]], tuple[str, int] | None]:
    text = source.text
    physical = text.split("\n")
    plain = source.plain
    first_line = source.marks[0][1]
    offsets: list[int] = []  # start offset of each physical line, for sources that are not plain files
    if not plain:
        pos = 0
        for raw in physical:
            offsets.append(pos)
            pos += len(raw) + 1
    result: list[LogicalLine] = []
    comment_breaks: list[int] = []
    heredoc_ranges: list[tuple[int, int]] = []
    stack: tuple[str, ...] = ()  # quoting stack between physical lines
    buf: list[str] = []
    marks: list[tuple[int, int]] = []
    starts: list[tuple[int, int]] = []
    length = 0
    start_line = 0
    end_line = 0
    continuing = False  # the previous physical line ended with an unquoted backslash
    idx = 0
    total = len(physical)
    has_cr = "\r" in text
    src_pos = 0  # offset of the current physical line in a plain source
    if plain:  # leading empty lines give nothing (a docs block is read at its own line numbers): skip them at once
        idx = src_pos = len(text) - len(text.lstrip("\n"))
    while idx < total:
        raw = physical[idx]
        if plain:
            lineno = first_line + idx
            line_pos = src_pos
            src_pos += len(raw) + 1
        else:
            line_pos = offsets[idx]
            lineno = source.line_at(line_pos)
        idx += 1
        if has_cr and raw.endswith("\r"):
            raw = raw[:-1]
        if continuing and not stack and raw.lstrip().startswith("#"):
            # A commented-out line inside a `\` continuation. Bash ends the command here; authors mean
            # "skip this line", which is what a trailing backslash on the comment says. Follow the author
            # when the comment ends with `\`, bash otherwise.
            comment_breaks.append(lineno)
            if raw.rstrip().endswith("\\"):
                continue
            continuing = False
        elif not buf and not stack and (not raw.strip() or raw.lstrip().startswith("#")):
            continue
        if not buf:
            start_line = lineno
            length = 0
            marks = []
            starts = []
        text_part, cont, heredocs, stack = _scan_line(raw, stack)
        marks.append((length, lineno))
        starts.append((length, line_pos))
        if not plain and len(source.marks) > 1:  # marks inside this physical line (a RUN's joined segments)
            k = bisect.bisect_right(source.marks, (line_pos, 1 << 62))
            while k < len(source.marks) and source.marks[k][0] < line_pos + len(text_part):
                marks.append((length + source.marks[k][0] - line_pos, source.marks[k][1]))
                k += 1
        buf.append(text_part)
        length += len(text_part)
        end_line = lineno
        for word, strip_tabs in () if heredoc_bodies else heredocs:
            body_start = idx
            while idx < total:
                body = physical[idx].rstrip("\r")
                idx += 1
                line_text = body.lstrip("\t") if strip_tabs else body
                if line_text == word:
                    break
                if word and "$(" in stack and line_text.startswith(word + ")"):
                    # `$(cat <<'EOF' ... EOF)`: bash ends the here-document with the substitution that holds it (it
                    # warns, and runs it); the `)` and what follows close what was open.
                    rest, _cont, _more, stack = _scan_line(line_text[len(word) :], stack)
                    buf.append(rest)
                    length += len(rest)
                    break
            if plain:
                heredoc_ranges.append((first_line + body_start, first_line + idx - 1))
                src_pos += sum(len(physical[k]) + 1 for k in range(body_start, idx))
            else:
                heredoc_ranges.append(
                    (source.line_at(offsets[min(body_start, total - 1)]), source.line_at(offsets[max(idx - 1, 0)]))
                )
        if cont:
            continuing = True
            continue
        continuing = False
        if stack:
            buf.append("\n")
            length += 1
            continue
        joined = "".join(buf)
        if joined.strip():
            result.append(LogicalLine(joined, start_line, end_line, tuple(marks), tuple(starts), idx < total))
        buf = []
    unclosed = None
    if buf:
        joined = "".join(buf)
        if joined.strip():
            result.append(LogicalLine(joined, start_line, end_line, tuple(marks), tuple(starts), False))
        if stack:
            # the outermost opener: it swallowed the rest (`"`, `'`, a backquote, `$(`, `${`, `(`)
            unclosed = (stack[0], start_line)
    return result, comment_breaks, heredoc_ranges, unclosed


def logical_lines(source: Source | str) -> list[LogicalLine]:
    """The logical lines of shell text (see LogicalLine); never raises."""
    try:
        return split_logical(Source.file(source) if isinstance(source, str) else source)[0]
    except Exception:  # pragma: no cover - defensive: odd input degrades to nothing
        return []


# -- tokens -----------------------------------------------------------------------------------------------------

Token = Word | ArrayWord | Op

REDIRECT = lazyre.compile(r"\d*(?:&>>|&>|>>|>&|<&|<<<|<<-|<<|<>|>\||>|<)")
_OPS = (";;&", ";;", ";&", "&&", "||", "|&", "|", ";", "&", "(", ")", "\n")
_ARRAY_HEAD = lazyre.compile(r"([A-Za-z_]\w*)(\+?)=\Z")

# Runs of characters that change nothing in `read_word` under each top of its stack (None: the word itself).
_WORD_IN_PARENS = lazyre.compile(r"[^\\'\"`()$]+")
_WORD_RUN = {
    None: lazyre.compile(r"[^\\'\"`$ \t\n;&|()<>]+"),
    '"': lazyre.compile(r'[^\\"$`]+'),
    "`": lazyre.compile(r"[^\\`]+"),
    "${": lazyre.compile(r"[^\\}'\"`$]+"),
    "$(": _WORD_IN_PARENS,
    "(": _WORD_IN_PARENS,
}
_BLANK_WORD_RUN = lazyre.compile(r"[^\\'\"`$ \t]+")  # the word itself when only blanks end it (split_words)

# A word that read_word reads without nesting anything but a simple ${...}: a sequence of the pieces below,
# ending where read_word ends it (a break or the end of the text). Each piece starts with a different
# character, so there is one way to read a word; words with $( ), backticks or quotes inside ${ } do not match.
SIMPLE_WORD = (
    r"(?:[^\\'\"`$ \t\n;&|()<>]++"  # plain characters
    r"|\\[\s\S]"  # an escaped character
    r"|'[^']*+'"  # a single-quoted string
    r'|"(?:[^"\\`$]++|\\[\s\S]|\$\{[^}\'"`$\\]*+\}|\$(?![({]))*+"'  # "...", with ${NAME...} and $NAME
    r"|\$\{[^}'\"`$\\]*+\}"  # ${NAME...}
    r"|\$(?![({])"  # $NAME, $1, a lone $
    r")++(?=[ \t\n;&|()<>]|\Z)"
)


def read_word(s: str, i: int, breaks: str = " \t\n;&|()<>") -> int:
    """End offset of the shell word that starts at s[i] (quotes, $( ), ${ } and backticks respected); the word
    ends at the first of `breaks` outside them (blanks and operator characters unless told otherwise)."""
    n = len(s)
    stack: list[str] = []
    top_run = _WORD_RUN[None] if breaks == " \t\n;&|()<>" else _BLANK_WORD_RUN if breaks == " \t" else None
    while i < n:
        top = stack[-1] if stack else None
        if top == "'":  # nothing but the closing quote ends a single-quoted string
            j = s.find("'", i)
            if j < 0:
                return n
            stack.pop()
            i = j + 1
            continue
        rx = _WORD_RUN[top] if top is not None else top_run
        run = rx.match(s, i) if rx is not None else None
        if run is not None:
            i = run.end()
            if i == n:
                return n
        c = s[i]
        if c == "\\":
            i += 2
            continue
        if top == '"':
            if c == '"':
                stack.pop()
            elif s.startswith("$(", i):
                stack.append("$(")
                i += 2
                continue
            elif s.startswith("${", i):
                stack.append("${")
                i += 2
                continue
            elif c == "`":
                stack.append("`")
            i += 1
            continue
        if top == "`":
            if c == "`":
                stack.pop()
            i += 1
            continue
        if top == "${":
            if c == "}":
                stack.pop()
            elif c in "'\"`":
                stack.append(c)
            elif step := _open_expansion(s, i, stack, openers=_WORD_OPENERS):
                i += step
                continue
            i += 1
            continue
        if top in ("$(", "("):
            if c in "'\"`":
                stack.append(c)
            elif c == "(":
                stack.append("(")
            elif c == ")":
                stack.pop()
            elif step := _open_expansion(s, i, stack, openers=("${",)):
                i += step
                continue
            i += 1
            continue
        # top level of the word
        if c in breaks:
            return i
        if c in "'\"`":
            stack.append(c)
        elif step := _open_expansion(s, i, stack, openers=_WORD_OPENERS):
            i += step
            continue
        i += 1
    return n


def split_words(text: str) -> list[tuple[int, int]]:
    """(start, end) of each word of `text` when only blanks end words (Dockerfile ENV, ARG and FROM
    arguments: quotes and expansions kept together, no operators)."""
    out: list[tuple[int, int]] = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in " \t":
            i += 1
            continue
        end = read_word(text, i, " \t")
        out.append((i, max(end, i + 1)))
        i = max(end, i + 1)
    return out


# The next token: blanks skipped (possessively: no token starts on a blank), then the first of a redirection,
# an operator (_OPS, in their order) and a simple word; with none of them, read_word reads the word.
_TOKEN = lazyre.compile(
    rf"[ \t\r]*+(?:(?P<redir>{REDIRECT.pattern})|(?P<op>{'|'.join(map(re.escape, _OPS))})|(?P<word>{SIMPLE_WORD}))?"
)


def _word(ll: LogicalLine, start: int, end: int, base: int) -> Word:
    # ll.line_at(start) with the bisection it makes: marks[lo] is the first mark after `start`. When that one
    # does not start before `end` either, ll.marks_between(start, end) is empty (words rarely span lines).
    lo = bisect.bisect_right(ll.marks, (start, 1 << 62))
    line = ll.marks[lo - 1][1] if lo > 0 else ll.line
    offset = base + ll.source_offset(start)
    if lo == len(ll.marks) or ll.marks[lo] >= (end, 0):
        return Word(ll.text[start:end], line, offset)
    marks = tuple((off - start, phys) for off, phys in ll.marks_between(start, end))
    return Word(ll.text[start:end], line, offset, marks)


def tokens(ll: LogicalLine, base: int = 0) -> list[Token]:
    """The tokens of one logical line; `base` is added to the words' source offsets (Source.base)."""
    s = ll.text
    n = len(s)
    out: list[Token] = []
    marks, starts = ll.marks, ll.starts
    # A logical line from one physical line (the first mark is at offset 0): every token is on that line.
    one_line = marks[0][1] if len(marks) == 1 and marks[0][0] == 0 else None
    origin = base + starts[0][1] if len(starts) == 1 else None  # source offset of s[0], one piece
    # Otherwise: tokens come in order, so `mk` and `sk` walk forward to the first mark and the first piece
    # after the token's start (what ll.line_at and ll.source_offset find by bisection).
    mk = sk = 0
    nmarks, nstarts = len(marks), len(starts)
    i = 0
    while i < n:
        m = _TOKEN.match(s, i)
        assert m is not None  # it always matches, maybe nothing but blanks
        kind = m.lastgroup
        if kind == "redir" or kind == "op":
            text = m.group(kind)
            start = m.start(kind)
            if one_line is not None:
                line = one_line
            else:
                while mk < nmarks and marks[mk][0] <= start:
                    mk += 1
                line = marks[mk - 1][1] if mk > 0 else ll.line
            if origin is not None:
                offset = origin + start
            else:
                while sk < nstarts and starts[sk][0] <= start:
                    sk += 1
                ll_off, src_off = starts[max(sk - 1, 0)]
                offset = base + src_off + start - ll_off
            out.append(Op(";" if text == "\n" else text, line, offset))
            i = m.end()
            continue
        if kind == "word":
            i, end = m.start(kind), m.end()
        else:  # blanks skipped; what follows (if anything) is a word with $( ), backticks or nested quotes
            i = m.end()
            if i == n:
                break
            end = read_word(s, i)
            if end == i:  # cannot happen, but never loop forever
                end = i + 1
        am = _ARRAY_HEAD.match(s, i, end) if end < n and s[end] == "(" else None
        if am:
            elements, close = _read_array(ll, end + 1, base)
            raw = s[i : close + 1]
            offset = base + ll.source_offset(i)
            out.append(
                ArrayWord(am.group(1), am.group(2) == "+", elements, ll.line_at(i), ll.line_at(close), raw, offset)
            )
            i = close + 1
            continue
        if one_line is not None and origin is not None:
            out.append(Word(s[i:end], one_line, origin + i))
            i = end
            continue
        # `_word(ll, i, end, base)` with the walking indexes
        while mk < nmarks and marks[mk][0] <= i:
            mk += 1
        line = marks[mk - 1][1] if mk > 0 else ll.line
        while sk < nstarts and starts[sk][0] <= i:
            sk += 1
        ll_off, src_off = starts[max(sk - 1, 0)]
        offset = base + src_off + i - ll_off
        if mk == nmarks or marks[mk] >= (end, 0):  # no mark inside the word (words rarely span lines)
            out.append(Word(s[i:end], line, offset))
        else:
            out.append(Word(s[i:end], line, offset, tuple((off - i, phys) for off, phys in ll.marks_between(i, end))))
        i = end
    return out


def _read_array(ll: LogicalLine, i: int, base: int) -> tuple[tuple[Word, ...], int]:
    """Elements of an array literal starting after `(`; returns them and the offset of the closing `)`."""
    s = ll.text
    n = len(s)
    elements: list[Word] = []
    while i < n:
        c = s[i]
        if c in " \t\r\n":
            i += 1
            continue
        if c == ")":
            return tuple(elements), i
        end = read_word(s, i)
        if end == i:
            end = i + 1  # a stray operator character inside the array: skip it
            i = end
            continue
        elements.append(_word(ll, i, end, base))
        i = end
    return tuple(elements), n
