"""The Ascend runner catalog and every job of a revision that runs on an Ascend runner."""

from __future__ import annotations

from dataclasses import dataclass

from checks.context import Context
from checks.indexes.workflows import workflow_at, workflow_paths
from checks.parsers.gha.runners import Runner, RunnerCatalog, runner_label_sets


def runner_catalog(ctx: Context) -> RunnerCatalog:
    return ctx.memo(("runner-catalog", "", ""), lambda: RunnerCatalog(ctx.facts.ascend_runners))


@dataclass(frozen=True)
class AscendJob:
    """A job whose `runs-on` names a self-hosted Ascend runner (one entry per distinct label set)."""

    path: str
    job: str
    runner: Runner
    line: int  # the `runs-on` line


def ascend_jobs(ctx: Context, rev: str) -> list[AscendJob]:
    """Every job of every workflow at `rev` that runs on an Ascend runner (memoised)."""
    return ctx.memo(("ascend-jobs", rev, ""), lambda: _ascend_jobs(ctx, rev))


def _ascend_jobs(ctx: Context, rev: str) -> list[AscendJob]:
    catalog = runner_catalog(ctx)
    out: list[AscendJob] = []
    for path in workflow_paths(ctx, rev):
        wf = workflow_at(ctx, path, rev)
        if wf is None:
            continue
        for job in wf.jobs.values():
            node = job.node.get("runs-on")
            if node is None:
                continue
            seen: set[str] = set()
            for labels in runner_label_sets(wf, job):
                runner = catalog.of(labels) if labels is not None else None
                if runner is not None and runner.label not in seen:
                    seen.add(runner.label)
                    out.append(AscendJob(path, job.id, runner, node.line))
    return out
