"""NPU225: a `dorny/paths-filter` step runs on `schedule` events without a `base`, where it cannot find one."""

from __future__ import annotations

import re
from collections.abc import Iterable

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.gha.workflow import Job, Workflow
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

_ACTION = lazyre.compile(r"\Adorny/paths-filter@", re.I)
# An `if:` that may keep the step off scheduled runs: it reads the event (`github.event_name`, `github.event.*`,
# the pull request) or a status function that runs it whatever happened. Such a condition is not second-guessed.
_EVENT_AWARE = lazyre.compile(r"event_name|github\.event\b|schedule|pull_request|github\.base_ref|github\.head_ref")
_STATUS = lazyre.compile(r"\b(?:always|failure|cancelled)\s*\(")


class PathsFilterOnSchedule(Rule):
    """A workflow triggered by `schedule` runs a `dorny/paths-filter` step that has no `base:` input.

    Why: on events other than pull requests the action compares against `base`, or else the repository's
    default branch read from the event payload. A `schedule` event's payload carries neither, so the step
    stops with "This action requires 'base' input to be configured or 'repository.default_branch' to be set
    in the event payload" and the job fails on every scheduled run: the nightly Ascend tests never run
    (vllm-ascend fixed exactly this in #757 by skipping the filter on schedule events; dorny/paths-filter#100
    is the action's own issue). Push, `workflow_dispatch` and the pull-request events are fine.

    Bad:
        on:
          schedule:
            - cron: '0 23 * * *'
          pull_request:
        jobs:
          e2e:
            runs-on: linux-arm64-npu-1
            steps:
              - uses: dorny/paths-filter@v3
                id: filter
                with:
                  filters: |
                    ops: ['csrc/**']

    Good:
        on:
          schedule:
            - cron: '0 23 * * *'
          pull_request:
        jobs:
          e2e:
            runs-on: linux-arm64-npu-1
            steps:
              - uses: dorny/paths-filter@v3
                if: github.event_name != 'schedule'
                id: filter
                with:
                  filters: |
                    ops: ['csrc/**']

    Fix: skip the step on scheduled runs (`if: github.event_name != 'schedule'`, and let the steps that read its
    outputs run when it was skipped), or give it a `base:`.

    Not reported: a step or job whose `if:` reads the event, the pull request or a status function (the rule
    does not second-guess such a condition), a job that needs one with such an `if:`, a step with
    `continue-on-error`, workflows without a `schedule` trigger.
    """

    id = "NPU225"
    name = "paths-filter-on-schedule"
    severity = Severity.ERROR
    title = "dorny/paths-filter without `base` in a workflow that runs on schedule"
    kinds = frozenset({ASCEND_WORKFLOW})
    needles = ("paths-filter",)

    def check_workflow(self, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if "schedule" not in wf.triggers:
            return
        on = wf.root.get("on")
        key = on.key_node("schedule") if on is not None and on.is_map else None
        memo: dict[str, bool] = {}
        for job in wf.jobs.values():
            if not _may_run(wf, job, memo, set()):
                continue
            for step in job.steps:
                if step.uses is None or not _ACTION.match(step.uses.strip()) or "base" in step.with_:
                    continue
                if _conditional(step.node) or _truthy(step.node.get("continue-on-error")):
                    continue
                uses = step.node.get("uses")
                line = uses.line if uses is not None else step.line
                trigger = key.line if key is not None else line
                # On a change: where the change made it so (the step added, or the schedule trigger added).
                at = next((n for n in (line, trigger) if ctx.is_added_line(src.path, n)), line)
                yield Hit(
                    src.path,
                    at,
                    f"Job `{job.id}` runs `{step.uses.strip()}` (line {line}) without `base:`, and this workflow "
                    f"runs on `schedule` (line {trigger}): a scheduled run's event has no default branch for the "
                    "action to compare with, so the step fails with \"This action requires 'base' input to be "
                    'configured" and the job fails on every scheduled run. Skip the step on schedule (`if: '
                    "github.event_name != 'schedule'`) or give it a `base:`.",
                    related=() if at == line else (Related(src.path, line, "the paths-filter step"),),
                )


def _conditional(node: Node) -> bool:
    """The `if:` may keep this off scheduled runs (or runs it on failure too): not second-guessed."""
    cond = node.get("if")
    if cond is None:
        return False
    text = cond.value if cond.is_scalar else ""
    return not text or bool(_EVENT_AWARE.search(text) or _STATUS.search(text))


def _truthy(node: Node | None) -> bool:
    return node is not None and (not node.is_scalar or node.value.strip().lower() not in ("false", ""))


def _may_run(wf: Workflow, job: Job, memo: dict[str, bool], busy: set[str]) -> bool:
    """The job may run on a scheduled run: its `if:` does not read the event, and every job it needs may too."""
    if job.id in memo:
        return memo[job.id]
    if job.id in busy:
        return True
    busy.add(job.id)
    result = not _conditional(job.node) and all(_may_run(wf, wf.jobs[n], memo, busy) for n in job.needs if n in wf.jobs)
    memo[job.id] = result
    return result
