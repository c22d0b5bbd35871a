"""Device context: where a file, a branch of a script or a CI job runs (on NPU or not), and which Ascend device a
file, an image or a setting is for (A2 / A3 by file name, FROM tag, SOC_VERSION), from the facts' vocabulary.

Each of these is decided here once: a rule asks `npu_reading` for the NPU reading of a script, `ascend_jobs`
for the NPU jobs of a workflow, `devices` for the device vocabulary; it never re-derives them."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from dataclasses import dataclass

from npu_review.checks import ascend, kinds
from npu_review.checks.analysis.workflows import workflow
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts.schema import DockerfileNames, SocVersions
from npu_review.checks.parsers.shell import View, npu_view


@dataclass(frozen=True)
class Devices:
    """The device vocabulary of the facts' `soc_versions` and `dockerfile_names`."""

    soc: dict[str, frozenset[str]]
    default: dict[str, str]
    from_tokens: dict[str, frozenset[str]]
    file_tokens: dict[str, frozenset[str]]
    ops: dict[str, str]

    @classmethod
    def load(cls, soc: SocVersions, names: DockerfileNames) -> Devices:
        def lower_set(value: Iterable[str]) -> frozenset[str]:
            return frozenset(v.lower() for v in value)

        return cls(
            soc={"a2": lower_set(soc.a2), "a3": lower_set(soc.a3)},
            default=dict(soc.default),
            from_tokens={d: lower_set(soc.from_tokens.get(d, ())) for d in ("a2", "a3")},
            file_tokens={d: lower_set(names.device_tokens.get(d, ())) for d in ("a2", "a3")},
            ops=dict(soc.ops_packages),
        )

    def of_file(self, path: str) -> str | None:
        """The device a file name declares (`Dockerfile.ascend_9.1.0_a3` -> a3); None when none or both."""
        tokens = set(re.split(r"[._-]", posixpath.basename(path).lower()))
        found = {d for d, toks in self.file_tokens.items() if tokens & toks}
        return found.pop() if len(found) == 1 else None

    def of_tag(self, tag: str) -> str | None:
        tokens = set(tag.lower().split("-"))
        found = {d for d, toks in self.from_tokens.items() if tokens & toks}
        return found.pop() if len(found) == 1 else None

    def of_soc(self, value: str) -> str | None:
        found = {d for d, vals in self.soc.items() if value.lower() in vals}
        return found.pop() if len(found) == 1 else None


def devices(ctx: Context) -> Devices:
    facts = ctx.facts
    return ctx.memo(("facts", "devices", ""), lambda: Devices.load(facts.soc_versions, facts.dockerfile_names))


def dockerfile_device(ctx: Context, path: str, dev: Devices) -> str | None:
    """The one device of the file's FROM tags (ARG defaults substituted); None when none or several."""
    src = ctx.source(path)
    if src is None:
        return None
    found = set()
    for instr in ctx.dockerfile(src).of("FROM"):
        tag = instr.image.tag if instr.image is not None else None
        device = dev.of_tag(tag) if tag else None
        if device is not None:
            found.add(device)
    return found.pop() if len(found) == 1 else None


def npu_reading(ctx: Context, src: SourceFile, rev: str = "head", assume_npu: bool = False) -> View | None:
    """The script as it runs on NPU (arms for another device left out), None when it never runs there: a script
    of kind `npu_script` (by its path or its content) is NPU throughout; another one only when it selects the NPU
    itself (a device variable or override set to npu). `assume_npu`: the script is run by an NPU script."""
    kinds_ = src.kinds | {kinds.NPU_SCRIPT} if assume_npu else src.kinds
    return npu_view(ctx.shell(src, rev), kinds_, ctx.facts.ascend_values.device_key, ctx.facts.launchers)


def ascend_jobs(ctx: Context, path: str, rev: str = "head") -> frozenset[str] | None:
    """The jobs of an Ascend workflow that are Ascend jobs themselves, None for all of them: a workflow Ascend by
    its path (or in an Ascend-only repository) is Ascend throughout; in one found by content (a `ci.yml` with
    one NPU job among CPU jobs), only the jobs whose own text shows it, or all when none does (the workflow
    level did)."""
    return ctx.memo(("ascend-jobs-of", rev, path), lambda: _ascend_jobs(ctx, path, rev))


def _ascend_jobs(ctx: Context, path: str, rev: str) -> frozenset[str] | None:
    if ctx.kindmap.has(path, kinds.ASCEND_WORKFLOW) or ctx.ascend_only():
        return None
    wf = workflow(ctx, path, rev)
    src = ctx.source(path, rev)
    if wf is None or src is None:
        return None
    m = ascend.markers(ctx.facts.ascend_content)
    found = frozenset(
        job.id
        for job in wf.jobs.values()
        if ascend.workflow_is_ascend("\n".join(src.line(n) for n in range(job.node.line, job.node.end_line + 1)), m)
    )
    return found or None


def npu_project(ctx: Context) -> bool:
    """The repository is about Ascend as a whole: Ascend-only by its package's name (`vllm_ascend/`), or its own
    top-level package is an Ascend package by the install markers (`torch_npu/` of Ascend/pytorch)."""

    def decide() -> bool:
        if ctx.ascend_only():
            return True
        m = ascend.markers(ctx.facts.ascend_content)
        if m.install is None:
            return False
        for path in ctx.head_paths():
            parts = path.split("/")
            top = len(parts) == 2 or (len(parts) == 3 and parts[0] == "src")
            if parts[-1] == "__init__.py" and top and m.install.fullmatch(parts[-2]):
                return True
        return False

    return ctx.memo(("npu-project", "head", ""), decide)
