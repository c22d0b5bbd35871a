"""Dockerfile parsing: instructions with their physical lines, RUN shell commands, ENV/ARG pairs and FROM.

Follows BuildKit's line handling: a line ending with the escape character (`\\` unless a `# escape=` directive says
otherwise, trailing blanks allowed) continues the instruction; inside a continued instruction, blank lines and lines
whose first non-blank character is `#` are skipped. Heredocs (`RUN <<EOF` … `EOF`) belong to their instruction.
`parse` never raises: what cannot be understood is left out (empty commands, no pairs), never guessed.
"""

from __future__ import annotations

import bisect
import contextlib
import functools
import json
import posixpath
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

CONTENT = "content"
COMMENT = "comment"
BLANK = "blank"
HEREDOC = "heredoc"

INSTRUCTIONS = frozenset(
    {"FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER"}
    | {"WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
)
# Reserved words and prefixes that come before a command's own name.
_PREFIX_WORDS = frozenset({"if", "then", "else", "elif", "do", "while", "until", "!", "{", "(", "time"})
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
_REDIRECT = re.compile(r"\d*(?:>>|>\||>&|>|<<<|<<-|<<|<&|<>|<|&>>|&>)")
_HEREDOC_MARK = re.compile(r"(?<!<)<<(-?)[ \t]*([\"']?)([A-Za-z_][A-Za-z0-9_.-]*)\2")
_DIRECTIVE = re.compile(r"#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(\S+)[ \t]*$")
_SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "zsh", "dash", "ash"})


@dataclass(frozen=True)
class PhysicalLine:
    number: int
    text: str
    kind: str  # CONTENT, COMMENT (a skipped `#` line inside a continuation), BLANK (skipped) or HEREDOC (body/end)


@dataclass(frozen=True)
class Segment:
    """One content line's contribution to the joined text: `text` starts at `offset` of Instruction.args."""

    line: int
    offset: int
    text: str


@dataclass(frozen=True)
class Heredoc:
    name: str
    line: int  # first body line (the terminator line when the body is empty)
    end_line: int  # the terminator line (or the last line of the file when it is missing)
    body: str
    strip_tabs: bool  # `<<-`


@dataclass(frozen=True)
class Word:
    text: str  # quotes and backslash escapes removed; no expansion
    raw: str  # as written
    offset: int  # in Instruction.args (in the heredoc body for commands of a heredoc script)
    line: int  # physical line of the word's first character

    @property
    def quoted(self) -> bool:
        return self.raw[:1] in ("'", '"')


@dataclass(frozen=True)
class Command:
    """A simple command of a RUN: its words (redirections left out), and the operator that follows it."""

    words: tuple[Word, ...]
    op: str  # "&&", "||", ";", ";;", "|", "&", "\n" or "" (end of the script)
    redirects: tuple[str, ...] = ()
    in_heredoc: bool = False

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
            if w.raw in _PREFIX_WORDS or (_ASSIGNMENT.match(w.raw) and not w.quoted):
                i += 1
                continue
            break
        return i

    @property
    def argv(self) -> tuple[str, ...]:
        return tuple(w.text for w in self.words[self.start :])

    @property
    def name(self) -> str:
        argv = self.argv
        return argv[0] if argv else ""

    def assignments(self) -> list[tuple[str, str, Word]]:
        """The leading `NAME=value` words (the whole command when it is only assignments)."""
        out = []
        for w in self.words[: self.start]:
            m = _ASSIGNMENT.match(w.raw)
            if m and not w.quoted:
                name = w.raw[: m.end()].rstrip("=").rstrip("+")
                out.append((name, w.text[len(name) :].lstrip("+").removeprefix("="), w))
        return out


@dataclass(frozen=True)
class EnvPair:
    """One `NAME=value` of ENV or ARG (ARG without default: value None)."""

    name: str
    value: str | None
    raw: str
    line: int
    legacy: bool = False  # `ENV NAME value` form


@dataclass(frozen=True)
class FromImage:
    image: str
    tag: str | None
    digest: str | None
    stage: str | None
    platform: str | None
    raw: str


