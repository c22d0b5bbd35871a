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
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.fastinit import fast_init
from npu_review.checks.parsers.sh import Command, Source, Word, commands, heredoc_markers, split_words, unquote

if TYPE_CHECKING:
    from npu_review.checks.parsers.pipcli import PipCall

__all__ = ["Command", "Word"]  # the shell layer's, re-exported for the Dockerfile rules

CONTENT = "content"
COMMENT = "comment"
BLANK = "blank"
HEREDOC = "heredoc"

INSTRUCTIONS = frozenset(
    {"FROM", "RUN", "CMD", "LABEL", "MAINTAINER", "EXPOSE", "ENV", "ADD", "COPY", "ENTRYPOINT", "VOLUME", "USER"}
    | {"WORKDIR", "ARG", "ONBUILD", "STOPSIGNAL", "HEALTHCHECK", "SHELL"}
)
# The delimiters BuildKit reads as a heredoc of an instruction (`RUN <<EOF`, `COPY <<"EOF" /x`).
_HEREDOC_NAME = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_DIRECTIVE = lazyre.compile(r"#[ \t]*([A-Za-z][A-Za-z0-9_-]*)[ \t]*=[ \t]*(\S+)[ \t]*$")
_SHELLS = frozenset({"sh", "bash", "/bin/sh", "/bin/bash", "/usr/bin/bash", "zsh", "dash", "ash"})


@fast_init
@dataclass(frozen=True)
class PhysicalLine:
    number: int
    text: str
    kind: str  # CONTENT, COMMENT (a skipped `#` line inside a continuation), BLANK (skipped) or HEREDOC (body/end)


@fast_init
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
class EnvPair:
    """One `NAME=value` of ENV or ARG (ARG without default: value None)."""

    name: str
    value: str | None
    raw: str
    line: int
    legacy: bool = False  # `ENV NAME value` form


@dataclass(frozen=True)
class FromImage:
    """The base image of a stage. `image`, `tag` and `digest` are read after the global ARG defaults are
    substituted (`ARG BASE=quay.io/ascend/cann:8.5.0-...` + `FROM ${BASE}`, `${X:-default}`); `raw` is the
    reference as written, and `args` the ARG lines the substitution used."""

    image: str
    tag: str | None
    digest: str | None
    stage: str | None
    platform: str | None
    raw: str
    args: tuple[int, ...] = ()


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
    pairs: tuple[EnvPair, ...] = ()  # ENV and ARG
    image: FromImage | None = None  # FROM
    # RUN's commands, read on first use of `commands` (content detection and most rules never ask); `_start`:
    # the offset in `args` after the leading flags.
    _commands: tuple[Command, ...] | None = field(default=None, repr=False, compare=False)
    _start: int = field(default=0, repr=False, compare=False)

    @property
    def commands(self) -> tuple[Command, ...]:
        """RUN only: the simple commands of its shell form (here-document scripts included) or exec form."""
        if self._commands is None:
            try:
                self._commands = _shell_commands(self) if self.keyword == "RUN" else ()
            except Exception:  # a parser bug: no commands, hence silent (as for other parts, see `parse`)
                self._commands = ()
        return self._commands

    @commands.setter
    def commands(self, value: tuple[Command, ...]) -> None:
        self._commands = value

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


# A shell operator at the end of an instruction's text, with no escape character after it (`RUN a &&`).
_DANGLING = lazyre.compile(r"(?<![|&\\])(&&|\|\||\|)[ \t]*\Z")


def dangling_operator(instr: Instruction) -> str | None:
    """The `&&`, `||` or `|` a shell-form RUN ends with (the line that ends it has no escape character, so the
    instruction ends there), None otherwise. Heredoc RUNs and the exec form are read as they are."""
    if instr.keyword != "RUN" or instr.heredocs or instr.json_args is not None:
        return None
    m = _DANGLING.search(instr.args.rstrip())
    return m.group(1) if m else None


@dataclass
class Dockerfile:
    instructions: tuple[Instruction, ...] = ()
    escape: str = "\\"
    directives: dict[str, str] = field(default_factory=dict)
    # `steps`, built on first use: most of the Dockerfile rules walk them, each in its own pass.
    _steps: tuple[Step, ...] | None = field(default=None, repr=False, compare=False)

    def of(self, *keywords: str) -> Iterator[Instruction]:
        wanted = {k.upper() for k in keywords}
        return (i for i in self.instructions if i.keyword in wanted)


