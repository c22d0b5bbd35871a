"""NPU302: build-only settings (`MAX_JOBS`, `MAKEFLAGS=-j…`, build switches such as `COMPILE_CUSTOM_KERNELS`) baked
into an image with ENV."""

from __future__ import annotations

import re
from collections.abc import Iterable

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.schema import BuildEnv
from npu_review.checks.kinds import ASCEND_DOCKERFILE
from npu_review.checks.model import Severity
from npu_review.checks.parsers.dockerfile import Dockerfile, EnvPair, Instruction, build_args, expand
from npu_review.checks.rule import Hit, Rule

_MAKE_JOBS = lazyre.compile(r"(?:^|\s)(?:-j|--jobs)")
_ENV_KEYWORD = lazyre.compile(r"^([ \t]*)env([ \t]+)", re.IGNORECASE)


class GlobalBuildParallelismEnv(Rule):
    """A build-only setting (build parallelism, a build switch) is stored in the image with ENV.

    Why: `ENV MAX_JOBS=1` (or `MAKEFLAGS=-j1`, `CMAKE_BUILD_PARALLEL_LEVEL=1`) is meant to keep one heavy
    compile step (vllm-ascend's custom kernels) from running out of memory, but ENV stays in the image: every
    later `pip install` of a C++ extension, every `make` in the container and every image built `FROM` this
    one is throttled (or, with a large value, overcommitted) without anyone seeing why. The same holds for the
    build switches of packages compiled in Ascend images (the facts' `build_env.switches`):
    `COMPILE_CUSTOM_KERNELS=0` is inherited by every later build of vllm-ascend (its worker then only warns at
    run time), and `VLLM_BATCH_INVARIANT=1`, which selects the batch-invariant kernels vllm-ascend compiles, as
    ENV also turns vLLM's slower batch-invariant mode on in every container (vllm-ascend moved it into the build
    RUN, #10423). A switch set with ENV to the value its package reads when nothing sets it (the facts'
    `build_env.switch_defaults`: `COMPILE_CUSTOM_KERNELS=1`, directly or through an ARG of that default) changes
    nothing and is left alone.

    Bad:
        ENV MAX_JOBS=1
        ENV MAKEFLAGS="-j1"
        ENV VLLM_BATCH_INVARIANT=1

    Good:
        ARG MAX_JOBS=1
        RUN MAX_JOBS=1 pip install -v -e vllm-ascend --no-build-isolation

    One finding per block of consecutive ENV instructions (one cause, one comment). A block whose own comment
    (the comment lines right above it) says why it is there is a deliberate setting: a notice, not a warning.
    Silent on `ARG MAX_JOBS`, on a variable set on one command (`MAX_JOBS=1 pip install …`) or exported in
    the RUN that builds, and on deliberate image settings (`TASK_QUEUE_ENABLE`, `SOC_VERSION`).

    Scope: Ascend Dockerfiles only (kind `ascend_dockerfile`: built on an Ascend base image, `ARG` defaults
    resolved, or installing CANN / torch_npu / triton-ascend, whatever the path); GPU images are not this App's
    business.

    Fix: use `ARG` (its value is in the environment of the RUN steps of the stage, not in the image), or set
    the variable on the one command that needs it.
    """

    id = "NPU302"
    name = "global-build-parallelism-env"
    severity = Severity.WARNING
    title = "Build-only setting (parallelism, build switch) set with ENV persists into the image"
    kinds = frozenset({ASCEND_DOCKERFILE})

    def check_dockerfile(self, df: Dockerfile, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        env = ctx.facts.build_env
        defs = build_args(df)
        for block in _blocks(df):
            found = [
                (instr, pair)
                for instr in block
                for pair in instr.pairs
                if _is_build_only(pair, env) and not _default_value(pair, env, defs)
            ]
            if not found:
                continue
            lines = [pair.line for _, pair in found]
            line = next((n for n in lines if ctx.is_added_line(src.path, n)), lines[0])
            end = max(lines[-1], line)
            shown = [f"`ENV {pair.name}={pair.value}`" for _, pair in found]
            what = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + f" and {shown[-1]}"
            verb = "stays" if len(shown) == 1 else "stay"
            first = found[0][1]
            example = (
                f"{first.name}={first.value}" if len(found) == 1 else " ".join(f"{p.name}={p.value}" for _, p in found)
            )
            switches = [pair.name for _, pair in found if pair.name in env.switches]
            if not switches:
                why = "every later build in the container and in images built FROM it inherits this parallelism"
            else:
                names = list(dict.fromkeys(switches))
                parts = [env.switches[n] if len(found) == 1 else f"{n}: {env.switches[n]}" for n in names]
                if len(switches) < len(found):
                    parts.insert(0, "the build parallelism is inherited by every later build and image built FROM it")
                why = "; ".join(parts)
            message = (
                f"{what} {verb} in the image: {why}. Use `ARG` for the build or set it on the command that needs "
                f"it (`{example} pip install …`)."
            )
            reason = _own_comment(src, block[0].line)
            if reason:
                message += f" The comment above says why it is set (\u201c{reason}\u201d), so this is a notice only."
            suggestion = None
            if all(_stage_not_reused(df, instr) for instr, _ in found):
                suggestion = _as_args(block, found, src, line, end)
            yield Hit(
                src.path,
                line,
                message,
                end_line=end,
                suggestion=suggestion,
                severity=Severity.NOTICE if reason else None,
            )


def _blocks(df: Dockerfile) -> list[list[Instruction]]:
    """Runs of consecutive ENV instructions (one block: one cause, one finding)."""
    out: list[list[Instruction]] = []
    current: list[Instruction] = []
    for instr in df.instructions:
        if instr.keyword == "ENV":
            current.append(instr)
            continue
        if current:
            out.append(current)
        current = []
    if current:
        out.append(current)
    return out


def _own_comment(src: SourceFile, line: int) -> str:
    """The comment lines right above a block (no blank line between), joined: its stated reason."""
    texts: list[str] = []
    n = line - 1
    while n >= 1:
        text = src.line(n).strip()
        if not text.startswith("#") or text.startswith("# syntax=") or text.startswith("# escape="):
            break
        texts.insert(0, text.lstrip("#").strip())
        n -= 1
    return " ".join(t for t in texts if t)[:120]


def _as_args(
    block: list[Instruction], found: list[tuple[Instruction, EnvPair]], src: SourceFile, line: int, end: int
) -> str | None:
    """Lines `line..end` with each `ENV X=v` as `ARG X=v`, when each is a one-variable, one-line ENV."""
    by_line = {instr.line: (instr, pair) for instr, pair in found}
    out = []
    for n in range(line, end + 1):
        if n not in by_line:
            return None
        instr, pair = by_line[n]
        converted = _as_arg(instr, pair, src)
        if converted is None:
            return None
        out.append(converted)
    return "\n".join(out)


def _default_value(pair: EnvPair, env: BuildEnv, defs: list[tuple[int, str, str]]) -> bool:
    """A switch set to the value its package reads when nothing sets it (`ENV COMPILE_CUSTOM_KERNELS=1`, or
    `=${COMPILE_CUSTOM_KERNELS}` over `ARG COMPILE_CUSTOM_KERNELS=1`): the ENV changes nothing."""
    default = env.switch_defaults.get(pair.name)
    if default is None or pair.value is None:
        return False
    value = expand(pair.value, defs, pair.line)[0].strip("\"'")
    return value == default


def _is_build_only(pair: EnvPair, env: BuildEnv) -> bool:
    if pair.name in env.parallelism or pair.name in env.switches:
        return True
    return pair.name in env.make_flags and pair.value is not None and bool(_MAKE_JOBS.search(pair.value))


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