@dataclass
class Instruction:
    keyword: str  # upper case
    args: str  # text after the keyword, continuations joined, skipped lines left out
    line: int
    end_line: int
    physical: tuple[PhysicalLine, ...]
    segments: tuple[Segment, ...]
    heredocs: tuple[Heredoc, ...] = ()
    flags: tuple[str, ...] = ()  # `--mount=…`, `--platform=…`
    json_args: tuple[str, ...] | None = None  # exec form `["a", "b"]`
    commands: tuple[Command, ...] = ()  # RUN only
    pairs: tuple[EnvPair, ...] = ()  # ENV and ARG
    image: FromImage | None = None  # FROM

    def line_at(self, offset: int) -> int:
        """The physical line that holds `offset` of `args`."""
        if not self.segments:
            return self.line
        i = max(bisect.bisect_right(self._segment_starts, offset) - 1, 0)
        return self.segments[i].line

    @functools.cached_property
    def _segment_starts(self) -> list[int]:
        # Built once: line_at runs for every word, and a RUN may have thousands of continued lines.
        return [s.offset for s in self.segments]

    @property
    def continued(self) -> bool:
        return len(self.segments) > 1


@dataclass
class Dockerfile:
    instructions: tuple[Instruction, ...] = ()
    escape: str = "\\"
    directives: dict[str, str] = field(default_factory=dict)

    def of(self, *keywords: str) -> Iterator[Instruction]:
        wanted = {k.upper() for k in keywords}
        return (i for i in self.instructions if i.keyword in wanted)


# -- splitting into instructions -------------------------------------------------------------------------


def parse(text: str) -> Dockerfile:
    """Split a Dockerfile into instructions and parse RUN, ENV, ARG and FROM. Never raises."""
    lines = text.splitlines()
    directives, first = _directives(lines)
    escape = directives.get("escape", "\\")
    if escape not in ("\\", "`"):
        escape = "\\"
    continuation = re.compile(re.escape(escape) + r"[ \t]*$")
    out: list[Instruction] = []
    foreign = False  # a SHELL instruction of this stage switched RUN to PowerShell or cmd
    i = first
    n = len(lines)
    while i < n:
        raw = lines[i]
        stripped = raw.strip()
        if not stripped or stripped.startswith("#"):
            i += 1
            continue
        try:
            instr, i = _instruction(lines, i, continuation)
        except Exception:  # a parser bug must not sink the run; skip the line
            i += 1
            continue
        # On a parser bug the instruction stays, without commands or pairs: unknown, hence silent.
        with contextlib.suppress(Exception):
            _details(instr)
        if instr.keyword == "FROM":
            foreign = False
        elif instr.keyword == "SHELL":
            foreign = _foreign_shell(instr)
        elif instr.keyword == "RUN" and foreign:
            instr.commands = ()  # PowerShell or cmd: not shell syntax this parser reads
        out.append(instr)
    return Dockerfile(tuple(out), escape, directives)


def _foreign_shell(instr: Instruction) -> bool:
    """True when a SHELL instruction switches RUN to a non-POSIX shell (PowerShell, cmd)."""
    try:
        argv = json.loads(instr.args)
    except ValueError:
        return True  # SHELL must be JSON; what it is instead is unknown
    if not isinstance(argv, list) or not argv or not isinstance(argv[0], str):
        return True
    prog = argv[0].replace("\\", "/").rsplit("/", 1)[-1].lower().removesuffix(".exe")
    return prog in ("powershell", "pwsh", "cmd")


def _directives(lines: list[str]) -> tuple[dict[str, str], int]:
    found: dict[str, str] = {}
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i].strip())
        if not m or m.group(1).lower() in found:
            break
        found[m.group(1).lower()] = m.group(2)
        i += 1
    return found, i