# -- splitting into instructions -------------------------------------------------------------------------


@functools.lru_cache(maxsize=128)  # a pure function of the text; cross-file rules read images again after release
def parse(text: str) -> Dockerfile:
    """Split a Dockerfile into instructions and parse RUN, ENV, ARG and FROM (memoised). Never raises."""
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
    _resolve_from(out)
    return Dockerfile(tuple(out), escape, directives)


def _resolve_from(instructions: list[Instruction]) -> None:
    """Substitute the global ARG defaults (the ARGs before the first FROM, the only ones a FROM sees) into
    each FROM reference that uses a variable. A name with no default stays as written: unknown."""
    defs: list[tuple[int, str, str]] = []
    seen_from = False
    for instr in instructions:
        if instr.keyword == "ARG" and not seen_from:
            defs.extend((p.line, p.name, p.value) for p in instr.pairs if p.value is not None)
        elif instr.keyword == "FROM":
            seen_from = True
            image = instr.image
            if image is None or "$" not in image.raw:
                continue
            text, used = expand(image.raw, defs, instr.line)
            if text == image.raw:
                continue
            image_ref, tag, digest = _split_ref(text)
            instr.image = FromImage(
                image_ref, tag, digest, image.stage, image.platform, image.raw, tuple(sorted(used.values()))
            )


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
    # The keyword is read from the line without its continuation (`RUN\`, or a left-over `$X:\` that continues):
    # Docker joins the lines first, so the escape character is never part of the first word.
    cm = continuation.search(raw)
    m = re.match(r"[ \t]*(\S+)[ \t]*", raw[: cm.start()] if cm else raw)
    if m is None:  # the line is only an escape character
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
    if "<<" not in instr.args or instr.args.lstrip().startswith("["):
        return i
    marks = [(name, strip) for name, strip in heredoc_markers(instr.args) if _HEREDOC_NAME.fullmatch(name)]
    if not marks:
        return i
    docs: list[Heredoc] = []
    physical = list(instr.physical)
    for name, strip_tabs in marks:
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
    instr._start = start  # the shell form's commands are read when asked for (Instruction.commands)


def shell_source(instr: Instruction) -> Source | None:
    """The shell text of a shell-form RUN (its continued lines joined, leading flags left out), None for another
    instruction or the exec form. Here-document bodies are not part of it (`Instruction.heredocs`)."""
    if instr.keyword != "RUN" or instr.json_args is not None:
        return None
    return Source.joined((seg.line, seg.text) for seg in instr.segments).tail(instr._start)


def _shell_commands(instr: Instruction) -> tuple[Command, ...]:
    source = Source.joined((seg.line, seg.text) for seg in instr.segments).tail(instr._start)
    found = commands(source)
    if _runs_heredocs(found):
        for doc in instr.heredocs:
            found.extend(commands(Source.file(doc.body, doc.line), in_heredoc=True))
    return tuple(found)


def _runs_heredocs(found: list[Command]) -> bool:
    # `RUN <<EOF` (or `RUN bash <<EOF`) runs the body as a script; `RUN cat <<EOF > f` writes data.
    return all(c.name in _SHELLS for c in found)


def script_heredocs(instr: Instruction) -> tuple[Source, ...]:
    """The here-document bodies a shell-form RUN runs as scripts (`RUN <<EOF`, `RUN bash <<EOF`), each as a
    Source at its own lines; () when the RUN has none or writes them as data (`RUN cat <<EOF > f`)."""
    if not instr.heredocs or shell_source(instr) is None:
        return ()
    # the RUN's own commands, as `commands` read them (memoised): whether they run the bodies
    if not _runs_heredocs([c for c in instr.commands if not c.in_heredoc]):
        return ()
    return tuple(Source.file(doc.body, doc.line) for doc in instr.heredocs)


def _json_commands(instr: Instruction, argv: tuple[str, ...]) -> tuple[Command, ...]:
    if len(argv) >= 3 and argv[0] in _SHELLS and argv[1] in ("-c", "-ec", "-ex", "-xc", "-exc", "-lc"):
        return tuple(commands(Source.single(argv[2], instr.line)))
    # Exec form: each element is one word as it is; written quoted where the shell would read it otherwise.
    words = tuple(Word(a if unquote(a) == a else shlex.quote(a), instr.line) for a in argv)
    return (Command(words, ""),) if words else ()


