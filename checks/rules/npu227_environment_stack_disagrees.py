"""NPU227: one environment (a CI job, an image build) states two values of one stack dimension."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import TYPE_CHECKING

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_jobs, npu_project
from npu_review.checks.analysis.stacks import JobLeg, Moved, Stated, arch_files, builds, job_legs, moved_commits
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_DOCKERFILE, ASCEND_WORKFLOW, DOCKERFILE, NPU_SCRIPT, SHELL, WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Job, Workflow

_ENV_KINDS = frozenset({DOCKERFILE, ASCEND_DOCKERFILE, WORKFLOW, ASCEND_WORKFLOW})
# A path into one Python's installation that ends in another Python's executable:
# `/opt/_internal/cpython-3.11.6/bin/pip3.10`, `/usr/local/python3.10/bin/python3.11`.
_MIXED_PY_PATH = lazyre.compile(
    r"(?<![\w.])(?P<path>/?(?:[\w.+-]+/)*?[\w.+-]*?(?:cpython-?|python|py)(?P<home>3\.\d+)[\w.+-]*"
    r"(?:/[\w.+-]+)*?/(?P<exe>(?:pip|python)(?P<minor>3\.\d+)))(?![\w.])"
)
_SHOWN = 3
# A sed substitution, `s/old/new/` with any delimiter (`s#old#new#`): its text is a pattern and a replacement.
_SED_EDIT = lazyre.compile(r"(?<![\w-])s([/#|:@,])(?:(?!\1).)*\1(?:(?!\1).)*\1")


def _sed_edits(line: str) -> list[tuple[int, int]]:
    """The spans of a line's sed substitutions (none on a line that runs no sed)."""
    if not re.search(r"\bsed\b", line):
        return []
    return [m.span() for m in _SED_EDIT.finditer(line)]