def _instruction(lines: list[str], i: int, continuation: re.Pattern[str]) -> tuple[Instruction, int]:
    raw = lines[i]
    m = re.match(r"[ \t]*(\S+)[ \t]*", raw)
    assert m is not None
    keyword = m.group(1).upper()
    physical = [PhysicalLine(i + 1, raw, CONTENT)]
    first = raw[m.end() :]
    segments: list[Segment] = []
    parts: list[str] = []
    offset = 0

    def add(line_no: int, piece: str) -> bool:
        nonlocal offset
        cm = continuation.search(piece)
        body = piece[: cm.start()] if cm else piece
        segments.append(Segment(line_no, offset, body))
        parts.append(body)
        offset += len(body)
        return cm is not None

    cont = add(i + 1, first)
    last_content = i + 1
    i += 1
    while cont and i < len(lines):
        raw = lines[i]
        stripped = raw.strip()
        if not stripped:
            physical.append(PhysicalLine(i + 1, raw, BLANK))
        elif stripped.startswith("#"):
            physical.append(PhysicalLine(i + 1, raw, COMMENT))
        else:
            physical.append(PhysicalLine(i + 1, raw, CONTENT))
            cont = add(i + 1, raw)
            last_content = i + 1
        i += 1
    # Skipped lines after the last content line (a trailing `\` at the end of the file) are not part of it.
    while physical and physical[-1].number > last_content:
        physical.pop()
    args = "".join(parts)
    instr = Instruction(keyword, args, physical[0].number, last_content, tuple(physical), tuple(segments))
    if keyword in ("RUN", "COPY", "ADD"):
        i = _heredocs(instr, lines, i)
    return instr, i


def _heredocs(instr: Instruction, lines: list[str], i: int) -> int:
    marks = [m for m in _HEREDOC_MARK.finditer(instr.args) if not _in_quotes(instr.args, m.start())]
    if not marks or instr.args.lstrip().startswith("["):
        return i
    docs: list[Heredoc] = []
    physical = list(instr.physical)
    for m in marks:
        strip_tabs, name = m.group(1) == "-", m.group(3)
        start = i
        body: list[str] = []
        while i < len(lines):
            text = lines[i]
            physical.append(PhysicalLine(i + 1, text, HEREDOC))
            i += 1
            if (text.lstrip("\t") if strip_tabs else text) == name:
                break
            body.append(text.lstrip("\t") if strip_tabs else text)
        end = max(i, start + 1) if start < len(lines) else start
        docs.append(Heredoc(name, start + 1, end, "\n".join(body), strip_tabs))
    instr.heredocs = tuple(docs)
    instr.physical = tuple(physical)
    instr.end_line = max(instr.end_line, physical[-1].number)
    return i


def _in_quotes(text: str, pos: int) -> bool:
    quote = ""
    j = 0
    while j < pos:
        c = text[j]
        if quote:
            if c == quote:
                quote = ""
            elif c == "\\" and quote == '"':
                j += 1
        elif c in "'\"":
            quote = c
        elif c == "\\":
            j += 1
        j += 1
    return bool(quote)


# -- per-keyword details ----------------------------------------------------------------------------------


def _details(instr: Instruction) -> None:
    if instr.keyword == "RUN":
        _run(instr)
    elif instr.keyword in ("ENV", "ARG"):
        instr.pairs = tuple(_pairs(instr))
    elif instr.keyword == "FROM":
        instr.image = _from(instr)


def _leading_flags(instr: Instruction) -> int:
    """Consume `--flag=value` words at the start of args; returns the offset after them."""
    pos = 0
    flags = []
    text = instr.args
    while True:
        m = re.match(r"[ \t]*(--[A-Za-z][\w-]*(?:=(?:\"[^\"]*\"|'[^']*'|\S)*)?)[ \t]*", text[pos:])
        if not m:
            break
        flags.append(m.group(1))
        pos += m.end()
    instr.flags = tuple(flags)
    return pos


