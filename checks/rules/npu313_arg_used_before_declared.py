"""NPU313: a Dockerfile build argument is used where it is not in scope (before its `ARG`, or a global ARG
not re-declared in the stage)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.dockerfile import Dockerfile, Instruction
from npu_review.checks.rule import Hit, Rule

# Build arguments Docker passes to every RUN without an ARG line (they are also left out of the image history).
PREDEFINED_ARGS = frozenset(
    {"HTTP_PROXY", "http_proxy", "HTTPS_PROXY", "https_proxy", "FTP_PROXY", "ftp_proxy", "NO_PROXY", "no_proxy"}
    | {"ALL_PROXY", "all_proxy"}
)
# BuildKit's automatic platform arguments: defined in the global scope, so a stage sees them only after
# `ARG TARGETARCH` (without a value) inside it.
PLATFORM_ARGS = frozenset(
    {"TARGETPLATFORM", "TARGETOS", "TARGETARCH", "TARGETVARIANT"}
    | {"BUILDPLATFORM", "BUILDOS", "BUILDARCH", "BUILDVARIANT"}
)
# Instructions whose text is expanded when the image is built (RUN by its shell, the others by Docker).
# CMD, ENTRYPOINT and HEALTHCHECK run in the container, where build arguments do not exist at all.
_EXPANDED = frozenset({"RUN", "ENV", "ARG", "ADD", "COPY", "WORKDIR", "LABEL", "USER", "EXPOSE", "VOLUME"})
_NAME = lazyre.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Ref:
    name: str
    offset: int
    has_default: bool  # `${X:-d}`, `${X-d}`, `${X:+v}`, `${X:=d}`: the author planned for an unset value


@dataclass
class _Stage:
    line: int
    alias: str | None
    args: dict[str, int] = field(default_factory=dict)  # name -> line of its ARG in this stage (first)
    env: set[str] = field(default_factory=set)  # ENV names set so far (inherited from a parent stage included)
    instructions: list[Instruction] = field(default_factory=list)


_SPECIAL = lazyre.compile(r"[\\'\"$]")


def refs(text: str) -> Iterator[Ref]:
    """`$X` and `${X…}` in `text` that a shell or Docker expands: not inside single quotes, not escaped."""
    i, n = 0, len(text)
    single = double = False
    while i < n:
        # Only quotes, backslashes and `$` change anything: go from one to the next (in single quotes, to its end).
        if single:
            i = text.find("'", i)
            if i < 0:
                return
            single = False
            i += 1
            continue
        special = _SPECIAL.search(text, i)
        if special is None:
            return
        i = special.start()
        c = text[i]
        if c == "\\":
            i += 2
            continue
        if c == "'" and not double:
            single = True
        elif c == '"':
            double = not double
        elif c == "$" and i + 1 < n:
            if text[i + 1] == "{":
                j = i + 2
                if j < n and text[j] == "#":
                    j += 1
                m = _NAME.match(text, j)
                if m:
                    rest = text[m.end() : m.end() + 2]
                    yield Ref(m.group(0), i, rest[:1] in ("-", "+", "=") or rest in (":-", ":+", ":="))
                    i = m.end()
                    continue
            else:
                m = _NAME.match(text, i + 1)
                if m:
                    yield Ref(m.group(0), i, False)
                    i = m.end()
                    continue
        i += 1


def _assigned_before(name: str, text: str, offset: int) -> bool:
    """The RUN's own shell sets `name` before `offset` (`X=…`, `export X=…`, `for X in`, `read X`)."""
    head = text[:offset]
    n = re.escape(name)
    return (
        re.search(rf"(?<![\w$&{{]){n}\+?=", head) is not None
        or re.search(rf"\bfor\s+{n}\b", head) is not None
        or re.search(rf"\b(?:read|getopts)\b[^\n;&|]*\b{n}\b", head) is not None
    )


