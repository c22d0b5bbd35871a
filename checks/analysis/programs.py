"""Programs an image build runs, and whether the image has them at that point (NPU323).

A Dockerfile stage is read instruction by instruction from its base image: what the base ships (facts
`image_programs.images`, per base-image family), what each earlier RUN installs (apt-get, apt, yum, dnf, pip, with
the packages that bring a program as a dependency), what a COPY or ADD puts in, and what an earlier stage gave the
stage it starts FROM. Each RUN's commands, and those of the repository scripts it runs (`bash /workspace/x/y.sh`
after `COPY . /workspace/x`), are read in order; a checked program called unconditionally (not inside an
`if`/loop/function, not guarded by `command -v`/`which`, not followed by `||`) while it is missing is a `Missing`.

Anything that cannot be read makes the program unknown, never missing: an image of no known family, a program the
family's facts cannot tell about, an install whose package names hold a variable, another package manager
(conda, apk, zypper, spack) or a group install, a COPY from another image, a source build that names the program.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.scripts import ShellUnit, UnitCommand, run_unit, unit_shell
from npu_review.checks.context import Context
from npu_review.checks.facts.schema import ImageFamily, ImagePrograms
from npu_review.checks.parsers.sh import Source, Word

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockerfile import Dockerfile, Instruction

_WRAPPERS = frozenset({"sudo", "env", "nice", "timeout", "stdbuf", "time", "exec", "nohup"})
# The system package managers and the package format each installs.
SYSTEM_MANAGERS = {"apt-get": "apt", "apt": "apt", "yum": "rpm", "dnf": "rpm", "microdnf": "rpm"}
_PIP = frozenset({"pip", "pip3"})
_OTHER_MANAGERS = frozenset({"conda", "mamba", "micromamba", "apk", "zypper", "spack", "brew", "pacman", "snap"})
_SHELLS = frozenset({"bash", "sh", "dash", "source", "."})
_OPENERS = lazyre.compile(r"(?:^|[;&|(]|\bthen\b|\bdo\b|\belse\b)\s*(?:if|case|for|while|until|select)\b")
_CLOSERS = lazyre.compile(r"(?:^|[;&|]|\s)(?:fi|esac|done)\b")
_FUNCTION = lazyre.compile(r"^\s*(?:function\s+[\w.:-]+|[\w.:-]+\s*\(\s*\))\s*\{?")
_MAX_DEPTH = 3  # scripts running scripts


@dataclass(frozen=True)
class Call:
    """Where a program is run: the file and line (a Dockerfile RUN line, or a repository script's line)."""

    path: str
    line: int


@dataclass(frozen=True)
class Missing:
    """A program a stage runs that its image does not have at that point."""

    program: str
    family: ImageFamily
    image: str  # the base image as written in the FROM line (ARG defaults substituted)
    from_line: int
    run_line: int  # the RUN that runs it (directly or through scripts)
    call: Call
    via: tuple[Call, ...]  # the script calls between the RUN and the call
    install_line: int | None  # the stage's last package install before the RUN (where the package goes)
    manager: str  # "apt" or "rpm": the stage's system package manager ("" when none was seen)


@dataclass
class _Stage:
    family: ImageFamily | None
    image: str
    from_line: int
    have: set[str] = field(default_factory=set)
    maybe: set[str] = field(default_factory=set)  # programs something may have put in
    all_unknown: bool = False
    install_line: int | None = None
    manager: str = ""
    copies: list[tuple[str, str]] = field(default_factory=list)  # (image path, repository path) of context copies
    workdir: str = "/"

    def clone(self) -> _Stage:
        return _Stage(
            self.family,
            self.image,
            self.from_line,
            set(self.have),
            set(self.maybe),
            self.all_unknown,
            None,
            self.manager,
            list(self.copies),
            self.workdir,
        )


def family_of(facts: ImagePrograms, image: str, tag: str | None) -> ImageFamily | None:
    """The base-image family of `image:tag` (None: not known)."""
    if not tag or "$" in image or "$" in tag:
        return None
    for fam in facts.images:
        if re.search(fam.repository, image) and re.fullmatch(fam.tag, tag, re.IGNORECASE):
            return fam
    return None


def missing_programs(ctx: Context, path: str, df: Dockerfile) -> list[Missing]:
    """Every (stage, program) pair whose first unconditional call finds the program missing, in file order."""
    from npu_review.checks.parsers.dockerfile import script_heredocs

    facts = ctx.facts.image_programs
    checked = frozenset(facts.programs)
    out: list[Missing] = []
    stages: dict[str, _Stage] = {}
    stage: _Stage | None = None
    reported: set[str] = set()
    for instr in df.instructions:
        if instr.keyword == "FROM":
            reported = set()
            image = instr.image
            if image is None:
                stage = None
                continue
            inherited = stages.get(image.image.lower()) if image.tag is None else None
            if inherited is not None:
                stage = inherited.clone()
                stage.from_line = instr.line
            else:
                fam = family_of(facts, image.image, image.tag)
                stage = _Stage(fam, f"{image.image}:{image.tag}" if image.tag else image.image, instr.line)
                if fam is not None:
                    stage.have.update(fam.ships)
                    stage.maybe.update(fam.unknown)
            if image.stage:
                stages[image.stage.lower()] = stage
            continue
        if stage is None or stage.family is None or stage.all_unknown:
            continue
        if instr.keyword == "WORKDIR":
            stage.workdir = posixpath.normpath(posixpath.join(stage.workdir, instr.args.strip().strip("\"'")))
        elif instr.keyword in ("COPY", "ADD"):
            _copy(ctx, stage, instr, checked)
        elif instr.keyword == "RUN":
            if instr.json_args is not None:
                continue  # exec form: not read
            unit = run_unit(path, instr)
            if unit is None:
                continue
            # `RUN <<EOF`: the here-document is the script (its installs count as any RUN's)
            units = [unit, *(ShellUnit(path, body, "dockerfile", instr.line) for body in script_heredocs(instr))]
            for program, call, via in (
                found for u in units for found in _walk_unit(ctx, stage, u, facts, checked, (), True)
            ):
                if program in reported:
                    continue
                reported.add(program)
                out.append(
                    Missing(
                        program,
                        stage.family,
                        stage.image,
                        stage.from_line,
                        instr.line,
                        call,
                        via,
                        stage.install_line,
                        stage.manager,
                    )
                )
    return out


def _copy(ctx: Context, stage: _Stage, instr: Instruction, checked: frozenset[str]) -> None:
    flags = " ".join(instr.flags)
    if "--from" in flags:
        stage.all_unknown = True  # another image's files: anything may come with them
        return
    words = list(instr.json_args) if instr.json_args is not None else instr.args.split()
    words = [w for w in words if not w.startswith("--")]
    if len(words) < 2:
        return
    *sources, dest = words
    if "$" in dest:
        stage.all_unknown = True
        return
    dest_abs = posixpath.normpath(posixpath.join(stage.workdir, dest))
    for src in sources:
        name = src.rstrip("/").rsplit("/", 1)[-1]
        if name in checked or dest.rstrip("/").rsplit("/", 1)[-1] in checked:
            stage.maybe.add(name if name in checked else dest.rstrip("/").rsplit("/", 1)[-1])
        if "$" in src or "*" in src or "://" in src:
            continue
        rel = posixpath.normpath(src.lstrip("/"))
        rel = "" if rel == "." else rel
        if not rel:
            stage.copies.append((dest_abs, ""))
        elif ctx.changeset.head.exists(rel):
            target = f"{dest_abs}/{rel.rsplit('/', 1)[-1]}" if dest.endswith("/") or len(sources) > 1 else dest_abs
            stage.copies.append((target, rel))
        else:
            stage.copies.append((dest_abs, rel))  # a folder


def _repo_path(ctx: Context, stage: _Stage, here: str, word: str) -> str | None:
    """The repository file an image path names, through the stage's COPYs of the build context (the repository
    root); a relative path from the WORKDIR. None when it cannot be told."""
    if "$" in word or "`" in word:
        return None
    full = posixpath.normpath(posixpath.join(here, word))
    for dest, rel in reversed(stage.copies):
        if full == dest and rel and ctx.changeset.head.exists(rel):
            return rel
        if full.startswith(dest.rstrip("/") + "/"):
            rest = full[len(dest.rstrip("/")) + 1 :]
            cand = posixpath.normpath(f"{rel}/{rest}") if rel else rest
            if ctx.changeset.head.exists(cand):
                return cand
    return None


def _guarded(text: str, program: str) -> bool:
    return re.search(rf"\b(?:command\s+-v|which|type|hash)\s+(?:-\S+\s+)*{re.escape(program)}\b", text) is not None


def _physical_lines(source: Source) -> list[tuple[int, str]]:
    """The source's physical lines, (line, text): a file's by its newlines, a RUN's by its segments (its
    continued lines are joined into one text, each piece marked with the line it came from)."""
    if source.plain:
        first = source.marks[0][1]
        return [(first + k, t) for k, t in enumerate(source.text.split("\n"))]
    out: list[tuple[int, str]] = []
    marks = source.marks
    for i, (offset, line) in enumerate(marks):
        end = marks[i + 1][0] if i + 1 < len(marks) else len(source.text)
        out.extend((line + k, t) for k, t in enumerate(source.text[offset:end].split("\n")))
    return out


def _conditional_lines(source: Source) -> frozenset[int]:
    """Lines inside an `if`/`case`/loop or a function body (coarse: by the words that open and close them), by
    physical line (a RUN's continued lines each count)."""
    out: set[int] = set()
    depth = 0
    brace = 0
    for number, raw in _physical_lines(source):
        line = re.sub(r"#.*", "", re.sub(r"'[^']*'|\"(?:\\.|[^\"\\])*\"", "''", raw))
        opened = len(_OPENERS.findall(line))
        closed = len(_CLOSERS.findall(line))
        func = _FUNCTION.match(line) is not None and not re.match(r"^\s*(?:if|while|for|case)\b", line)
        if depth > 0 or brace > 0 or opened > 0 or func:
            out.add(number)
        depth = max(0, depth + opened - closed)
        if func:
            brace += 1
        elif brace and re.match(r"^\s*\}", line):
            brace -= 1
    return frozenset(out)


_ASSIGNMENT = lazyre.compile(r"[A-Za-z_]\w*\+?=")


def program_at(words: Sequence[Word]) -> int:
    """The index of the word that names the program a command runs: past leading `NAME=value` assignments
    (`DEBIAN_FRONTEND=noninteractive apt-get install ...`), wrappers (`sudo`, `env`) and their options; the
    length of `words` when there is none."""
    i = 0
    while i < len(words) and (
        words[i].unquoted in _WRAPPERS
        or (i > 0 and words[i].unquoted.startswith("-"))
        or _ASSIGNMENT.match(words[i].raw) is not None
    ):
        i += 1
    return i


def _program(cmd: UnitCommand) -> tuple[str, int]:
    """The program a command runs (its file name) and the index of its word (see `program_at`)."""
    words = cmd.words
    i = program_at(words)
    if i >= len(words):
        return "", i
    return words[i].unquoted.rsplit("/", 1)[-1], i


def _walk_unit(
    ctx: Context,
    stage: _Stage,
    unit: ShellUnit,
    facts: ImagePrograms,
    checked: frozenset[str],
    via: tuple[Call, ...],
    in_dockerfile: bool,
) -> Iterator[tuple[str, Call, tuple[Call, ...]]]:
    text = unit.source.text
    for program in checked:
        if program in text and re.search(rf"(?:bin/|/){re.escape(program)}\b|{re.escape(program)}-\d", text):
            stage.maybe.add(program)  # a binary put in place by path, or a source build of it
    conditional = _conditional_lines(unit.source)
    cmds: Sequence[UnitCommand] = unit_shell(unit).commands
    here = stage.workdir
    for k, cmd in enumerate(cmds):
        program, at = _program(cmd)
        if not program:
            continue
        words = [w.unquoted for w in cmd.words[at:]]
        if program == "cd" and len(words) > 1:
            here = posixpath.normpath(posixpath.join(here, words[1])) if "$" not in words[1] else "/?"
            continue
        if (
            program in SYSTEM_MANAGERS
            or program in _PIP
            or program in _OTHER_MANAGERS
            or words[:3]
            == [
                "python3",
                "-m",
                "pip",
            ]
        ):
            _install(stage, program, words, cmd, facts, in_dockerfile)
            continue
        unconditional = cmd.line not in conditional and cmd.op != "||" and not _or_before(cmds, k)
        if program in checked:
            if (
                unconditional
                and program not in stage.have
                and program not in stage.maybe
                and not _guarded(text, program)
            ):
                yield program, Call(unit.path, cmd.line), via
            stage.maybe.add(program)  # reported once; a later call is the same cause
            continue
        if len(via) >= _MAX_DEPTH:
            continue
        script = _script_of(words)
        if script is None:
            continue
        target = _repo_path(ctx, stage, here, script)
        if target is None:
            continue
        src = ctx.source(target)
        if src is None:
            continue
        sub = ShellUnit(target, Source.file(src.text), "script", 1)
        found = _walk_unit(ctx, stage, sub, facts, checked, (*via, Call(unit.path, cmd.line)), False)
        if unconditional:
            yield from found
        else:
            for _ in found:  # walked for what it installs; its calls are conditional here
                pass


def _or_before(cmds: Sequence[UnitCommand], k: int) -> bool:
    """An `a || b && c` chain: c runs only when the earlier commands say so."""
    j = k - 1
    while j >= 0 and cmds[j].line_index == cmds[k].line_index and cmds[j].op in ("&&", "||", "|"):
        if cmds[j].op in ("||", "|"):
            return True
        j -= 1
    return False


def _script_of(words: list[str]) -> str | None:
    if not words:
        return None
    base = words[0].rsplit("/", 1)[-1]
    if base in _SHELLS:
        rest = [w for w in words[1:] if not w.startswith("-")]
        if rest and rest[0].endswith((".sh", ".bash")):
            return rest[0]
        return None
    if words[0].endswith((".sh", ".bash")) and "/" in words[0]:
        return words[0]
    return None


def _install(
    stage: _Stage, program: str, words: list[str], cmd: UnitCommand, facts: ImagePrograms, in_dockerfile: bool
) -> None:
    if program in _OTHER_MANAGERS:
        if "install" in words or "add" in words:
            stage.maybe.update(facts.programs)
        return
    if program == "python3":
        words = words[2:]
        program = "pip"
    verbs = [w for w in words[1:] if not w.startswith("-")]
    if not verbs:
        return
    verb = verbs[0]
    if verb in ("groupinstall", "group", "localinstall", "builddep", "build-dep"):
        stage.maybe.update(facts.programs)
        return
    if verb != "install":
        return
    args = words[words.index("install") + 1 :]
    if program in _PIP:
        if any(a in ("-r", "--requirement", "-e", "--editable") or a.startswith("-r") for a in args):
            stage.maybe.add("cmake")
        names = {_bare(a) for a in args if not a.startswith("-")}
    else:
        manager = SYSTEM_MANAGERS[program]
        names = {_bare(a) for a in args if not a.startswith("-")}
        if any("$" in a or "`" in a for a in args) or any(n.endswith(".rpm") or n.endswith(".deb") for n in names):
            stage.maybe.update(facts.programs)
        recommends = manager == "apt" and "--no-install-recommends" not in args
        for prog, by in facts.recommended_by.items():
            if recommends and names & set(by):
                stage.have.add(prog)
        if in_dockerfile:
            stage.install_line = cmd.line
            stage.manager = manager
        elif not stage.manager:
            stage.manager = manager
    for prog, by in facts.programs.items():
        if names & set(by):
            stage.have.add(prog)
    if any("$" in n for n in names):
        stage.maybe.update(facts.programs)


def _bare(word: str) -> str:
    """A package word without its version or architecture (`wget=1.21*`, `cmake==3.28`, `gcc:amd64`)."""
    return re.split(r"[=<>!~:\[;]", word, maxsplit=1)[0].lower()


def install_name(facts: ImagePrograms, program: str, manager: str) -> str:
    return facts.rpm_names.get(program, program) if manager == "rpm" else program