class EnvironmentStackDisagrees(Rule):
    """One environment states two values of one stack dimension: two CANN versions, two Pythons, two CPU
    architectures, or two commits of one component.

    Why: a CI job, an image build or a launch runs on one stack, but says so in several places: the container
    image's tag (`cann:9.0.0-a3-ubuntu22.04-py3.11`), the cache key its wheels are stored under, the Python its
    commands address, the platforms a build targets and the installers it downloads. An upgrade changes one of
    them and leaves the others, and the environment then mixes two stacks:
    * sgl-kernel-npu moved its jobs to the CANN 9.0.0 image while their build-cache key still said `cann8.5.0`,
      so the 9.0.0 jobs restored wheels built against 8.5.0 (fixed in e6851e8);
    * verl installed megatron-bridge with `uv pip install --python-version 3.12` inside its py3.11 Ascend
      container (fixed in 5b7c8cc);
    * verl's qwen3.5 image downloaded only the `linux-aarch64` CANN 8.5.2 runfiles while its workflow built it
      for `linux/amd64,linux/arm64` (fixed in 8504a87);
    * Ascend/pytorch linked `pip3.11` to `/opt/_internal/cpython-3.11.6/bin/pip3.10`, a file that does not exist
      (fixed in 5225d6a);
    * vllm-ascend's main2main bump moved CI and the docs to vLLM `4d51588` and left every Ascend image on
      `d886c26` (fixed in 0b24039).

    Checked: in an Ascend CI job, a `cann<version>` in a cache key, artifact name or env value against the CANN of
    the job's container image, and a Python the job's commands address (`--python-version 3.12` of a `pip
    install`, `python3.10 …`, `pip3.10 …`) against the container's `py3.N`; in an Ascend image built for several
    platforms (`platforms:` of docker/build-push-action, `docker buildx build --platform`), installers, wheels and
    archives for one architecture named literally in a RUN that does not pick the architecture itself; in
    Dockerfiles, scripts and workflows, a path into one Python's installation ending in another Python's
    executable; on a change, a commit pin (a hex sha) replaced in some Dockerfiles or workflows and left in others:
    the same component's pin (the new sha written where the old one was: `ARG VLLM_COMMIT=`, `git checkout`), not
    an action's (`uses: owner/action@<sha>`, CI's tooling, which projects bump workflow by workflow).

    Not reported: values that stay unknown (`${{ steps.x.outputs.cann }}`, `$ARCH`), jobs that set up another
    Python themselves (setup-python, `uv venv`, conda, an apt `python3.X`), a Python version the job names
    elsewhere too, `pip install --target` for another Python, RUN instructions that choose the architecture
    (`$(uname -m)`, `TARGETARCH`), stages pinned with `FROM --platform`, a `sed` substitution from one Python to
    the other (`s/python3.7/python3.9/g`), and in an audit, commit pins (which of two is meant is the change's to
    say).

    Bad (`.github/workflows/build.yml`):
        container:
          image: quay.io/ascend/cann:9.0.0-a3-ubuntu22.04-py3.11
        steps:
          - uses: actions/cache@v4
            with:
              path: output
              key: wheels-a3-cann8.5.0-${{ hashFiles('csrc/**') }}

    Good:
        container:
          image: quay.io/ascend/cann:9.0.0-a3-ubuntu22.04-py3.11
        steps:
          - uses: actions/cache@v4
            with:
              path: output
              key: wheels-a3-cann9.0.0-${{ hashFiles('csrc/**') }}

    Fix: bring the stale place to the environment's value (better, derive it from the one place that states
    it: the key from the image's CANN, the installer name from `$(uname -m)`), or build for one platform only.
    """

    id = "NPU227"
    name = "environment-stack-disagrees"
    severity = Severity.WARNING
    title = "One CI job or image build states two CANN versions, Pythons, architectures or commits"
    kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW, DOCKERFILE, ASCEND_DOCKERFILE, SHELL, NPU_SCRIPT})
    context_kinds = _ENV_KINDS

    # -- one job: its container against its cache keys and the Python its commands address --------------------
    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if ASCEND_WORKFLOW not in src.kinds and not npu_project(ctx):
            return
        only = ascend_jobs(ctx, src.path)
        if only is not None and job.id not in only:
            return
        legs = job_legs(ctx, wf, job)
        yield from _named_canns(ctx, src, legs)
        yield from _pythons(ctx, src, job, legs)

    # -- one file: a path that mixes two Pythons ---------------------------------------------------------------
    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "/" not in src.text or "3." not in src.text:
            return
        npu = bool(src.kinds & {ASCEND_DOCKERFILE, ASCEND_WORKFLOW, NPU_SCRIPT}) or npu_project(ctx)
        if not npu:
            return
        for n, line in enumerate(src.lines, 1):
            if "3." not in line or line.lstrip().startswith("#"):
                continue
            for m in _MIXED_PY_PATH.finditer(line):
                if m.group("home") == m.group("minor"):
                    continue
                if any(a <= m.start() < b for a, b in _sed_edits(line)):
                    continue  # `sed "s/python3.7/python3.9/g"`: an edit from one Python to the other, no path
                exe, home = m.group("exe"), m.group("home")
                fixed = m.group("path")[: m.start("minor") - m.start("path")] + home
                yield Hit(
                    src.path,
                    n,
                    f"`{m.group('path')}` is inside Python {home}'s installation but names `{exe}`, Python "
                    f"{m.group('minor')}'s executable: no such file is there, so whatever links or runs it gets "
                    f"nothing (or another Python). Write `{fixed}`.",
                    suggestion=line.replace(m.group("path"), fixed) if line.count(m.group("path")) == 1 else None,
                )

    # -- builds and pins across files --------------------------------------------------------------------------
    def check_project(self, ctx: Context) -> Iterable[Hit]:
        yield from _single_arch_installers(ctx)
        for moved in moved_commits(ctx, _ENV_KINDS):
            yield _moved(ctx, moved)


def _image(leg_image: tuple[Stated, ...], dim: str) -> Stated | None:
    return next((s for s in leg_image if s.dim == dim), None)


def _same_cann(image: str, named: str) -> bool:
    return image == named or image.startswith(named + ".")


def _named_canns(ctx: Context, src: SourceFile, legs: list[JobLeg]) -> Iterator[Hit]:
    seen: set[int] = set()
    for leg in legs:
        image = _image(leg.image, "cann")
        if image is None:
            continue
        for named in leg.named:
            if named.line in seen or _same_cann(image.value, named.value):
                continue
            seen.add(named.line)
            line = ctx.first_added(src.path, [named.line, image.line])
            said = f"This {named.how}" if line == named.line else f"The job's {named.how} (line {named.line})"
            there = f"a CANN {image.value} container" + (f" (line {image.line})" if line == named.line else "")
            yield Hit(
                src.path,
                line,
                f"{said} says CANN {named.value}, but the job runs in {there}: what it stores or restores under "
                "that name was "
                f"built for another CANN than the one it runs on. Derive the CANN in the {named.how} from the "
                f"container image, or bring the two to one version.",
                related=(
                    Related(src.path, image.line, "the container image")
                    if line == named.line
                    else Related(src.path, named.line, named.how),
                ),
            )