class ArgUsedBeforeDeclared(Rule):
    """A Dockerfile uses a build argument where it is not defined, so the build sees an empty value.

    Why: an `ARG` is in scope from its line to the end of its stage. A RUN (or ENV, COPY, WORKDIR…) that
    uses `${X}` above `ARG X` in the same stage gets an empty string, and an ARG declared before the first
    `FROM` is visible only to the FROM lines: a stage must re-declare it (`ARG X`, no value) to use it.
    Nothing fails at that line: `git clone --branch ${TAG} URL` clones the default branch or breaks on a
    missing argument, `pip install pkg==${VER}` installs something else. vllm-ascend's openEuler Dockerfile
    cloned Mooncake with `--branch ${MOONCAKE_TAG}` 28 lines above `ARG MOONCAKE_TAG=…` (fixed the same
    day). The same holds for BuildKit's platform arguments (`TARGETARCH`…): defined globally, a stage sees
    them only after `ARG TARGETARCH`. FROM lines see only the ARGs declared before the first FROM.

    Bad:
        FROM quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11
        RUN git clone --depth 1 --branch ${MOONCAKE_TAG} https://github.com/kvcache-ai/Mooncake
        ARG MOONCAKE_TAG=v0.3.8

    Good:
        ARG CANN_IMAGE=quay.io/ascend/cann:8.5.0-910b-ubuntu22.04-py3.11
        FROM ${CANN_IMAGE}
        ARG CANN_IMAGE
        ARG MOONCAKE_TAG=v0.3.8
        RUN echo "built on ${CANN_IMAGE}" && git clone --branch ${MOONCAKE_TAG} https://github.com/kvcache-ai/Mooncake

    Fix: move the `ARG` above its first use in the stage, or re-declare a global ARG after the FROM.

    Not reported (a value may come from elsewhere): names no ARG declares (the base image's ENV, the shell),
    names set by an ENV of the stage or of the stage it is built FROM (or, for a base image given by a build
    argument, which may be an image this Dockerfile publishes, by an ENV of any of its stages), the proxy
    arguments Docker passes to every RUN (`HTTP_PROXY`…), names the RUN's own shell sets first (`X=…`, `for X
    in`), single-quoted or escaped `\\$X`, here-document bodies, and CMD/ENTRYPOINT/HEALTHCHECK. A use with a
    default (`${X:-v}`) is a notice: the build works, with the default instead of the ARG's value.
    """

    id = "NPU313"
    name = "arg-used-before-declared"
    severity = Severity.WARNING
    title = "Dockerfile build argument used before it is declared"
    kinds = frozenset({ASCEND_DOCKERFILE})

    needles = ("$",)

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        global_args: dict[str, int] = {}
        stages: list[_Stage] = []
        for instr in df.instructions:
            if instr.keyword == "FROM":
                alias = instr.image.stage.lower() if instr.image and instr.image.stage else None
                stages.append(_Stage(instr.line, alias, instructions=[instr]))
            elif not stages:
                if instr.keyword == "ARG":
                    for pair in instr.pairs:
                        global_args.setdefault(pair.name, pair.line)
            else:
                stages[-1].instructions.append(instr)
        in_stage_args = {
            p.name: p.line for st in stages for i in st.instructions if i.keyword == "ARG" for p in i.pairs
        }
        yield from self._from_lines(src, stages, global_args, in_stage_args)
        # A base image given by a build argument (`FROM ${MINDIE_BASE_IMAGE}`) may be one this Dockerfile builds
        # and publishes (gpustack/runner's `runtime` stage, pushed, then built FROM): its ENV, which any stage
        # here may set, comes with it.
        own_env = {p.name for st in stages for i in st.instructions if i.keyword == "ENV" for p in i.pairs}
        for index, stage in enumerate(stages):
            parent = _parent(stage, stages[:index])
            if parent is not None:
                stage.env |= parent.env  # that stage's ENV, all of it: it was read to its end
            elif _base_from_argument(stage):
                stage.env |= own_env
            all_args = {p.name: p.line for i in stage.instructions if i.keyword == "ARG" for p in i.pairs}
            for instr in stage.instructions[1:]:
                if instr.keyword in _EXPANDED:
                    yield from self._uses(src, ctx, instr, stage, all_args, global_args)
                if instr.keyword == "ARG":
                    for pair in instr.pairs:
                        stage.args.setdefault(pair.name, pair.line)
                elif instr.keyword == "ENV":
                    stage.env |= {p.name for p in instr.pairs}

    def _from_lines(
        self, src: SourceFile, stages: list[_Stage], global_args: dict[str, int], in_stage: dict[str, int]
    ) -> Iterator[Hit]:
        for stage in stages:
            instr = stage.instructions[0]
            for ref in refs(instr.args):
                if ref.name in global_args or ref.name in PLATFORM_ARGS or ref.name not in in_stage:
                    continue
                yield Hit(
                    src.path,
                    instr.line_at(ref.offset),
                    f"`FROM` uses `${ref.name}`, but `ARG {ref.name}` (line {in_stage[ref.name]}) is declared inside "
                    "a stage: a FROM line sees only the ARGs declared before the first FROM, so here it is "
                    f"empty. Declare `ARG {ref.name}=…` at the top of the file.",
                    severity=Severity.NOTICE if ref.has_default else None,
                )

    def _uses(
        self,
        src: SourceFile,
        ctx: Context,
        instr: Instruction,
        stage: _Stage,
        all_args: dict[str, int],
        global_args: dict[str, int],
    ) -> Iterator[Hit]:
        seen: set[str] = set()
        text = instr.args
        for ref in refs(text):
            name = ref.name
            if name in seen or name in stage.args or name in stage.env or name in PREDEFINED_ARGS:
                continue
            if instr.keyword == "RUN" and _assigned_before(name, text, ref.offset):
                continue
            if instr.keyword in ("ARG", "ENV") and _defined_earlier_in(instr, name, ref.offset):
                continue
            later = all_args.get(name)
            line = instr.line_at(ref.offset)
            declared = later
            if later is not None and later >= line and not (later == line and instr.keyword == "ARG"):
                why = f"`ARG {name}` comes later in this stage (line {later}), so here `${name}` is empty"
            elif later is None and name in global_args:
                declared = global_args[name]
                why = (
                    f"`ARG {name}` (line {global_args[name]}) is declared before FROM, which FROM lines see "
                    f"but not the stage: re-declare `ARG {name}` after the FROM (line {stage.line})"
                )
            elif later is None and name in PLATFORM_ARGS:
                why = (
                    f"`{name}` is one of BuildKit's global platform arguments, which a stage sees only after "
                    f"`ARG {name}` in it: add that line after the FROM (line {stage.line})"
                )
            else:
                continue
            seen.add(name)
            tail = (
                "; the default after `:-` is used instead of the argument's value"
                if ref.has_default
                else (f". Move the `ARG {name}` above this line" if later is not None else "")
            )
            yield Hit(
                src.path,
                line,
                f"{instr.keyword} uses `${name}` where it is not defined: {why}{tail}.",
                severity=Severity.NOTICE if ref.has_default else None,
                # A change that moves the ARG below an unchanged use breaks that use.
                caused_by_change=declared is not None and ctx.is_added_line(src.path, declared),
                # The declaration the message names is where the fix goes (moved, or repeated after the FROM).
                related=(Related(src.path, declared, f"`ARG {name}`"),) if declared is not None else (),
            )


def _defined_earlier_in(instr: Instruction, name: str, offset: int) -> bool:
    """An ARG/ENV instruction that defines `name` in an earlier pair of the same line (`ENV A=1 B=$A` reads
    the old A in Docker, but a same-instruction ARG pair is in scope; stay silent on both)."""
    return any(p.name == name for p in instr.pairs if instr.args.find(p.raw) < offset)


def _base_from_argument(stage: _Stage) -> bool:
    """The stage's FROM names its image through a build argument (`FROM ${BASE_IMAGE} AS x`)."""
    first = stage.instructions[0]
    return first.image is not None and "$" in first.image.raw.split(" ", 1)[0]


def _parent(stage: _Stage, earlier: list[_Stage]) -> _Stage | None:
    """The earlier stage this one is built FROM (by alias), whose ENV it inherits."""
    instr = stage.instructions[0]
    if instr.image is None:
        return None
    ref = instr.image.image.lower()
    return next((s for s in reversed(earlier) if s.alias is not None and s.alias == ref), None)
