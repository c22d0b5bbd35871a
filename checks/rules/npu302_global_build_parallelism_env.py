"""NPU302: build parallelism (`MAX_JOBS`, `MAKEFLAGS=-j…`, `CMAKE_BUILD_PARALLEL_LEVEL`) baked into an image."""

from __future__ import annotations

import re
from collections.abc import Iterable

from checks.context import Context, SourceFile
from checks.kinds import ASCEND_DOCKERFILE
from checks.model import Severity
from checks.parsers.dockerfile import Dockerfile, EnvPair, Instruction, parse
from checks.rule import Hit, Rule, register

_ALWAYS = frozenset({"MAX_JOBS", "CMAKE_BUILD_PARALLEL_LEVEL"})
_MAKE_JOBS = re.compile(r"(?:^|\s)(?:-j|--jobs)")
_ENV_KEYWORD = re.compile(r"^([ \t]*)env([ \t]+)", re.IGNORECASE)


@register
class GlobalBuildParallelismEnv(Rule):
    """A build-parallelism setting is stored in the image with ENV.

    Why: `ENV MAX_JOBS=1` (or `MAKEFLAGS=-j1`, `CMAKE_BUILD_PARALLEL_LEVEL=1`) is meant to keep one heavy
    compile step (vllm-ascend's custom kernels) from running out of memory, but ENV stays in the image: every
    later `pip install` of a C++ extension, every `make` in the container and every image built `FROM` this
    one is throttled (or, with a large value, overcommitted) without anyone seeing why.

    Bad:
        ENV MAX_JOBS=1
        ENV MAKEFLAGS="-j1"

    Good:
        ARG MAX_JOBS=1
        RUN MAX_JOBS=1 pip install -v -e vllm-ascend --no-build-isolation

    Scope: Ascend Dockerfiles only (kind `ascend_dockerfile`, e.g. `docker/ascend/**`); GPU images are not this
    App's business.

    Fix: use `ARG` (its value is in the environment of the RUN steps of the stage, not in the image), or set
    the variable on the one command that needs it.
    """

    id = "NPU302"
    name = "global-build-parallelism-env"
    severity = Severity.WARNING
    title = "Build parallelism set with ENV persists into the image"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        df = ctx.parsed("dockerfile", src, parse)
        for instr in df.of("ENV"):
            for pair in instr.pairs:
                if not _is_parallelism(pair):
                    continue
                yield Hit(
                    src.path,
                    pair.line,
                    f"`ENV {pair.name}={pair.value}` stays in the image: every later build in the container and in "
                    "images built FROM it inherits this parallelism. Use `ARG` for the build or set it on the "
                    f"command that needs it (`{pair.name}={pair.value} pip install …`).",
                    suggestion=_as_arg(instr, pair, src) if _stage_not_reused(df, instr) else None,
                )


def _is_parallelism(pair: EnvPair) -> bool:
    if pair.name in _ALWAYS:
        return True
    return pair.name == "MAKEFLAGS" and pair.value is not None and bool(_MAKE_JOBS.search(pair.value))


def _stage_not_reused(df: Dockerfile, instr: Instruction) -> bool:
    """ENV is inherited by a later `FROM <this stage>`, ARG is not: only then is ARG an exact replacement."""
    stage: str | None = None
    after = False
    for other in df.instructions:
        if other is instr:
            after = True
        elif other.keyword == "FROM" and other.image is not None:
            if not after:
                stage = other.image.stage
            elif stage is not None and other.image.raw.lower() == stage.lower():
                return False
    return True


def _as_arg(instr: Instruction, pair: EnvPair, src: SourceFile) -> str | None:
    """`ENV X=v` → `ARG X=v`, only when the ENV holds this one variable on one line."""
    if len(instr.pairs) != 1 or instr.line != instr.end_line or "$" in (pair.value or ""):
        return None  # `ENV MAX_JOBS=${MAX_JOBS}` as ARG would read itself
    line = src.line(instr.line)
    m = _ENV_KEYWORD.match(line)
    if m is None:
        return None
    head = f"{m.group(1)}ARG{m.group(2)}"
    if not pair.legacy:
        return head + line[m.end() :]
    # Legacy `ENV NAME value`: only a single-word value converts exactly.
    rest = line[m.end() :].strip()
    if not rest.startswith(pair.name + " ") and not rest.startswith(pair.name + "\t"):
        return None
    value = rest[len(pair.name) :].strip()
    if not value or re.search(r"\s", value):
        return None
    return f"{head}{pair.name}={value}"
