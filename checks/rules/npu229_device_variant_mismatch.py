"""NPU229: a doc section, tab or CI matrix entry for one device uses another device's variant, never passes
its device on to the build, or a CI job for one device runs a build script whose default SOC is another's."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import (
    ascend_jobs,
    device_at,
    device_named,
    doc_regions,
    image_device,
    job_device,
    npu_project,
    script_default_soc,
    value_device,
)
from npu_review.checks.analysis.runners import ACTIONLINT_CONFIGS, LABEL_FILE_GLOBS
from npu_review.checks.analysis.scripts import step_unit, unit_script_calls
from npu_review.checks.analysis.stacks import job_legs
from npu_review.checks.analysis.vllm_launches import ascend_text
from npu_review.checks.analysis.workflows import workflow
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.facts.cann_files import cann_files
from npu_review.checks.facts.cann_files import parse as parse_cann_files
from npu_review.checks.kinds import ASCEND_WORKFLOW, DOCS, WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.gha.calls import declared, local_target
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

# An image reference with a tag: `quay.io/ascend/vllm-ascend:v0.11.0rc0-a3`, `${REGISTRY}/x/y:tag` left out.
_IMAGE = lazyre.compile(r"(?<![\w/.$-])((?:[\w.-]+(?::\d+)?/)+[\w.-]+):([\w][\w.-]{0,127})(?![\w.-]*/)")
# A tag token that names a device (`:v0.11.0rc0-a3-…`, `-910b-`): what a finding needs somewhere in the text.
_DEVICE_TAG = lazyre.compile(r"[-:](?:a2|a3|910b|310p|a5|950)(?:-|\b)", re.IGNORECASE)
# A docs substitution inside a tag (`{{ vllm_ascend_version }}-a3`, `|version|-a3`): a known text for the match.
_TEMPLATE = lazyre.compile(r"\{\{\s*\w+\s*\}\}|\|[\w-]+\|")
# A command that compiles what the job packages.
_BUILD = lazyre.compile(
    r"(?:^|[\s;&|(])(?:bash\s+|sh\s+|\./)?[\w./-]*build[\w.-]*\.sh\b|\bcmake\b|\bsetup\.py\b|"
    r"\bbdist_wheel\b|\bpip3?\s+wheel\b|\bpython3?\s+-m\s+build\b"
)


class DeviceVariantMismatch(Rule):
    """A doc section, tab or CI matrix entry for one Ascend device uses another device's variant.

    Why: A2 and A3 machines need their own images (an A3 image is built with the A3 SOC and ops packages) and
    their own builds (kernels are compiled for one SOC). A guide's A2 tab that pulls the A3 image, or a release
    job whose `910b` and `a3` matrix entries both run the same build command, hands one device's binaries to
    the other:
    * vllm-ascend's DeepSeek-V3.2 guide told A2 users to pull `v0.11.0rc0-a3-deepseek-v3.2-exp` in its "A2
      series" tab (fixed in 2dde126);
    * sgl-kernel-npu built its custom ops without a SOC argument for both the `910b` and the `a3` entries of its
      release matrix, so one hardware's package held the other's ops (fixed in 7a65ba0);
    * its A2 build-cache job (runner `linux-aarch64-a2-8`, image `cann:8.5.0-910b-…`) ran plain `bash build.sh`,
      whose SOC with no argument was the A3 one (`SOC_VERSION="${1:-Ascend910_9382}"`), so A2 pull requests
      restored an A3 wheel (fixed in afe64f4).
    A build script's default SOC is one device's: a job for another device that gives it no argument builds the
    wrong one. Which SOC names which device, and which runner labels and CANN image tags name a device, are the
    facts' `soc_versions` (vllm-ascend's SOC table, verl's and sgl-kernel-npu's builds), `ascend_devices` and
    `ascend_runners`; what CANN's toolkit `set_env.sh` sets when a script sources it is `cann_shell`'s.

    A guide's part for one device that installs another device's CANN operator package hands the reader
    kernels of another SOC: cann-recipes' 310P recipes listed `Ascend-cann-kernels-310b_…` (the 310B package),
    and its A3-only guides `Ascend-cann-kernels-${chip_type}_…`, a naming CANN ships no A3 package under (A3's
    is `Atlas-A3-cann-kernels_…`, and from 8.5.0 `Ascend-cann-A3-ops_…`). Which package names which device is
    the facts' `cann_packages`.

    Checked: in an Ascend doc, a CANN operator package file name in a part for one device (as below, or the
    whole doc from a supported-products section, `## 支持的产品型号` / `## Supported Products`, that lists that
    device alone, not a table) when the package is another device's, or, with the device left to a variable,
    when its naming has no package for this device. Not reported: a line that names packages of several
    devices or the package's own device (`A3 users: Atlas-A3-cann-kernels_…`). The same part's device names
    a heading's, label's or tab's words even run into Chinese ones (`在昇腾310P上`). An image reference whose
    tag names one device (`-a3`, `-910b`, `-310p`) inside a tab item, heading or bold label (`**A2 series**`)
    that names another (not an image under a label of its own device, `# A2 x86` over its pull in a list of
    one image per device); in an Ascend workflow, a job whose
    matrix has a device axis (values `910b`, `a3`, `ascend910b1`, `ascend910_93`, ...) that its steps use to
    name what they package or push (a package name, an image tag, an artifact, or the job's name when it
    publishes) while none of its build steps (`build*.sh`, cmake, setup.py, `pip wheel`, `docker build`,
    docker/build-push-action) reads it, in its command, `env:`, `if:` or the action's inputs other than
    `tags:`: every entry then builds the same thing and publishes it under different devices' names. A matrix
    job that calls a local reusable workflow that builds or releases, with no `matrix.<axis>` in its `with:`,
    is the same mistake. A job indented under another one by mistake is read as the job it was meant to be.
    A job whose runner and CANN container image name one device (and no other) that runs a repository script
    with no argument, when that script's SOC with no argument is another device's: only literal assignments
    count, on the path a run without arguments takes (`while getopts` and loops over `"$@"` not entered,
    `${1:-X}` giving X, an `if` or `case` on known values taking its branch).

    Not reported: tags that name no device (the A2 image of vllm-ascend has no device token) or several, regions
    that name several devices; jobs that pass the device on to every step (`env:`, `defaults:`, the container's
    `env:`) or run each entry on its device's machine (`runs-on:` from the matrix, where a build finds its SOC),
    builds a step selects per device with `if: matrix.<axis> == ...`, a step before the build that reads the
    device for more than printing it (`>> $GITHUB_ENV`, a config file, an action's input), a step's `name:`
    alone, test jobs (their legs run the same tests), and a called workflow that tests or has a device matrix
    of its own. A script whose default SOC cannot be told (the caller's `${SOC_VERSION:-…}`, a command's
    output, a function, a test on anything else whose branches name different devices, a file it sources, a
    usage check that exits without an argument), a call with any argument, a job whose text names the script's
    device (it builds that package on purpose) or that runs in a `working-directory:`.

    Bad (`docs/tutorials/deepseek.md`):
        ::::{tab-item} A2 series

        ```bash
        export IMAGE=quay.io/ascend/vllm-ascend:v0.11.0rc0-a3-deepseek-v3.2-exp
        ```

        ::::

    Good:
        ::::{tab-item} A2 series

        ```bash
        export IMAGE=quay.io/ascend/vllm-ascend:v0.11.0rc0-deepseek-v3.2-exp
        ```

        ::::

    Fix: use the image built for the section's device; pass the matrix entry's device to the build (its SOC
    argument), or give each device its own build step with an `if:`; give a build script the argument that
    selects the job's device when its default SOC is another's.
    """

    id = "NPU229"
    name = "device-variant-mismatch"
    severity = Severity.WARNING
    title = "A doc section, tab, CI matrix entry or CI job for one device uses another device's image or build"
    kinds = frozenset({DOCS, WORKFLOW, ASCEND_WORKFLOW})
    named_suffixes = (".sh", ".bash")  # the build script a job runs, for the SOC it builds with no argument
    context_kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW})  # the reusable workflow a matrix job calls
    context_triggers = frozenset({WORKFLOW, ASCEND_WORKFLOW})  # a doc's check reads no other file

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return ACTIONLINT_CONFIGS + LABEL_FILE_GLOBS  # the runner labels the project lists (their devices)

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if DOCS not in src.kinds:
            return
        images = _DEVICE_TAG.search(src.text) is not None
        packages = "_linux" in src.text and "cann" in src.text  # a CANN package file name (`…_8.2.RC1_linux-…`)
        if not (images or packages):
            return  # the quick no: no image tag here names a device, no CANN package is named
        if not (ascend_text(ctx, src.text) or npu_project(ctx)):
            return
        regions = doc_regions(ctx, src)
        if not regions:
            return
        if packages:
            yield from _operators_of_another_device(ctx, src, regions)
        if not images:
            return
        found: dict[tuple[int, int], list[tuple[int, str, str, bool]]] = {}
        for n, line in enumerate(src.lines, 1):
            if ":" not in line:
                continue
            device = device_at(regions, n)
            if device is None:
                continue
            for m in _IMAGE.finditer(_TEMPLATE.sub("0", line)):
                named = image_device(ctx, m.group(2))
                if named is not None and named != device and device in ctx.facts.ascend_devices.tag_tokens:
                    if _labelled(ctx, src.lines, n, named):
                        continue  # `# A2 x86` over it: one of the images a list gives per device, this one for A2
                    commented = line.lstrip().startswith("#")
                    found.setdefault(_region_of(regions, n, device), []).append((n, m.group(0), named, commented))
        for (first, _last), uses in found.items():
            live = [u for u in uses if not u[3]] or uses
            for n, image, named, _c in live:
                device = device_at(regions, n)
                tokens = {t.lower() for t in ctx.facts.ascend_devices.tag_tokens[named]}
                token = next((t for t in image.rsplit(":", 1)[-1].lower().split("-") if t in tokens), named)
                yield Hit(
                    src.path,
                    n,
                    f"This part of the doc is for {str(device).upper()} (line {first}), but `{image}` is the "
                    f"{named.upper()} image (its tag's `{token}` token): a reader on {str(device).upper()} "
                    "pulls an image built for another device's SOC and ops. Use the image built for this "
                    "device.",
                    related=(Related(src.path, first, "the section"),),
                )

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if ".sh" in src.text or ".bash" in src.text:
            yield from _default_soc_of_another_device(ctx, src, wf, job)
        if job.matrix_node is None or not _device_axes(ctx, job):
            return
        if ASCEND_WORKFLOW in src.kinds or npu_project(ctx):
            only = ascend_jobs(ctx, src.path)
            if only is not None and job.id not in only:
                return
        elif not any(leg.image for leg in job_legs(ctx, wf, job)):
            return  # not an Ascend job: neither the workflow nor the job's container (a CANN image) says so
        yield from _matrix_device_unused(ctx, src, job)


def _region_of(regions: list[tuple[int, int, str]], n: int, device: str) -> tuple[int, int]:
    """(first, last) line of the innermost part of the doc around line `n` that is for `device` (device_at's)."""
    return next((r[0], r[1]) for r in reversed(regions) if r[0] <= n <= r[1] and r[2] == device)


def _operators_of_another_device(ctx: Context, src: SourceFile, regions: list[tuple[int, int, str]]) -> Iterator[Hit]:
    """A CANN operator package (`Ascend-cann-kernels-310b_…`, `Ascend-cann-kernels-${chip_type}_…`) named in a part
    of the doc for one device, when the package is for another device, or its naming has no package for this
    device whatever the variable holds (A3's kernels are `Atlas-A3-cann-kernels_…`). A line that names packages
    of several devices, or names the package's device itself, is a list of one package per device: not judged."""
    cf = cann_files(ctx.facts)
    for n, line in enumerate(src.lines, 1):
        if "_linux" not in line:
            continue
        device = device_at(regions, n)
        if device is None:
            continue
        found = [(f, devs) for _off, f in parse_cann_files(line) if (devs := cf.operators_devices(f.stem)) is not None]
        if not found or len({devs for _f, devs in found}) > 1:
            continue
        named = device_named(ctx, line)  # `A3: Atlas-A3-cann-kernels_…` under an A2 heading: the line says whose
        for f, devs in found:
            if device in devs or named in devs:
                continue
            first = _region_of(regions, n, device)[0]
            shipped = " or ".join(f"`{s}` ({cf.stem_span(s)})" for s in cf.operators_for(device))
            use = f" CANN's operator package for {device.upper()} is {shipped}." if shipped else ""
            if "$" in f.stem:
                what = (
                    f"`{f.text}` is named as other devices' operator packages are: whatever the variable holds, "
                    f"CANN ships no {device.upper()} package of that name"
                )
            else:
                (other,) = devs
                what = (
                    f"`{f.text}` is the operator package of {other.upper()}: a reader on {device.upper()} "
                    "installs kernels built for another SOC"
                )
            yield Hit(
                src.path,
                n,
                f"This part of the doc is for {device.upper()} (line {first}), but {what}.{use}",
                related=(Related(src.path, first, "the section"),),
                cause=f"operators {f.stem} for {device}",
            )


def _labelled(ctx: Context, lines: list[str], n: int, device: str) -> bool:
    """Line `n` (1-based) carries, or the comment line right above it is, a label naming `device` (`# A2 x86` over
    `docker pull ...a2-x86...`): a list of images, one per device (xLLM-AI/xllm-docs' A3 guides list the A2 images
    too, each under its label; rs-r74, judged false four times)."""
    tokens = {t.lower() for t in ctx.facts.ascend_devices.tag_tokens.get(device, ())} | {device.lower()}
    line = lines[n - 1]
    notes = [line.split("#", 1)[1]] if "#" in line and not line.lstrip().startswith("#") else []
    above = lines[n - 2].strip() if n >= 2 else ""
    if above.startswith("#") or above.startswith("//"):
        notes.append(above.lstrip("#/ "))
    # (a label is a few words: a commented-out command above, `# export IMAGE=...-a3-...`, is no label)
    labels = [note for note in notes if len(note) <= 40 and not re.search(r"[/=:]", note)]
    return any(w in tokens for note in labels for w in re.findall(r"[a-z0-9]+", note.lower()))


def _device_axes(ctx: Context, job: Job) -> list[tuple[str, list[str]]]:
    """The matrix axes whose values all name an Ascend device (`910b`, `a3`, `ascend910b1`), at least two."""
    combos = job.combinations()
    if not combos:
        return []
    out = []
    for axis in dict.fromkeys(k for c in combos for k in c):
        values = list(dict.fromkeys(c[axis] for c in combos if axis in c))
        named = {value_device(ctx, v) for v in values}
        if len(values) >= 2 and None not in named and len(named) >= 2:
            out.append((axis, values))
    return out


# docker/build-push-action inputs that only name what it builds (an image tag, a label, a cache scope).
_NAMING_INPUTS = frozenset({"tags", "labels", "annotations", "outputs", "cache-from", "cache-to"})
# A docker/podman image build in a `run:` line, and its tag options (which name the image, nothing more).
_DOCKER_BUILD = lazyre.compile(r"\b(?:docker|podman|nerdctl)\s+(?:buildx\s+)?build\b")
_TAG_OPTION = lazyre.compile(r"(?:^|\s)(?:-t|--tag)(?:\s+|=)(?:\"[^\"]*\"|'[^']*'|(?:\$\{\{.*?\}\}|[^\s\"'])+)")
# Where a node's content starts on its first line: after the indentation and any sequence dashes.
_LEAD = lazyre.compile(r"[ ]*(?:-[ ]+)*")
# Commands that only name or publish an image already built (`docker push repo:tag-a3`).
_DOCKER_NAMING = lazyre.compile(r"^\s*(?:docker|podman|nerdctl)\s+(?:push|tag|image\s+(?:push|tag))\b")
# A line that only prints (`echo "Building for ${{ matrix.soc }}"`): before the build, it configures nothing.
_PRINT = lazyre.compile(r"^\s*(?:echo|printf)\b[^>|]*(?:>&2)?\s*$")
# A job that runs tests: its build serves the test, which runs the same everywhere, not a device's package.
_TESTS = lazyre.compile(r"\bpytest\b|\bpython3?\s+-m\s+(?:pytest|unittest)\b|\bctest\b")
# What makes a called workflow a build or a release: a build command, an image build or push, an upload.
_PUBLISHES = lazyre.compile(
    r"upload-artifact|action-gh-release|gh\s+release\s+upload|build-push-action|docker\s+push|twine\s+upload"
)


def _span(src: SourceFile, node: Node) -> range:
    """A node's own lines: its end mark may lie on the line that starts the next item or key (indented less
    than the node's content), and blank or comment lines may trail it."""
    first = src.line(node.line)
    lead = _LEAD.match(first)
    column = lead.end() if lead is not None else 0
    last = node.end_line
    while last > node.line:
        text = src.line(last)
        stripped = text.lstrip()
        if stripped and not stripped.startswith("#") and len(text) - len(stripped) >= column:
            break
        last -= 1
    return range(node.line, last + 1)


def _mentions(ref: re.Pattern[str], src: SourceFile, node: Node, skip: frozenset[int] = frozenset()) -> bool:
    return any(ref.search(src.line(n)) for n in _span(src, node) if n not in skip)


def _name_lines(src: SourceFile, node: Node) -> frozenset[int]:
    """A step's `name:` lines: a name that says the device builds nothing for it."""
    name = node.get("name") if node.is_map else None
    return frozenset(_span(src, name)) if name is not None else frozenset()


def _build_lines(step: Step) -> list[int]:
    if step.uses and step.uses.split("@")[0].endswith("docker/build-push-action"):
        key = step.node.key_node("uses")
        return [key.line if key is not None else step.line]
    if step.run is None:
        return []
    return [n for n, t in step.run.text_lines() if _BUILD.search(t) or _DOCKER_BUILD.search(t)]


def _step_reads(ref: re.Pattern[str], src: SourceFile, step: Step) -> tuple[bool, bool]:
    """(reads, names): whether a build step passes the axis to what it builds (its command, `env:`, `if:`, the
    action's inputs), and whether it only names the output after it (an image tag)."""
    skip = set(_name_lines(src, step.node))
    names = False
    with_node = step.node.get("with")
    if step.run is None and with_node is not None and with_node.is_map:
        for key, knode, value in with_node.entries():
            if key in _NAMING_INPUTS:
                lines = range(knode.line, _span(src, value)[-1] + 1)
                names = names or any(ref.search(src.line(n)) for n in lines)
                skip.update(lines)
    if step.run is not None:
        for n, text in step.run.text_lines():
            if not ref.search(text):
                continue
            untagged = _DOCKER_BUILD.search(text) is not None and not ref.search(_TAG_OPTION.sub(" ", text))
            if untagged or _DOCKER_NAMING.search(text):
                names = True
                skip.add(n)
    return _mentions(ref, src, step.node, frozenset(skip)), names


def _configures(ref: re.Pattern[str], src: SourceFile, step: Step) -> bool:
    """A step before the build that reads the axis for more than printing it (`>> $GITHUB_ENV`, a config file,
    an action's input, an `if:` that installs one device's package): the build may take the device from it."""
    if step.run is None:
        return True
    skip = _name_lines(src, step.node)
    run_lines = {n for n, _ in step.run.text_lines()}
    for n in _span(src, step.node):
        text = src.line(n)
        if n in skip or not ref.search(text):
            continue
        if n in run_lines and _PRINT.match(text):
            continue
        return True
    return False


def _matrix_device_unused(ctx: Context, src: SourceFile, job: Job) -> Iterator[Hit]:
    axes = _device_axes(ctx, job)
    if not axes:
        return
    job_text = "\n".join(src.line(n) for n in _span(src, job.node))
    if _TESTS.search(job_text):
        return  # a test job: its legs run the same tests, they package nothing for a device
    for axis, values in axes:
        ref = re.compile(rf"matrix\.{re.escape(axis)}\b|matrix\[['\"]{re.escape(axis)}['\"]\]")
        if _job_passes(ref, src, job):
            continue
        if job.node.get("uses") is not None:
            yield from _call_without_device(ctx, src, job, axis, values, ref)
            continue
        builds: list[tuple[int, int, bool]] = []  # (first, last, image?) build lines of steps not reading the axis
        reads = used = configured = False
        for step in job.steps:
            lines = _build_lines(step)
            if lines:
                step_reads, names = _step_reads(ref, src, step)
                if step_reads:
                    reads = True
                else:
                    builds.append((lines[0], lines[-1], _builds_image(step)))
                used = used or names
            elif _mentions(ref, src, step.node, _name_lines(src, step.node)):
                if not builds and not reads and _configures(ref, src, step):
                    configured = True
                else:
                    used = True
        if not used:  # a job named after the device that publishes what it built publishes it as that device's
            name = job.node.get("name")
            used = name is not None and _mentions(ref, src, name) and _PUBLISHES.search(job_text) is not None
        if reads or configured or not builds or not used:
            continue
        first, last, image = builds[0]
        shown = ", ".join(f"`{v}`" for v in values)
        if image:
            what = (
                "every entry builds this same image, from the same Dockerfile and build arguments, and pushes it "
                "under a different device's tag. Pass the entry's device to the build (a build argument the "
                "Dockerfile turns into its base image or SOC_VERSION, or a Dockerfile per device)"
            )
        else:
            what = (
                "every entry runs this same build, with the script's default SOC, and packages it as a different "
                "device's. Pass the entry's device (its SOC argument) to the build"
            )
        yield Hit(
            src.path,
            first,
            f"The job's matrix builds for {shown} (`{axis}`), and its steps name their output after it, but no "
            f"build step reads `matrix.{axis}`: {what}, or split the build into steps with "
            f"`if: matrix.{axis} == ...`.",
            end_line=last,
            related=(Related(src.path, job.matrix_node.line, "the matrix"),) if job.matrix_node is not None else (),
        )


def _builds_image(step: Step) -> bool:
    if step.run is None:
        return True  # docker/build-push-action
    return not any(_BUILD.search(t) for _, t in step.run.text_lines())


def _job_passes(ref: re.Pattern[str], src: SourceFile, job: Job) -> bool:
    """The job hands the axis to all of its steps or runs each entry on its device: `env:`, `runs-on:` (a
    device's machine, where a build finds its SOC), `defaults:`, the container's `env:` or `options:`."""
    if any(ref.search(v.value) for v in job.env.values() if v.is_scalar):
        return True
    for key in ("runs-on", "defaults", "services", "environment"):
        node = job.node.get(key)
        if node is not None and _mentions(ref, src, node):
            return True
    container = job.node.get("container")
    if container is not None and container.is_map:
        for key, _, value in container.entries():
            if key != "image" and _mentions(ref, src, value):
                return True
    return False


def _call_without_device(
    ctx: Context, src: SourceFile, job: Job, axis: str, values: list[str], ref: re.Pattern[str]
) -> Iterator[Hit]:
    """A matrix job that calls a local reusable workflow that builds or releases, passing nothing of the axis."""
    uses = job.node.get("uses")
    assert uses is not None
    for key in ("with", "secrets"):
        node = job.node.get(key)
        if node is not None and _mentions(ref, src, node):
            return
    target = local_target(uses.value, src.path, ctx.changeset.repository) if uses.is_scalar else None
    called = workflow(ctx, target) if target is not None else None
    if target is None or called is None:
        return
    called_src = ctx.source(target)
    if called_src is None or not (_PUBLISHES.search(called_src.text) or _BUILD.search(called_src.text)):
        return
    if _TESTS.search(called_src.text) or any(_device_axes(ctx, j) for j in called.jobs.values()):
        return  # it tests, or builds every device itself
    shown = ", ".join(f"`{v}`" for v in values)
    inputs = [p.name for p in declared(called, "workflow_call", "input")]
    device_inputs = [n for n in inputs if any(value_device(ctx, v) for v in re.split(r"[-_]", n.lower()))]
    device_inputs += [n for n in inputs if re.search(r"soc|device|npu|chip|hardware", n, re.I)]
    hint = (
        f"its `{device_inputs[0]}` input keeps its default in every entry"
        if device_inputs
        else "it declares no input that could take the device"
    )
    end = job.node.get("with")
    yield Hit(
        src.path,
        uses.line,
        f"The job's matrix runs for {shown} (`{axis}`), but its call of `{target}` passes no `matrix.{axis}` "
        f"({hint}): every entry runs the same build, with the default SOC, and releases it once per device. "
        f"Pass the entry's device to the called workflow (`with: {axis}: ${{{{ matrix.{axis} }}}}`) and build "
        "with it there.",
        end_line=end.end_line if end is not None else uses.line,
        related=(Related(src.path, job.matrix_node.line, "the matrix"),) if job.matrix_node is not None else (),
    )


def _default_soc_of_another_device(ctx: Context, src: SourceFile, wf: Workflow, job: Job) -> Iterator[Hit]:
    """A job that runs on one device and runs a repository script with no argument, whose SOC with no argument
    is another device's (checks.analysis.device.script_default_soc)."""
    if job.node.get("uses") is not None:
        return
    found = None
    for step in job.steps:
        unit = step_unit(src.path, step)
        if unit is None or _moved(step, job, wf):
            continue
        for call in unit_script_calls(ctx, unit):
            if call.args or call.how == "source":
                continue
            default = script_default_soc(ctx, call.target)
            if default is None:
                continue
            if found is None:
                found = job_device(ctx, wf, job)
                if found is None:
                    return
            device, how = found
            if default.device == device or _names_device(ctx, src, job, default.device):
                continue
            script = call.target.rsplit("/", 1)[-1]
            yield Hit(
                src.path,
                call.line,
                f"This job runs on {device.upper()} (its {how}), but it runs `{script}` with no argument, and "
                f"with none the script builds for `{default.value}` (`{default.name}`, {call.target}:"
                f"{default.line}), a SOC of {default.device.upper()}: the job builds and packages "
                f"{default.device.upper()} kernels that {device.upper()} cannot load. Pass the script the "
                f"argument that selects {device.upper()}.",
                related=(Related(call.target, default.line, "the default SOC"),) if default.line else (),
            )


def _moved(step: Step, job: Job, wf: Workflow) -> bool:
    """A `working-directory:` applies to the step: its script paths are not the repository root's."""
    return any(
        node is not None
        for node in (
            step.node.get("working-directory"),
            job.node.at("defaults", "run", "working-directory"),
            wf.root.at("defaults", "run", "working-directory"),
        )
    )


def _names_device(ctx: Context, src: SourceFile, job: Job, device: str) -> bool:
    """The job's text names `device` (`build-a3`, a cache key's `-a3-`): it builds that device's package on
    purpose, wherever it runs."""
    tokens = {t.lower() for t in ctx.facts.ascend_devices.tag_tokens.get(device, ())} | {device.lower()}
    text = "\n".join(src.line(n) for n in _span(src, job.node)).lower()
    return any(w in tokens for w in re.findall(r"[a-z0-9]+", text))
