"""NPU323: an image build runs a program (wget, patch, git, ...) that its base image does not ship and that nothing
earlier in the stage installs."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.analysis.programs import Missing, install_name, missing_programs
from npu_review.checks.analysis.scripts import touched_script_names
from npu_review.checks.context import Context
from npu_review.checks.kinds import ASCEND_DOCKERFILE, DOCKERFILE, SHELL
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule


class ProgramMissingInImage(Rule):
    """A RUN, or a repository script a RUN runs, calls a program the image does not have.

    Why: Ascend's CANN images (quay.io/ascend/cann, ascendai/cann) are slim: the 8.0.0 to 8.2 images ship no
    wget, curl or jq, the 8.0.0 and 8.1 ones no git either, none ships unzip, and the openEuler ones no `patch`;
    Docker's ubuntu images ship none of them. A RUN that calls one before any step of the stage installs it stops
    the image build with `command not found`. vllm-ascend's dev image ran a new `pta_install.sh` that downloads
    torch_npu with wget on quay.io/ascend/cann:8.0.0, and its openEuler images built custom ops whose CMake files
    apply source patches with `patch`: both builds failed until the package was added.

    Bad:
        FROM quay.io/ascend/cann:8.0.0-910b-ubuntu22.04-py3.10
        RUN apt-get update && apt-get install -y vim net-tools
        RUN wget -q https://example.com/torch_npu.tar.gz

    Good:
        FROM quay.io/ascend/cann:8.0.0-910b-ubuntu22.04-py3.10
        RUN apt-get update && apt-get install -y vim net-tools wget
        RUN wget -q https://example.com/torch_npu.tar.gz

    Fix: add the program's package to the stage's install step (`g++` is `gcc-c++` on openEuler).

    Where: Dockerfile stages whose base image is a known family (facts `image_programs`: the CANN images by
    version and OS, ubuntu, openEuler 24.03), read RUN by RUN, with the repository scripts a RUN runs through a
    COPY of the build context. The finding goes on the stage's last package install (where the package is
    missing), or on the RUN when the stage installs nothing. Not reported: a program the family's facts do not
    establish as missing (every program on an image of unknown provenance); one installed by an earlier RUN of
    the stage, by the script itself, by a package that depends on it (build-essential brings make, gcc, g++ and
    patch) or in the stage it starts FROM; a call inside `if`/loops/functions, guarded by `command -v`/`which`,
    or followed by `||`; a stage that copies from another image or installs what cannot be read; a program run
    by the build a RUN starts rather than by the RUN or a script it names (a `setup.py` that runs a build script,
    a CMake file's `PATCH_COMMAND patch`): that chain passes through build options and CMake conditions this
    rule does not evaluate.
    """

    id = "NPU323"
    name = "program-missing-in-image"
    severity = Severity.ERROR
    title = "Image build runs a program its image does not have"
    kinds = frozenset({ASCEND_DOCKERFILE, DOCKERFILE, SHELL})
    context_kinds = frozenset({ASCEND_DOCKERFILE, DOCKERFILE, SHELL})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        for path in _dockerfiles(ctx):
            if not ctx.has_kind(path, ASCEND_DOCKERFILE):
                continue
            src = ctx.source(path)
            if src is None:
                continue
            df = ctx.dockerfile(src)
            for m in missing_programs(ctx, path, df):
                hit = _hit(ctx, path, m)
                if hit is not None:
                    yield hit


def _dockerfiles(ctx: Context) -> list[str]:
    """The Dockerfiles a finding can come from, in path order. In an audit, every one. On a change, a finding needs
    an added line in its chain (the Dockerfile, or a script a RUN runs, directly or through other scripts): the
    touched Dockerfiles and those that name a touched script, or a script that names one, and so on (a script
    is always named by its file name); the others are not read."""
    dockerfiles = ctx.candidate_paths(frozenset({ASCEND_DOCKERFILE}))
    if ctx.audit:
        return dockerfiles
    names = touched_script_names(ctx)
    chosen = {p for p in dockerfiles if ctx.touched(p)}
    if names:
        shells = list(ctx.paths_of_kind(SHELL))
        frontier = set(names)
        while frontier:
            callers = {p.rsplit("/", 1)[-1] for p in ctx.paths_mentioning(sorted(frontier), shells)}
            frontier = callers - names
            names |= frontier
        chosen |= set(ctx.paths_mentioning(sorted(names), dockerfiles))
    return [p for p in dockerfiles if p in chosen]


def _hit(ctx: Context, path: str, m: Missing) -> Hit | None:
    facts = ctx.facts.image_programs
    package = install_name(facts, m.program, m.manager)
    chain = [*m.via[1:], m.call] if m.via else [m.call]
    where = (
        f"line {m.call.line} runs `{m.program}`"
        if not m.via
        else f"line {m.run_line} runs {m.call.path}, which calls `{m.program}` on its line {m.call.line}"
    )
    # A script that goes on after a failed command (no `set -e`) does not stop the build: it builds an image
    # without what the call was for.
    stops = (
        f"the image build stops with `{m.program}: command not found`"
        if not m.via
        else f"that call fails with `{m.program}: command not found` (the build stops, or, where the script goes on "
        "after a failed command, the image lacks what it was for)"
    )
    lines = [(path, m.run_line), (path, m.from_line), *((c.path, c.line) for c in (*m.via, m.call))]
    if m.install_line is not None:
        lines.append((path, m.install_line))
    caused = any(ctx.is_added_line(p, n) for p, n in lines)
    if not caused:
        return None
    related = tuple(Related(c.path, c.line, f"calls `{m.program}`") for c in chain if c.path != path)
    if m.install_line is not None:
        return Hit(
            path,
            m.install_line,
            f"`{m.program}` is not in this image: {m.image} ({m.family.name}) does not ship it and this install "
            f"leaves it out, but {where}, so {stops}. Add "
            f"`{package}` to this install.",
            related=related,
            caused_by_change=True,
            cause=f"{m.image} {m.program}",
        )
    how = f"yum install -y {package}" if m.manager == "rpm" else f"apt-get update && apt-get install -y {package}"
    return Hit(
        path,
        m.run_line,
        f"`{m.program}` is not in this image: {m.image} ({m.family.name}) does not ship it and no earlier step of "
        f"this stage installs it, but {where}, so {stops}. "
        f"Install it first (`{how}`).",
        related=related,
        caused_by_change=True,
        cause=f"{m.image} {m.program}",
    )
