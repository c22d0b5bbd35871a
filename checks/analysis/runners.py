"""The Ascend runner catalog and every job of a revision that runs on an Ascend runner."""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from npu_review.checks.analysis.workflows import workflow_at, workflow_paths
from npu_review.checks.context import Context
from npu_review.checks.parsers.gha.runners import ProjectLabel, Runner, RunnerCatalog, runner_label_sets

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Job, Workflow

# Where a project lists its runner labels: actionlint's config and runner-label JSON files under .github/.
ACTIONLINT_CONFIGS = (".github/actionlint.yaml", ".github/actionlint.yml")
LABEL_FILE_GLOBS = (".github/**/*runner*.json", ".github/**/*label*.json")
_NPU_KEYS = ("npu_num", "npus", "npu_count", "num_npus", "cards")
_CHIP_KEYS = ("chip", "device", "soc")
_NO_NPU_CHIPS = frozenset({"cpu", "x86", "amd64", "arm64", "none"})


def runner_catalog(ctx: Context) -> RunnerCatalog:
    """The facts' runner labels plus the labels the project lists itself (at head and at the reference revision;
    what the reference revision says about a label wins)."""

    def build() -> RunnerCatalog:
        listed = {**project_labels(ctx, "head"), **project_labels(ctx, ctx.reference_rev)}
        return RunnerCatalog(ctx.facts.ascend_runners, listed)

    return ctx.memo(("runner-catalog", "", ""), build)


def project_labels(ctx: Context, rev: str) -> dict[str, ProjectLabel]:
    """Runner labels listed by `.github/actionlint.yaml` (`self-hosted-runner: labels:`) and by runner-label JSON
    files (`{"<label>": {"chip": "a2", "npu_num": 4}, ...}`) at `rev`; what a JSON file says wins."""
    return ctx.memo(("project-runner-labels", rev, ""), lambda: _project_labels(ctx, rev))


def _project_labels(ctx: Context, rev: str) -> dict[str, ProjectLabel]:
    families = ctx.facts.ascend_runners.families
    devices = set(families.values())
    out: dict[str, ProjectLabel] = {}
    files = ctx.paths_matching(ACTIONLINT_CONFIGS + LABEL_FILE_GLOBS, rev)
    for path in sorted(files, key=lambda p: p.endswith(".json")):  # JSON last: its facts win
        src = ctx.source_at(path, rev)
        if src is None:
            continue
        if path in ACTIONLINT_CONFIGS:
            from npu_review.checks.parsers.yamlmarks import parse as parse_yaml  # (PyYAML: where a file is read)

            doc = parse_yaml(src.text)
            node = doc.root.get("self-hosted-runner") if doc.root is not None and doc.root.is_map else None
            labels = node.get("labels") if node is not None and node.is_map else None
            for item in labels.items if labels is not None and labels.is_seq else []:
                if item.is_scalar and item.value.strip():
                    out[item.value.strip()] = ProjectLabel(item.value.strip(), None, None, True, path)
            continue
        try:
            data = json.loads(src.text)
        except ValueError:
            continue
        if not isinstance(data, dict):
            continue
        for label, spec in data.items():
            if not isinstance(label, str) or not isinstance(spec, dict):
                continue
            count = next((spec[k] for k in _NPU_KEYS if isinstance(spec.get(k), int)), None)
            chip = next((str(spec[k]).lower() for k in _CHIP_KEYS if isinstance(spec.get(k), str)), None)
            if count is None and chip is None:
                continue
            npu = not (chip in _NO_NPU_CHIPS or (chip is None and count == 0))
            device = families.get(chip) if chip is not None else None
            if device is None and chip in devices:
                device = chip
            out[label] = ProjectLabel(label, device, count if count else None, npu, path)
    return out


@dataclass(frozen=True)
class AscendJob:
    """A job whose `runs-on` names a self-hosted Ascend runner (one entry per distinct label set)."""

    path: str
    job: str
    runner: Runner
    line: int  # the `runs-on` line


def runner_jobs(ctx: Context, rev: str) -> list[AscendJob]:
    """Every job of every workflow at `rev` that runs on an Ascend runner (memoised)."""
    return ctx.memo(("ascend-jobs", rev, ""), lambda: _ascend_jobs(ctx, rev))


def _ascend_jobs(ctx: Context, rev: str) -> list[AscendJob]:
    catalog = runner_catalog(ctx)
    out: list[AscendJob] = []
    for path in workflow_paths(ctx, rev):
        out.extend(ctx.of_blob("ascend-jobs-of-file", path, rev, partial(_file_jobs, ctx, catalog, path)))
    return out


def _file_jobs(ctx: Context, catalog: RunnerCatalog, path: str, rev: str) -> list[AscendJob]:
    wf = workflow_at(ctx, path, rev)
    if wf is None:
        return []
    out: list[AscendJob] = []
    for job in wf.jobs.values():
        node = job.node.get("runs-on")
        if node is not None:
            out.extend(AscendJob(path, job.id, runner, node.line) for runner in job_runners(catalog, wf, job))
    return out


def job_runners(catalog: RunnerCatalog, wf: Workflow, job: Job) -> list[Runner]:
    """The distinct Ascend runners a job runs on over its matrix legs (one AscendJob of `runner_jobs` each)."""
    if job.node.get("runs-on") is None:
        return []
    out: list[Runner] = []
    seen: set[str] = set()
    for labels in runner_label_sets(wf, job):
        runner = catalog.of(labels) if labels is not None else None
        if runner is not None and runner.label not in seen:
            seen.add(runner.label)
            out.append(runner)
    return out
