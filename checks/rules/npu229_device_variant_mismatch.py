"""NPU229: a doc section, tab or CI matrix entry for one device uses another device's variant, or never passes
its device on to the build."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks.analysis.device import ascend_jobs, device_at, doc_regions, image_device, npu_project
from npu_review.checks.analysis.stacks import job_legs
from npu_review.checks.analysis.vllm_launches import ascend_text
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, DOCS, WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.gha.workflow import Job, Workflow
from npu_review.checks.rule import Hit, Rule

# An image reference with a tag: `quay.io/ascend/vllm-ascend:v0.11.0rc0-a3`, `${REGISTRY}/x/y:tag` left out.
_IMAGE = re.compile(r"(?<![\w/.$-])((?:[\w.-]+(?::\d+)?/)+[\w.-]+):([\w][\w.-]{0,127})(?![\w.-]*/)")
# A tag token that names a device (`:v0.11.0rc0-a3-…`, `-910b-`): what a finding needs somewhere in the text.
_DEVICE_TAG = re.compile(r"[-:](?:a2|a3|910b|310p|a5|950)(?:-|\b)", re.IGNORECASE)
# A docs substitution inside a tag (`{{ vllm_ascend_version }}-a3`, `|version|-a3`): a known text for the match.
_TEMPLATE = re.compile(r"\{\{\s*\w+\s*\}\}|\|[\w-]+\|")
# A command that compiles what the job packages.
_BUILD = re.compile(
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
      release matrix, so one hardware's package held the other's ops (fixed in 7a65ba0).

    Checked: in an Ascend doc, an image reference whose tag names one device (`-a3`, `-910b`, `-310p`) inside a
    tab item, heading or bold label (`**A2 series**`) that names another; in an Ascend workflow, a job whose
    matrix has a device axis (values `910b`, `a3`, ...) that its steps use (package names, the container image)
    while none of its build steps (`build*.sh`, cmake, setup.py, `pip wheel`) reads it, in its command or in an
    `if:`: every entry then builds the same thing and packages it under different devices' names.

    Not reported: tags that name no device (the A2 image of vllm-ascend has no device token) or several, regions
    that name several devices, jobs whose environment passes the device on (`env:` from the matrix), and
    builds a step selects per device with `if: matrix.<axis> == ...`.

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
    argument), or give each device its own build step with an `if:`.
    """

    id = "NPU229"
    name = "device-variant-mismatch"
    severity = Severity.WARNING
    title = "A doc section, tab or CI matrix entry for one device uses another device's image or build"
    kinds = frozenset({DOCS, WORKFLOW, ASCEND_WORKFLOW})

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if DOCS not in src.kinds or not _DEVICE_TAG.search(src.text):
            return  # the quick no: no image tag here names a device
        if not (ascend_text(ctx, src.text) or npu_project(ctx)):
            return
        regions = doc_regions(ctx, src)
        if not regions:
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
                    region = next(r for r in reversed(regions) if r[0] <= n <= r[1] and r[2] == device)
                    commented = line.lstrip().startswith("#")
                    found.setdefault((region[0], region[1]), []).append((n, m.group(0), named, commented))
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
        if job.matrix_node is None or not _device_axes(ctx, job):
            return
        if ASCEND_WORKFLOW in src.kinds or npu_project(ctx):
            only = ascend_jobs(ctx, src.path)
            if only is not None and job.id not in only:
                return
        elif not any(leg.image for leg in job_legs(ctx, wf, job)):
            return  # not an Ascend job: neither the workflow nor the job's container (a CANN image) says so
        yield from _matrix_device_unused(ctx, src, job)


def _device_axes(ctx: Context, job: Job) -> list[tuple[str, list[str]]]:
    combos = job.combinations()
    if not combos:
        return []
    tokens = {t.lower(): d for d, toks in ctx.facts.ascend_devices.tag_tokens.items() for t in toks}
    out = []
    for axis in dict.fromkeys(k for c in combos for k in c):
        values = list(dict.fromkeys(c[axis] for c in combos if axis in c))
        devices = {tokens.get(v.lower()) for v in values}
        if len(values) >= 2 and None not in devices and len(devices) >= 2:
            out.append((axis, values))
    return out


def _matrix_device_unused(ctx: Context, src: SourceFile, job: Job) -> Iterator[Hit]:
    axes = _device_axes(ctx, job)
    if not axes:
        return
    for axis, values in axes:
        ref = re.compile(rf"matrix\.{re.escape(axis)}\b|matrix\[['\"]{re.escape(axis)}['\"]\]")
        if any(ref.search(v.value) for v in job.env.values() if v.is_scalar):
            continue  # the job's environment carries the device to every step
        builds: list[tuple[int, int]] = []  # (first, last) build command lines of steps that do not read the axis
        reads = used = False
        for step in job.steps:
            text = "\n".join(src.line(n) for n in range(step.node.line, step.node.end_line + 1))
            mentions = bool(ref.search(text))
            if step.run is None:
                used = used or mentions
                continue
            lines = [n for n, t in step.run.text_lines() if _BUILD.search(t)]
            if lines:
                if mentions:
                    reads = True
                else:
                    builds.append((lines[0], lines[-1]))
            else:
                used = used or mentions
        if reads or not builds or not used:
            continue
        first, last = builds[0]
        shown = ", ".join(f"`{v}`" for v in values)
        yield Hit(
            src.path,
            first,
            f"The job's matrix builds for {shown} (`{axis}`), and its steps name their output after it, but no "
            f"build step reads `matrix.{axis}`: every entry runs this same build, with the script's default SOC, "
            "and packages it as a different device's. Pass the entry's device (its SOC argument) to the build, "
            f"or split the build into steps with `if: matrix.{axis} == ...`.",
            end_line=last,
            related=(Related(src.path, job.matrix_node.line, "the matrix"),) if job.matrix_node is not None else (),
        )