def _run(instr: Instruction) -> None:
    start = _leading_flags(instr)
    rest = instr.args[start:]
    if rest.lstrip().startswith("["):
        try:
            value = json.loads(rest)
        except ValueError:
            value = None
        if isinstance(value, list) and all(isinstance(v, str) for v in value):
            instr.json_args = tuple(value)
            instr.commands = _json_commands(instr, instr.json_args)
            return
    commands = tokenize(instr.args, instr.line_at, start)
    # `RUN <<EOF` (or `RUN bash <<EOF`) runs the body as a script; `RUN cat <<EOF > f` writes data.
    if instr.heredocs and all(c.name in _SHELLS for c in commands):
        for doc in instr.heredocs:
            lines = doc.body.split("\n")
            starts = [0]
            for ln in lines[:-1]:
                starts.append(starts[-1] + len(ln) + 1)

            def line_of(offset: int, starts: list[int] = starts, first: int = doc.line) -> int:
                return first + max(bisect.bisect_right(starts, offset) - 1, 0)

            commands.extend(Command(c.words, c.op, c.redirects, in_heredoc=True) for c in tokenize(doc.body, line_of))
    instr.commands = tuple(commands)


def _json_commands(instr: Instruction, argv: tuple[str, ...]) -> tuple[Command, ...]:
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-ec", "-ex", "-xc", "-exc", "-lc"):
        line = instr.line
        return tuple(tokenize(argv[2], lambda _o: line))
    words = tuple(Word(a, a, 0, instr.line) for a in argv)
    return (Command(words, ""),) if words else ()


# -- the shell tokenizer ----------------------------------------------------------------------------------


def tokenize(text: str, line_of: Callable[[int], int], start: int = 0) -> list[Command]:
    """Split shell text into simple commands on `&&`, `||`, `;`, `|`, `&` and newlines, outside quotes and
    `$(…)`; `#` at the start of a word comments out the rest of the line. `line_of(offset)` maps an offset of
    `text` to its physical line."""
    commands: list[Command] = []
    words: list[Word] = []
    redirects: list[str] = []
    n = len(text)
    i = start
    buf: list[str] = []  # unquoted text of the current word
    wstart = -1
    pending_redirect = False

    def end_word() -> None:
        nonlocal wstart, pending_redirect
        if wstart < 0:
            return
        raw = text[wstart:i]
        if pending_redirect:
            redirects[-1] += " " + raw
            pending_redirect = False
        elif _REDIRECT.fullmatch(raw):
            redirects.append(raw)
            pending_redirect = True  # the next word is the target
        elif (m := _REDIRECT.match(raw)) and m.end() < len(raw) and not raw[: m.end()].isdigit():
            redirects.append(raw)
        else:
            words.append(Word("".join(buf), raw, wstart, line_of(wstart)))
        buf.clear()
        wstart = -1

    def end_command(op: str) -> None:
        nonlocal pending_redirect
        end_word()
        pending_redirect = False
        if words:  # a command of redirections only (`> file`) is not a command a rule can judge
            commands.append(Command(tuple(words), op, tuple(redirects)))
        words.clear()
        redirects.clear()

    while i < n:
        c = text[i]
        if c in " \t":
            end_word()
            i += 1
            continue
        if c == "\n":
            end_command("\n")
            i += 1
            continue
        if c == "#" and wstart < 0:
            while i < n and text[i] != "\n":
                i += 1
            continue
        if c == "\\" and i + 1 < n and text[i + 1] == "\n":  # line continuation (heredoc scripts)
            i += 2
            continue
        if wstart < 0:
            wstart = i
        if c == "\\":
            if i + 1 < n:
                buf.append(text[i + 1])
            i += 2
            continue
        if c == "'":
            j = text.find("'", i + 1)
            j = n if j < 0 else j
            buf.append(text[i + 1 : j])
            i = j + 1
            continue
        if c == '"':
            j = _skip_double(text, i + 1)
            buf.append(_unescape_double(text[i + 1 : j]))
            i = j + 1
            continue
        if c == "`":
            j = _skip_backtick(text, i + 1)
            buf.append(text[i : j + 1])
            i = j + 1
            continue
        if c == "$" and i + 1 < n and text[i + 1] in "({":
            j = _skip_group(text, i + 1)
            buf.append(text[i : j + 1])
            i = j + 1
            continue
        if c in "<>" and i + 1 < n and text[i + 1] == "(":  # process substitution
            j = _skip_group(text, i + 1)
            buf.append(text[i : j + 1])
            i = j + 1
            continue
        current = text[wstart:i]
        if c == "&":
            if i + 1 < n and text[i + 1] == "&":
                if wstart == i:
                    wstart = -1
                end_command("&&")
                i += 2
                continue
            if (i + 1 < n and text[i + 1] == ">") or current.endswith((">", "<")):
                buf.append(c)
                i += 1
                continue
            if wstart == i:
                wstart = -1
            end_command("&")
            i += 1
            continue
        if c == "|":
            if current.endswith(">"):
                buf.append(c)
                i += 1
                continue
            if wstart == i:
                wstart = -1
            if i + 1 < n and text[i + 1] == "|":
                end_command("||")
                i += 2
            else:
                end_command("|")
                i += 2 if i + 1 < n and text[i + 1] == "&" else 1
            continue
        if c == ";":
            if wstart == i:
                wstart = -1
            if i + 1 < n and text[i + 1] == ";":
                end_command(";;")
                i += 2
            else:
                end_command(";")
                i += 1
            continue
        if c in "()":
            if wstart == i:
                wstart = -1
            end_word()
            wstart = i
            buf.append(c)
            i += 1
            end_word()
            continue
        buf.append(c)
        i += 1
        # The characters up to the next one that any branch above treats specially would each land here too:
        # take them in one step (a word is already open).
        plain = _PLAIN_RUN.match(text, i)
        if plain is not None:
            buf.append(plain.group())
            i = plain.end()
    end_command("")
    return commands