# -- ENV / ARG / FROM -------------------------------------------------------------------------------------


def _words(text: str) -> list[tuple[str, str, int]]:
    """Words separated by blanks, quotes and expansions kept together: (unquoted, raw, offset)."""
    return [(unquote(text[a:b]), text[a:b], a) for a, b in split_words(text)]


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
    image, tag, digest = _split_ref(ref)
    return FromImage(image, tag, digest, stage, platform, ref)


def _split_ref(ref: str) -> tuple[str, str | None, str | None]:
    """`repo[:tag][@digest]` -> (repo, tag, digest)."""
    image, digest = ref, None
    if "@" in image:
        image, _, digest = image.partition("@")
    tag = None
    slash = image.rfind("/")
    colon = image.rfind(":")
    if colon > slash:
        image, tag = image[:colon], image[colon + 1 :]
    return image, tag, digest


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


@fast_init
@dataclass(frozen=True)
class Step:
    """One shell command of a RUN, in file order, with the directory it runs in."""

    instr: Instruction
    cmd: Command
    cwd: str | None  # absolute, normalised; None when unknown
    index: int

    @functools.cached_property
    def pip(self) -> PipCall | None:
        """`pip_call(self.cmd)`, read once: the install index and several rules ask of every step."""
        from npu_review.checks.parsers.pipcli import pip_call

        return pip_call(self.cmd)


def steps(df: Dockerfile) -> list[Step]:
    """Every RUN command of the file in order, with its working directory (WORKDIR, then `cd` within the RUN).

    The working directory before the first WORKDIR is taken as `/`; only relative consistency matters to the
    rules (a clone and the install that uses it are resolved against the same root). Branches of `if`/`case`
    are followed as if each ran, in order.
    """
    if df._steps is None:
        df._steps = tuple(_steps(df))
    return list(df._steps)  # a copy: the caller may change its list


def _steps(df: Dockerfile) -> Iterator[Step]:
    workdir: str | None = "/"
    index = 0
    for instr in df.instructions:
        if instr.keyword == "FROM":
            workdir = "/"
        elif instr.keyword == "WORKDIR":
            target = instr.args.strip().strip("\"'")
            workdir = resolve_dir(workdir, target)
        elif instr.keyword == "RUN":
            cwd = workdir
            for cmd in instr.commands:
                yield Step(instr, cmd, cwd, index)
                index += 1
                argv = cmd.argv
                if argv and argv[0] == "cd":
                    cwd = resolve_dir(cwd, argv[1]) if len(argv) > 1 else None
                elif argv and argv[0] in ("pushd", "popd"):
                    cwd = None


@dataclass(frozen=True)
class Copy:
    """A COPY or ADD from the build context (not `--from` another stage or image), with its destination
    resolved against the WORKDIR: what of the context lands where in the image."""

    line: int
    stage: int  # how many FROMs come before it, minus one
    sources: tuple[str, ...]  # as written, relative to the build context (`.`, `requirements.txt`, `src/`)
    dest: str  # absolute, normalised
    into_dir: bool  # the destination is a directory (written with a trailing `/`, or several sources)


def copies(df: Dockerfile) -> list[Copy]:
    """Every COPY/ADD of build-context files whose destination is known, in file order."""
    out: list[Copy] = []
    workdir: str | None = "/"
    stage = -1
    for instr in df.instructions:
        if instr.keyword == "FROM":
            workdir, stage = "/", stage + 1
        elif instr.keyword == "WORKDIR":
            workdir = resolve_dir(workdir, instr.args.strip().strip("\"'"))
        elif instr.keyword in ("COPY", "ADD"):
            rest, other = instr.args.strip(), False
            while rest.startswith("--"):
                flag, _, rest = rest.partition(" ")
                other = other or flag.startswith("--from")
                rest = rest.strip()
            if other or not rest:
                continue  # `--from=stage`: not the build context
            words: list[str]
            if rest.startswith("["):
                try:
                    value = json.loads(rest)
                except ValueError:
                    continue
                if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                    continue
                words = list(value)
            else:
                words = [unquote(w) for w in rest.split()]
            if len(words) < 2 or any("$" in w or "://" in w or "*" in w for w in words):
                continue
            dest = resolve_dir(workdir, words[-1])
            if dest is None:
                continue
            sources = tuple(words[:-1])
            out.append(Copy(instr.line, max(stage, 0), sources, dest, words[-1].endswith("/") or len(sources) > 1))
    return out


