"""NPU223: an Ascend job of a workflow run for a change (`workflow_run`, `repository_dispatch`,
`pull_request_target`, a PR comment) checks out the default branch instead of the change."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_jobs
from npu_review.checks.analysis.references import change_refs, change_triggers, checkouts, repo_uses
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, GITHUB, workflow_host
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.workflow import Job, Workflow
from npu_review.checks.rule import Hit, Rule

# `ref:` values that name the default branch (or the commit the event happened on, which is the default branch's
# for these triggers), not the change.
_DEFAULT_REFS = lazyre.compile(
    r"\A(?:main|master|develop|\$\{\{\s*github\.(?:sha|ref|ref_name|event\.repository\.default_branch)\s*\}\})\Z"
)
_SWITCHES = lazyre.compile(r"\b(?:git\s+(?:checkout|switch|reset|fetch|pull|merge)|gh\s+pr\s+checkout)\b")
_EVENT_GATE = lazyre.compile(r"github\.event_name|github\.event\.action\b")


class CheckoutNotTheChange(Rule):
    """An Ascend job of a workflow that runs for a change it did not get as its own commit checks out the
    default branch, so the NPU job builds and tests main instead of the change.

    Why: for `workflow_run`, `repository_dispatch`, `pull_request_target` and `issue_comment` events, GitHub runs
    the workflow on the default branch: `actions/checkout` without `ref:` checks out the default branch's last
    commit, whatever pull request the run is about. A workflow that hands the NPU tests of a PR to a self-hosted
    runner this way (a `workflow_run` after the CPU build, an `/e2e` command sent by a bot as a
    `repository_dispatch`) then reports on main, and a broken PR passes. Mooncake moved its Ascend CI to
    `workflow_run` with a checkout without `ref:` (its path-filter job checked out `head_sha`, the NPU job did not);
    vllm-ascend's `/e2e` command job checked out main while it read the PR's head SHA from the payload.

    Reported when the workflow itself names the change (`github.event.workflow_run.head_sha`,
    `github.event.client_payload....sha`, `github.event.pull_request.head.sha`, `refs/pull/...`), so the run is
    about it, and the job's checkout of this repository has no `ref:` or one that names the default branch
    (`main`, `${{ github.sha }}`), and a later step uses the checked-out files.

    Bad:
        on:
          workflow_run:
            workflows: ["Build & Test"]
            types: [completed]
        jobs:
          npu-test:
            runs-on: linux-aarch64-a2b3-8
            steps:
              - uses: actions/checkout@v4
              - run: bash scripts/ascend/run_tests.sh
          report:
            runs-on: ubuntu-latest
            steps:
              - run: echo "testing ${{ github.event.workflow_run.head_sha }}"

    Good:
        on:
          workflow_run:
            workflows: ["Build & Test"]
            types: [completed]
        jobs:
          npu-test:
            runs-on: linux-aarch64-a2b3-8
            steps:
              - uses: actions/checkout@v4
                with:
                  ref: ${{ github.event.workflow_run.head_sha }}
              - run: bash scripts/ascend/run_tests.sh

    Fix: check out the commit the run is about (`ref: ${{ github.event.workflow_run.head_sha }}`, the SHA the
    dispatch payload carries, `refs/pull/<n>/head`).

    Silent on: workflows that never name the change (a `workflow_run` that deploys or reports on main), jobs gated
    on the event name (another trigger of the same workflow may be the one they serve), checkouts of another
    repository, sparse checkouts (a few trusted files of the default branch, on purpose), `ref:` values computed
    by an expression the rule cannot read (a step output), jobs that fetch and check out the change themselves
    (`gh pr checkout`, `git fetch ... && git checkout ...`), and jobs that do not use the checked-out files.
    """

    id = "NPU223"
    name = "checkout-not-the-change"
    severity = Severity.WARNING
    title = "Ascend job of a workflow_run / dispatch / PR-comment workflow checks out the default branch"
    kinds = frozenset({ASCEND_WORKFLOW})
    needles = ("workflow_run", "repository_dispatch", "pull_request_target", "issue_comment")

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if workflow_host(src.path) is not GITHUB:
            return  # which ref GitCode checks out for a comment-started run is not known here
        triggers = change_triggers(wf)
        if not triggers:
            return
        npu = ascend_jobs(ctx, src.path)
        if npu is not None and job.id not in npu:
            return
        gate = job.node.get("if")
        if gate is not None and gate.is_scalar and _EVENT_GATE.search(gate.value):
            return
        evidence = change_refs(wf, src.text)
        if not evidence:
            return
        for co in checkouts(job):
            if not co.own or co.sparse:
                continue  # another repository, or a few chosen files of the default branch on purpose
            ref = co.ref
            if ref is not None and not (ref.is_scalar and _DEFAULT_REFS.match(ref.value.strip())):
                return  # a ref the rule cannot judge, or the change's: this checkout is fine
            if co.path:
                return
            if any(step.run is not None and _SWITCHES.search(step.run.value) for step in job.steps[co.index + 1 :]):
                return  # the job fetches and checks out the change itself (`gh pr checkout`, `git checkout FETCH_HEAD`)
            later = [u for step in job.steps[co.index + 1 :] for u in repo_uses(ctx, step, job, wf)[:1]]
            if not later:
                return
            # A change that moves the workflow onto such a trigger is the cause, even when the job's lines stay.
            on = wf.root.get("on")
            trigger_lines = [k.line for t, k, _ in on.entries() if t in triggers] if on is not None else []
            caused = any(ctx.is_added_line(src.path, n) for n in trigger_lines)
            how = "has no `ref:`" if ref is None else f"checks out `{ref.value.strip()}`"
            events = ", ".join(f"`{t}`" for t in triggers)
            yield Hit(
                src.path,
                co.line,
                f"This workflow runs on {events}, where GitHub starts it on the default branch, and this job's "
                f"checkout {how}: it builds and tests the default branch, not the change the run is about "
                f"(which the workflow names as `{evidence[0]}`), so the NPU job passes or fails for main "
                f"(line {later[0].line} runs `{later[0].what}` from it). Check out the change, e.g. "
                f"`ref: {_suggested_ref(evidence)}`.",
                end_line=max(co.uses_line, ref.line if ref is not None else co.uses_line),
                caused_by_change=caused,
            )
            return


def _suggested_ref(evidence: list[str]) -> str:
    for e in evidence:
        low = e.lower()
        if low.endswith(("head_sha", ".sha", "head.sha")):
            return "${{ " + e + " }}"
    first = evidence[0]
    return (
        "${{ " + first + " }}"
        if first.startswith("github.") and "pull_request" not in first.split(".")[-1]
        else ("the head SHA of the change")
    )