_PLAIN_RUN = re.compile(r"[^ \t\n#\\'\"`$<>&|;()]+")


def _skip_double(text: str, i: int) -> int:
    """Index of the closing `"` (or len(text)), honouring escapes and `$(…)` inside."""
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == '"':
            return i
        if c == "$" and i + 1 < n and text[i + 1] in "({":
            i = _skip_group(text, i + 1) + 1
            continue
        if c == "`":
            i = _skip_backtick(text, i + 1) + 1
            continue
        i += 1
    return n


def _unescape_double(s: str) -> str:
    return re.sub(r'\\([$`"\\\n])', lambda m: "" if m.group(1) == "\n" else m.group(1), s)


def _skip_backtick(text: str, i: int) -> int:
    n = len(text)
    while i < n:
        if text[i] == "\\":
            i += 2
            continue
        if text[i] == "`":
            return i
        i += 1
    return n


def _skip_group(text: str, i: int) -> int:
    """`text[i]` is `(` or `{`: index of its matching closer (or len(text) - 1), skipping quotes inside."""
    opener = text[i]
    closer = ")" if opener == "(" else "}"
    depth = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and opener == "(":
            j = text.find("'", i + 1)
            i = (n if j < 0 else j) + 1
            continue
        if c == '"':
            i = _skip_double(text, i + 1) + 1
            continue
        if c == opener:
            depth += 1
        elif c == closer:
            depth -= 1
            if depth == 0:
                return i
        i += 1
    return n - 1


# -- ENV / ARG / FROM -------------------------------------------------------------------------------------