def _pythons(ctx: Context, src: SourceFile, job: Job, legs: list[JobLeg]) -> Iterator[Hit]:
    if not legs or not legs[0].pythons:
        return
    images = {s.value: s for leg in legs if (s := _image(leg.image, "python")) is not None}
    if len(images) != 1 or len(legs) != sum(1 for leg in legs if _image(leg.image, "python") is not None):
        return  # the container's Python is unknown in some leg, or differs between legs
    image = next(iter(images.values()))
    text = "\n".join(src.line(n) for n in range(job.node.line, job.node.end_line + 1))
    for stated in legs[0].pythons:
        if stated.value == image.value:
            continue
        said = len(re.findall(rf"(?<![\d.]){re.escape(stated.value)}(?!\d)", text))
        if said > sum(1 for s in legs[0].pythons if s.value == stated.value):
            continue  # the job names that Python elsewhere too (it may set it up): unknown
        if stated.how.startswith("`--python-version"):
            why = (
                f"{stated.how} makes pip resolve wheels for Python {stated.value}, but the job runs in a "
                f"py{image.value} container (line {image.line}): it installs packages built for another "
                "interpreter (or none that fit) into this one."
            )
        else:
            why = (
                f"{stated.how} addresses Python {stated.value}, but the job's container is py{image.value} "
                f"(line {image.line}): that command is not there, or installs into another interpreter than the "
                "one the job runs."
            )
        yield Hit(
            src.path,
            stated.line,
            f"{why} Use the container's Python ({image.value}), or a container with Python {stated.value}.",
            related=(Related(src.path, image.line, "the container image"),),
        )


def _single_arch_installers(ctx: Context) -> Iterator[Hit]:
    seen: set[tuple[str, str, int]] = set()
    for build in builds(ctx):
        if not (ctx.audit or ctx.touched(build.dockerfile) or ctx.touched(build.path)):
            continue  # the finding is on a line of the Dockerfile or of the build: on a change, one it added
        src = ctx.source(build.dockerfile)
        if src is None:
            continue
        if not (src.kinds & {ASCEND_DOCKERFILE} or npu_project(ctx)):
            continue
        key = (build.dockerfile, build.path, build.line)
        if key in seen:
            continue
        seen.add(key)
        files = arch_files(ctx.dockerfile(src))
        wrong = [f for f in files if any(a != f.arch for a in build.archs)]
        if not wrong:
            continue
        names = list(dict.fromkeys(f.name for f in wrong))
        shown = _listed([f"`{n}`" for n in names])
        missing = sorted(a for a in build.archs if any(f.arch != a for f in wrong))
        places = [(build.dockerfile, f.line) for f in wrong] + [(build.path, build.line)]
        path, line = next(((p, n) for p, n in places if ctx.is_added_line(p, n)), places[0])
        yield Hit(
            path,
            line,
            f"{build.path}:{build.line} builds `{build.dockerfile}` for `{build.platforms}`, but it installs "
            f"{shown}, built for {wrong[0].arch} only: the {', '.join(missing)} image gets a binary of another "
            "architecture, and its install fails or breaks at run time. Pick the file by `$(uname -m)` (or "
            "`$TARGETARCH`), or build for one platform.",
            related=tuple(Related(p, n, "") for p, n in places if (p, n) != (path, line)),
        )


def _component(ctx: Context, where: tuple[str, int], sha: str) -> str:
    src = ctx.source(where[0])
    text = src.line(where[1]) if src is not None else ""
    m = re.search(rf"([A-Za-z_][\w-]*)[\"']?\s*[:=]\s*[\[\"']?\s*{sha}", text)
    return f" (`{m.group(1)}`)" if m else ""


def _moved(ctx: Context, moved: Moved) -> Hit:
    path, line = moved.moved[0]
    shown = _listed([f"{p}:{n}" for p, n in moved.kept])
    what = _component(ctx, moved.kept[0], moved.old)
    verb = "pins" if len(moved.kept) == 1 else "pin"
    return Hit(
        path,
        line,
        f"This change moves the pinned commit `{moved.old[:12]}` to `{moved.new[:12]}` here, but {shown}{what} "
        f"still {verb} `{moved.old[:12]}`: CI and the images now build and test two different commits of one "
        "component. Move them too, or say in a comment why they stay.",
        related=tuple(Related(p, n, "still the old commit") for p, n in moved.kept),
    )


def _listed(items: list[str]) -> str:
    if len(items) > _SHOWN:
        return ", ".join(items[:_SHOWN]) + f" and {len(items) - _SHOWN} more"
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]
