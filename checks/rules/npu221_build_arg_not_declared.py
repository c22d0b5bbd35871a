"""NPU221: a build passes a build argument its Dockerfile does not declare, or no build passes one it needs."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from rapidfuzz.distance import Levenshtein

from npu_review.checks import lazyre
from npu_review.checks.analysis.builds import (
    GRAPH_KINDS,
    IMAGE_SCRIPT_GLOBS,
    OTHER_BUILDER_GLOBS,
    PREDEFINED_ARGS,
    Build,
    DockerfileArgs,
    Graph,
    change_mentions,
    dockerfile_args,
    graph,
    other_builders,
)
from npu_review.checks.context import Context
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCKERFILE, WORKFLOW
from npu_review.checks.messages import places
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.dockercli import BuildArg

# BuildKit's platform arguments exist in every build (https://docs.docker.com/reference/dockerfile/#automatic-
# platform-args-in-the-global-scope): passing one is not a dead setting of the Dockerfile's making.
_AUTOMATIC = frozenset(
    {"TARGETPLATFORM", "TARGETOS", "TARGETARCH", "TARGETVARIANT", "BUILDPLATFORM", "BUILDOS", "BUILDARCH"}
    | {"BUILDVARIANT"}
)


_READS = frozenset({DOCKERFILE, ASCEND_DOCKERFILE, WORKFLOW, ASCEND_WORKFLOW})


class BuildArgNotDeclared(Rule):
    """A build passes `--build-arg X` (or `build-args: X=...`) to a Dockerfile that declares no `ARG X`, or the
    Dockerfile needs an `ARG` without a default that no build of it passes.

    Why: docker ignores a build argument the Dockerfile does not declare (it only warns "One or more
    build-args were not consumed"), so the setting does nothing: the image is built with whatever the
    Dockerfile hard-codes, while the workflow or the install guide reads as if it chose the CANN, torch_npu or
    Python version. The reverse breaks the build: an `ARG` without a default that a `FROM`, a download URL, a
    wheel name or a version pin uses is empty when no build passes it (`FROM quay.io/ascend/cann:-910b-...`,
    `torch_npu--cp311-...whl`). Ascend/pytorch's docker guide told users to pass `TORCH_VERSION`, which its
    Dockerfile never declared, and left out `TORCH_NPU_PATCH_TAG`, which the wheel download needs.

    Builds are read wherever they are written: docker/build-push-action steps, `docker build` and `docker
    buildx build` in run blocks, shell scripts and install docs, with `-f` resolved against the directory the
    command runs in (and, for scripts and docs, the file's own folder).

    Bad:
        # docker/Dockerfile
        ARG CANN_VERSION
        FROM quay.io/ascend/cann:${CANN_VERSION}-910b-ubuntu22.04-py3.11
        ARG TORCH_NPU_VERSION=2.9.0
        # docker/README.md
        ```bash
        docker build --build-arg CANN_VERSION=9.0.0 --build-arg TORCH_VERSION=2.9.0 -f docker/Dockerfile .
        ```

    Good:
        # docker/Dockerfile
        ARG CANN_VERSION
        FROM quay.io/ascend/cann:${CANN_VERSION}-910b-ubuntu22.04-py3.11
        ARG TORCH_NPU_VERSION=2.9.0
        # docker/README.md
        ```bash
        docker build --build-arg CANN_VERSION=9.0.0 --build-arg TORCH_NPU_VERSION=2.9.0 -f docker/Dockerfile .
        ```

    Fix: pass the name the Dockerfile declares (or declare the argument and use it); pass every argument the
    Dockerfile needs, or give it a default.

    A build in a doc or script after a relative `cd` (`cd docker/base && docker build .`) builds that folder's
    Dockerfile, from where the reader starts (the repository root, or the doc's folder).

    Not reported: builds whose Dockerfile cannot be told (an unresolved `-f`), Docker's predefined arguments
    (proxies, `BUILDKIT_*`, `SOURCE_DATE_EPOCH`) and BuildKit's platform arguments; an argument the Dockerfile
    tests or defaults where it uses it (`${X:-...}`, `[ -n "$X" ]`). A needed argument is reported only when
    every build of the Dockerfile is known (no unresolved build, no build argument list that cannot be read, no
    Makefile, compose or bake file naming it) and none of them passes it.
    """

    id = "NPU221"
    name = "build-arg-not-declared"
    severity = Severity.WARNING
    title = "A build argument is passed that the Dockerfile does not declare, or a needed one is never passed"
    kinds = GRAPH_KINDS
    # The Dockerfiles and the workflows (and image scripts): not every doc and script, which a change to one doc
    # would fetch (the App reads what a rule declares). A needed argument is then judged only when every script
    # and doc was read (an audit, or a change to all of them): a build may hide in one not read.
    context_kinds = _READS
    context_triggers = GRAPH_KINDS

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return OTHER_BUILDER_GLOBS + IMAGE_SCRIPT_GLOBS

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        if not change_mentions(ctx, ("docker", "build-arg", "ARG ", "build-push-action")):
            return
        if not ctx.audit and not _may_change_args(ctx):
            return
        g = graph(ctx, reads=_READS)
        files = sorted({b.dockerfile for b in g.builds if b.dockerfile is not None})
        base = _Lazy(lambda: graph(ctx, "base", reads=_READS)) if not ctx.audit else None
        seen: set[tuple[str, int]] = set()
        for path in files:
            if not ctx.has_kind(path, ASCEND_DOCKERFILE):
                continue  # another device's image (a CUDA or ROCm Dockerfile of a multi-backend project)
            args = dockerfile_args(ctx, path)
            if args is None:
                continue
            builds, all_known = g.builds_of(path, other_builders(ctx))
            base_args = dockerfile_args(ctx, path, "base") if not ctx.audit and ctx.touched(path) else None
            never = [
                n
                for n in sorted(args.needed)
                if all_known and builds and n not in _AUTOMATIC and not any(b.passes(n) for b in builds)
            ]
            reported_never: set[str] = set()
            for name in never:
                decl = args.declared[name][0].line
                use_line, _where = args.needed[name]
                if ctx.is_added_line(path, decl) or ctx.is_added_line(path, use_line):
                    reported_never.add(name)
                    yield self._arg_never_passed(path, name, decl, args.needed[name], builds)
            for b in builds:
                if (b.path, b.line) in seen:
                    continue
                undeclared = [
                    a
                    for a in b.args
                    if a.name not in args.declared and a.name not in PREDEFINED_ARGS and a.name not in _AUTOMATIC
                ]
                missing = [n for n in never if n not in reported_never]
                if not undeclared and not missing:
                    continue
                removed = [a.name for a in undeclared if base_args is not None and a.name in base_args.declared]
                if not ctx.audit and not (_build_changed(ctx, b, base) or removed):
                    continue
                seen.add((b.path, b.line))
                yield self._build_hit(ctx, b, path, args, undeclared, missing, removed)

    def _build_hit(
        self,
        ctx: Context,
        b: Build,
        path: str,
        args: DockerfileArgs,
        undeclared: list[BuildArg],
        missing: list[str],
        removed: list[str],
    ) -> Hit:
        parts: list[str] = []
        if undeclared:
            names = ", ".join(f"`{a.name}`" for a in undeclared)
            passed = {a.name for a in b.args}
            hints = []
            for a in undeclared:
                near = _near(a.name, [d for d in args.declared if d not in passed])
                if near:
                    hints.append(f"`{a.name}` -> `{near}`?")
            what = "declares" if not removed else "no longer declares (this change removed it)"
            parts.append(
                f"This build passes {names} to `{path}`, which {what} no such `ARG`: docker ignores "
                f"{'it' if len(undeclared) == 1 else 'them'} (with a warning), so the setting does nothing"
                + (f" ({'; '.join(hints)})" if hints else "")
                + "."
            )
        if missing:
            needs = []
            for name in missing:
                use_line, where = args.needed[name]
                needs.append(f"`{name}` ({_effect(where, use_line)})")
            parts.append(
                f"{'It' if parts else 'This build'} does not pass {', '.join(needs)}, which `{path}` declares "
                "without a default; no other build passes it either."
            )
        parts.append("Pass the arguments the Dockerfile declares and needs.")
        line = undeclared[0].line if undeclared else b.line
        caused = not ctx.audit and not _build_changed(ctx, b, None)
        related = [Related(path, args.declared[n][0].line, f"ARG {n}") for n in missing]
        return Hit(
            b.path,
            line,
            " ".join(parts),
            severity=Severity.ERROR if any(args.needed[n][1] == "FROM" for n in missing) else None,
            related=tuple(related) or (Related(path, 1, "the Dockerfile"),),
            caused_by_change=caused,
        )

    def _arg_never_passed(self, path: str, name: str, decl: int, need: tuple[int, str], builds: list[Build]) -> Hit:
        use_line, where = need
        listed = places(sorted({b.where for b in builds}))
        return Hit(
            path,
            decl,
            f"`ARG {name}` has no default and no build of this Dockerfile passes it ({listed}): "
            f"{_effect(where, use_line)}. Give it a default, or pass `--build-arg {name}=...` in every build.",
            severity=Severity.ERROR if where == "FROM" else None,
            related=tuple(Related(b.path, b.line, "a build") for b in builds[:8]),
        )


def _effect(where: str, line: int) -> str:
    if where == "FROM":
        return f"the `FROM` at line {line} names no image without it"
    return f"the {where} at line {line} breaks when it is empty"


def _near(name: str, candidates: list[str]) -> str | None:
    near = [d for d in candidates if Levenshtein.distance(d, name, score_cutoff=3) <= 3]
    if not near:
        near = [d for d in candidates if _shares_words(d, name)]
    return near[0] if len(near) == 1 else None


class _Lazy:
    """The base revision's graph, built only when a build's arguments must be compared with it."""

    def __init__(self, make: Callable[[], Graph]) -> None:
        self._make = make
        self._graph: Graph | None = None

    def get(self) -> Graph:
        if self._graph is None:
            self._graph = self._make()
        return self._graph


_ARG_NAME = lazyre.compile(r"(?im)^[ \t]*ARG[ \t]+([A-Za-z_]\w*)")
_BUILDER_WORDS = ("docker", "build-arg", "build-push-action", "buildx", "podman", "buildah")


def _may_change_args(ctx: Context) -> bool:
    """The change can make one of the findings below (the exact test before the build graph is built): a
    Dockerfile it touches gains a line that declares or uses an argument (`ARG`, `$`) or loses a declaration,
    or a file it touches that is no Dockerfile may hold a build (its text names docker, a build argument, buildx)."""
    for change in ctx.changeset.changes.values():
        candidates = ctx.kindmap.candidates(change.path)
        if not candidates & GRAPH_KINDS:
            continue
        if candidates & {DOCKERFILE, ASCEND_DOCKERFILE}:
            src = ctx.source(change.path)
            if src is None:
                return True  # deleted or unreadable: the full pass decides
            if any("ARG" in src.line(n) or "$" in src.line(n) for n in change.added_lines):
                return True
            before = ctx.text(change.old_path or change.path, "base") or ""
            if set(_ARG_NAME.findall(before)) - set(_ARG_NAME.findall(src.text)):
                return True
            continue
        for path, rev in ((change.path, "head"), (change.old_path or change.path, "base")):
            text = ctx.text(path, rev)
            if text is not None and any(w in text for w in _BUILDER_WORDS):
                return True
    return False


def _build_changed(ctx: Context, b: Build, base: _Lazy | None) -> bool:
    """The change edits this build: an added line in it, or (with `base`) the names it passes differ from the
    same build's at the base revision (an argument line deleted)."""
    if any(ctx.is_added_line(b.path, n) for n in range(b.line, b.end_line + 1)):
        return True
    if base is None or not ctx.touched(b.path):
        return False
    renamed = {c.path: c.old_path for c in ctx.changeset.changes.values() if c.old_path}
    old_path = renamed.get(b.path, b.path)
    old_file = renamed.get(b.dockerfile or "", b.dockerfile)
    mine = _of_file(ctx, b)
    before = [x for x in base.get().builds if x.path == old_path and x.dockerfile == old_file]
    k = mine.index(b) if b in mine else -1
    if k < 0 or k >= len(before) or len(before) != len(mine):
        return False
    return {a.name for a in before[k].args} != {a.name for a in b.args}


def _of_file(ctx: Context, b: Build) -> list[Build]:
    return [x for x in graph(ctx).builds if x.path == b.path and x.dockerfile == b.dockerfile]


def _shares_words(a: str, b: str) -> bool:
    """`TORCH_NPU_VERSION` and `TORCH_VERSION`: all words of the shorter one are words of the other."""
    wa, wb = set(a.split("_")), set(b.split("_"))
    small, big = (wa, wb) if len(wa) <= len(wb) else (wb, wa)
    return len(small) >= 2 and small <= big