def _words(text: str) -> list[tuple[str, str, int]]:
    """Whitespace-separated words with quotes honoured: (unquoted, raw, offset)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        if text[i] in " \t":
            i += 1
            continue
        start = i
        buf: list[str] = []
        while i < n and text[i] not in " \t":
            c = text[i]
            if c == "\\" and i + 1 < n:
                buf.append(text[i + 1])
                i += 2
            elif c == '"':
                j = _skip_double(text, i + 1)
                buf.append(_unescape_double(text[i + 1 : j]))
                i = j + 1
            elif c == "'":
                j = text.find("'", i + 1)
                j = n if j < 0 else j
                buf.append(text[i + 1 : j])
                i = j + 1
            else:
                buf.append(c)
                i += 1
        out.append(("".join(buf), text[start:i], start))
    return out


def _pairs(instr: Instruction) -> Iterator[EnvPair]:
    words = _words(instr.args)
    if not words:
        return
    first_text, first_raw, first_off = words[0]
    if instr.keyword == "ENV" and "=" not in first_raw:
        # Legacy `ENV NAME value…`: the value is the rest of the text.
        rest = instr.args[first_off + len(first_raw) :].strip()
        value = " ".join(w[0] for w in _words(rest))
        yield EnvPair(first_text, value, instr.args[first_off:].strip(), instr.line_at(first_off), legacy=True)
        return
    for text, raw, off in words:
        if "=" in raw:
            name, _, value = text.partition("=")
            yield EnvPair(name, value, raw, instr.line_at(off))
        elif instr.keyword == "ARG":
            yield EnvPair(text, None, raw, instr.line_at(off))


def _from(instr: Instruction) -> FromImage | None:
    words = [w for w in _words(instr.args)]
    platform = None
    while words and words[0][1].startswith("--"):
        flag = words.pop(0)[0]
        if flag.startswith("--platform="):
            platform = flag.partition("=")[2]
    if not words:
        return None
    ref = words[0][0]
    stage = words[2][0] if len(words) >= 3 and words[1][0].lower() == "as" else None
    image, digest = ref, None
    if "@" in image:
        image, _, digest = image.partition("@")
    tag = None
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        image, tag = image[:colon], image[colon + 1 :]
    return FromImage(image, tag, digest, stage, platform, ref)


# -- the working directory (for the rules that follow an image's install steps) --------------------------


def resolve_dir(cwd: str | None, target: str) -> str | None:
    """`cd target` from `cwd`: an absolute normalised path, None when unknown (`$VAR`, `~`, `-`, unknown cwd)."""
    if not target or any(c in target for c in "$`~*?") or target == "-":
        return None
    if target.startswith("/"):
        return posixpath.normpath(target)
    if cwd is None:
        return None
    return posixpath.normpath(posixpath.join(cwd, target))


@dataclass(frozen=True)
class Step:
    """One shell command of a RUN, in file order, with the directory it runs in."""

    instr: Instruction
    cmd: Command
    cwd: str | None  # absolute, normalised; None when unknown
    index: int


def steps(df: Dockerfile) -> list[Step]:
    """Every RUN command of the file in order, with its working directory (WORKDIR, then `cd` within the RUN).

    The working directory before the first WORKDIR is taken as `/`; only relative consistency matters to the
    rules (a clone and the install that uses it are resolved against the same root). Branches of `if`/`case`
    are followed as if each ran, in order.
    """
    out: list[Step] = []
    workdir: str | None = "/"
    for instr in df.instructions:
        if instr.keyword == "FROM":
            workdir = "/"
        elif instr.keyword == "WORKDIR":
            target = instr.args.strip().strip("\"'")
            workdir = resolve_dir(workdir, target)
        elif instr.keyword == "RUN":
            cwd = workdir
            for cmd in instr.commands:
                out.append(Step(instr, cmd, cwd, len(out)))
                argv = cmd.argv
                if argv and argv[0] == "cd":
                    cwd = resolve_dir(cwd, argv[1]) if len(argv) > 1 else None
                elif argv and argv[0] in ("pushd", "popd"):
                    cwd = None
    return out


_VAR = re.compile(r"\$(?:\{([A-Za-z_][A-Za-z0-9_]*)(?::?[-=]([^}]*))?\}|([A-Za-z_][A-Za-z0-9_]*))")


def build_args(df: Dockerfile) -> list[tuple[int, str, str]]:
    """(line, name, value) of every ARG default and ENV value, in file order."""
    out = []
    for instr in df.of("ARG", "ENV"):
        for pair in instr.pairs:
            if pair.value is not None:
                out.append((pair.line, pair.name, pair.value))
    return out


def expand(text: str, defs: list[tuple[int, str, str]], line: int) -> tuple[str, dict[str, int]]:
    """Substitute `$X`/`${X}`/`${X:-d}` with the last ARG/ENV value defined before `line` (unknown names stay
    as written). Returns the text and, for each substituted name, the line of its definition."""
    used: dict[str, int] = {}

    def sub(m: re.Match[str]) -> str:
        name = m.group(1) or m.group(3)
        found = None
        for def_line, def_name, value in defs:
            if def_name == name and def_line < line:
                found = (def_line, value)
        if found is None:
            if m.group(2) is not None:
                return m.group(2)
            return m.group(0)
        used[name] = found[0]
        return found[1]

    return _VAR.sub(sub, text), used