_NAME = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*")
# Nested expansions are followed this deep (`ARG TAG=${CANN}-${DEVICE}` holds two, each of which may hold more).
_MAX_DEPTH = 8


def build_args(df: Dockerfile) -> list[tuple[int, str, str]]:
    """(line, name, value) of every ARG default and ENV value, in file order."""
    out = []
    for instr in df.of("ARG", "ENV"):
        for pair in instr.pairs:
            if pair.value is not None:
                out.append((pair.line, pair.name, pair.value))
    return out


def expand(
    text: str, defs: list[tuple[int, str, str]], line: int, overrides: Mapping[str, str] | None = None
) -> tuple[str, dict[str, int]]:
    """Substitute `$X`, `${X}`, `${X:-d}` / `${X-d}` and `${X:+a}` / `${X+a}` with the last ARG/ENV value defined
    before `line`, the values themselves expanded (`ARG TAG=${CANN}-910b`) and defaults nested as deep as
    written (`${A:-${B:-x}-y}`). `overrides`: values given from outside (build args a build passes), which win
    over a default. A name with neither stays as written: unknown, never guessed. Returns the text and, for each
    substituted name, the line of its definition (0 for an override)."""
    used: dict[str, int] = {}
    return _Expander(defs, overrides or {}, used).text(text, line, 0), used


class _Expander:
    def __init__(self, defs: list[tuple[int, str, str]], overrides: Mapping[str, str], used: dict[str, int]) -> None:
        self.defs = defs
        self.overrides = overrides
        self.used = used

    def lookup(self, name: str, line: int, depth: int) -> str | None:
        if name in self.overrides:
            self.used[name] = 0
            return self.overrides[name]
        found = None
        for def_line, def_name, value in self.defs:
            if def_name == name and def_line < line:
                found = (def_line, value)
        if found is None:
            return None
        self.used[name] = found[0]
        value = found[1]
        if "$" in value and depth < _MAX_DEPTH:
            value = self.text(value, found[0], depth + 1)
        return value

    def text(self, text: str, line: int, depth: int) -> str:
        if "$" not in text:
            return text
        out: list[str] = []
        i, n = 0, len(text)
        while i < n:
            c = text[i]
            if c != "$" or i + 1 >= n:
                out.append(c)
                i += 1
                continue
            if text[i + 1] == "{":
                close = _close_brace(text, i + 1)
                if close < 0:
                    out.append(text[i:])
                    break
                out.append(self.braced(text[i + 2 : close], text[i : close + 1], line, depth))
                i = close + 1
                continue
            m = _NAME.match(text, i + 1)
            if m is None:
                out.append(c)
                i += 1
                continue
            value = self.lookup(m.group(0), line, depth)
            out.append(text[i : m.end()] if value is None else value)
            i = m.end()
        return "".join(out)

    def braced(self, inner: str, whole: str, line: int, depth: int) -> str:
        m = _NAME.match(inner)
        if m is None:
            return whole
        name, rest = m.group(0), inner[m.end() :]
        if not rest:
            value = self.lookup(name, line, depth)
            return whole if value is None else value
        op = rest[:2] if rest[:2] in (":-", ":+") else rest[:1]
        if op not in (":-", ":+", "-", "+"):
            return whole  # `${X:?}`, substrings and the rest: unknown
        word = rest[len(op) :]
        value = self.lookup(name, line, depth)
        deeper = depth < _MAX_DEPTH
        if op in (":-", "-"):
            if value is None or (op == ":-" and value == ""):
                return self.text(word, line, depth + 1) if deeper else whole
            return value
        if value is None:
            return whole  # whether the alternative applies is unknown
        if op == ":+" and value == "":
            return ""
        return self.text(word, line, depth + 1) if deeper else whole


def _close_brace(text: str, open_idx: int) -> int:
    """The index of the `}` closing the `{` at `open_idx` (nested `${...}` skipped), -1 when there is none."""
    level = 0
    for k in range(open_idx, len(text)):
        ch = text[k]
        if ch == "{":
            level += 1
        elif ch == "}":
            level -= 1
            if level == 0:
                return k
    return -1
