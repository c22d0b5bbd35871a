"""NPU212: a job on a self-hosted Ascend runner, or one that uses the Quay secrets, has no fork guard."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from checks.context import Context, SourceFile
from checks.facts import Facts
from checks.indexes.runners import ascend_jobs, runner_catalog
from checks.indexes.workflows import workflow, workflow_at, workflow_paths
from checks.kinds import ASCEND_WORKFLOW, WORKFLOW
from checks.model import Severity
from checks.parsers.gha.runners import runner_label_sets
from checks.parsers.gha.workflow import Job, Workflow
from checks.parsers.yamlmarks import Node
from checks.rule import Hit, Rule

_OWNER = re.compile(
    r"github\.repository_owner\s*==\s*(['\"])(?P<a>[^'\"]+)\1"
    r"|(['\"])(?P<b>[^'\"]+)\3\s*==\s*github\.repository_owner"
    r"|github\.repository\s*==\s*(['\"])(?P<c>[^'\"/]+)/[^'\"]*\5"
)
_SECRET = re.compile(r"secrets(?:\.([A-Za-z_][\w-]*)|\[\s*['\"]([^'\"]+)['\"]\s*\])")


# Where a repository names its own GitHub address (the owner a fork guard must name when no workflow names one).
_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_PROJECT_URL = re.compile(
    r"(?:Homepage|Repository|Source|url)\s*[=:]\s*['\"]https://github\.com/(?P<owner>[A-Za-z0-9][A-Za-z0-9-]*)/", re.I
)


def _project_owners(ctx: Context, rev: str) -> Counter[str]:
    """Owners named by the project's own URL in pyproject.toml / setup.py / setup.cfg at `rev`."""
    found: Counter[str] = Counter()
    for path in _PROJECT_FILES:
        src = ctx.source_at(path, rev)
        if src is not None:
            found.update(m.group("owner") for m in _PROJECT_URL.finditer(src.text))
    return found


def guard_owners(text: str) -> list[str]:
    """Owners named by `github.repository_owner == '...'` (or `github.repository == 'owner/...'`) in an `if:`."""
    return [m.group("a") or m.group("b") or m.group("c") for m in _OWNER.finditer(text)]


class MissingForkGuard(Rule):
    """A job that runs on a self-hosted Ascend runner, or logs in to Quay with the repository's secrets, has no
    `if: github.repository_owner == 'verl-project'`.

    Why: forks copy the workflows. Without the guard, every push to a fork queues the job for the Ascend runner
    label, which no runner of the fork serves (the job waits until it times out, and fork owners get failure
    mails), or runs the image build and push without the Quay credentials. verl guards every Ascend job; the
    owner was `volcengine` before the move to `verl-project` (#5059). A job that `needs:` a guarded job is
    skipped with it and needs no guard of its own (unless its `if:` uses `always()` or `failure()`).

    Not reported: workflows that run only on `workflow_dispatch` (someone starts them on purpose).

    Bad:
        jobs:
          e2e_ascend:
            runs-on: linux-aarch64-a2b3-8

    Good:
        jobs:
          e2e_ascend:
            if: github.repository_owner == 'verl-project'
            runs-on: linux-aarch64-a2b3-8

    Fix: add the guard to the job's `if:` (`... && github.repository_owner == 'verl-project'` when it already
    has a condition). The owner is the one the repository's other Ascend jobs use; when none is guarded yet,
    the one the other workflows' guards name, else the owner in the project's own URL (pyproject.toml,
    setup.py, setup.cfg) at that revision, so that a guard suggested for verl before #5059 names `volcengine`.
    """

    id = "NPU212"
    name = "missing-fork-guard"
    severity = Severity.ERROR
    title = "Ascend or Quay job without a repository-owner fork guard"
    kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW})
    context_kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return _PROJECT_FILES

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if src.path.count("/") != 2:
            return  # GitHub runs only the workflows directly under .github/workflows
        wf = workflow(ctx, src.path)
        if wf is None:
            return
        actions = ctx.facts.github_actions
        triggers = wf.triggers
        if triggers and triggers <= set(actions.manual_triggers):
            return
        accepted, usual = self._owners(ctx)
        if usual is None:
            return  # no owner known and none in use: the project guards no job, nothing to compare with
        secret = re.compile(ctx.facts.fork_guard.secret_pattern)
        status = list(actions.status_functions)
        guarded: dict[str, bool] = {}
        for job in wf.jobs.values():
            why = self._needs_guard(ctx, wf, job, secret)
            if why is None:
                continue
            if_node = job.node.get("if")
            if_text = if_node.value if if_node is not None and if_node.is_scalar else ""
            owners = guard_owners(if_text)
            if owners:
                wrong = [o for o in owners if o not in accepted]
                if wrong and len(wrong) == len(owners) and if_node is not None:
                    yield Hit(
                        src.path,
                        if_node.line,
                        f"The fork guard of job `{job.id}` names owner `{wrong[0]}`, but this repository's Ascend "
                        f"jobs run under {' or '.join(f'`{o}`' for o in sorted(accepted))}: the job never runs "
                        "here.",
                    )
                continue
            if self._inherits_guard(wf, job, accepted, status, guarded):
                continue
            yield self._hit(ctx, src, wf, job, why, usual, accepted)

    # -- what needs a guard ----------------------------------------------------------------------------------
    def _needs_guard(self, ctx: Context, wf: Workflow, job: Job, secret: re.Pattern[str]) -> tuple[str, int] | None:
        catalog = runner_catalog(ctx)
        runs_on = job.node.get("runs-on")
        for labels in runner_label_sets(wf, job):
            runner = catalog.of(labels) if labels is not None else None
            if runner is not None and runs_on is not None:
                return f"runs on the self-hosted Ascend runner `{runner.label}`", runs_on.line
        for _, node in job.node.walk():
            if not node.is_scalar or "secrets" not in node.value:
                continue
            for m in _SECRET.finditer(node.value):
                name = m.group(1) or m.group(2)
                if secret.search(name):
                    line = next((n for n, t in node.text_lines() if name in t), node.line)
                    return f"uses `secrets.{name}`", line
        return None

    def _inherits_guard(
        self, wf: Workflow, job: Job, accepted: set[str], status: list[str], memo: dict[str, bool]
    ) -> bool:
        """True when a job this one needs is guarded (then this one is skipped in forks too)."""
        if_node = job.node.get("if")
        if_text = if_node.value if if_node is not None and if_node.is_scalar else ""
        if any(s in if_text.replace(" ", "") for s in status):
            return False
        return any(self._guarded(wf, need, accepted, status, memo, set()) for need in job.needs)

    def _guarded(
        self, wf: Workflow, job_id: str, accepted: set[str], status: list[str], memo: dict[str, bool], busy: set[str]
    ) -> bool:
        if job_id in memo:
            return memo[job_id]
        job = wf.jobs.get(job_id)
        if job is None or job_id in busy:
            return False
        busy.add(job_id)
        if_node = job.node.get("if")
        if_text = if_node.value if if_node is not None and if_node.is_scalar else ""
        result = any(o in accepted for o in guard_owners(if_text))
        if not result and not any(s in if_text.replace(" ", "") for s in status):
            result = any(self._guarded(wf, n, accepted, status, memo, busy) for n in job.needs)
        memo[job_id] = result
        return result

    def _owners(self, ctx: Context) -> tuple[set[str], str | None]:
        """Accepted owners (the base's Ascend jobs' plus the known ones) and the one to suggest: the same for
        every workflow of the run, so worked out once."""
        return ctx.memo(("npu212-owners", "", ""), lambda: self._find_owners(ctx))

    def _find_owners(self, ctx: Context) -> tuple[set[str], str | None]:
        known = ctx.facts.fork_guard.owners
        rev = ctx.reference_rev
        used: Counter[str] = Counter()
        for aj in ascend_jobs(ctx, rev):
            wf = workflow_at(ctx, aj.path, rev)
            job = wf.jobs.get(aj.job) if wf is not None else None
            node = job.node.get("if") if job is not None else None
            if node is not None and node.is_scalar:
                used.update(guard_owners(node.value))
        if not used:  # no Ascend job is guarded yet: what the other workflows name, else the project's URL
            for path in workflow_paths(ctx, rev):
                src = ctx.source_at(path, rev)
                if src is not None and "repository" in src.text:
                    used.update(guard_owners(src.text))
        if not used:
            used.update(_project_owners(ctx, rev))
        usual = used.most_common(1)[0][0] if used else (known[0] if known else None)
        return set(used) | set(known), usual

    # -- the finding -----------------------------------------------------------------------------------------
    def _hit(
        self,
        ctx: Context,
        src: SourceFile,
        wf: Workflow,
        job: Job,
        why: tuple[str, int],
        owner: str,
        accepted: set[str],
    ) -> Hit:
        reason, reason_line = why
        if_node = job.node.get("if")
        runs_on = job.node.get("runs-on")
        guard = f"github.repository_owner == '{owner}'"
        effect = (
            "in every fork it waits for a runner that never comes, until it times out"
            if reason.startswith("runs on")
            else "in every fork it runs without those secrets and fails"
        )
        message = f"Job `{job.id}` {reason} but has no fork guard: {effect}. Add `if: {guard}`."
        key = wf.root.get("jobs")
        key_node = key.key_node(job.id) if key is not None else None
        candidates: list[tuple[int, str | None]] = []
        if if_node is not None:
            candidates.append((if_node.line, _extend_if(src, if_node, guard)))
        if runs_on is not None:
            candidates.append((runs_on.line, _insert_if(src, runs_on, guard) if if_node is None else None))
        candidates.append((reason_line, None))
        if key_node is not None:
            candidates.append((key_node.line, None))
        line, suggestion = next(((n, s) for n, s in candidates if ctx.is_added_line(src.path, n)), candidates[0])
        caused = False
        if not ctx.audit and not ctx.is_added_line(src.path, line):
            caused = self._guard_removed(ctx, src.path, job.id, accepted)
        return Hit(src.path, line, message, suggestion=suggestion, caused_by_change=caused)

    def _guard_removed(self, ctx: Context, path: str, job_id: str, accepted: set[str]) -> bool:
        """The change itself removed this job's guard (the base had one)."""
        change = ctx.changeset.changed(path)
        if change is None:
            return False
        base = workflow_at(ctx, change.old_path or path, "base")
        job = base.jobs.get(job_id) if base is not None else None
        node = job.node.get("if") if job is not None else None
        return node is not None and node.is_scalar and any(o in accepted for o in guard_owners(node.value))


def _insert_if(src: SourceFile, runs_on: Node, guard: str) -> str | None:
    text = src.line(runs_on.line)
    m = re.match(r"(\s*)runs-on\s*:", text)
    if m is None:
        return None
    return f"{m.group(1)}if: {guard}\n{text}"


def _extend_if(src: SourceFile, if_node: Node, guard: str) -> str | None:
    """`if: X` -> `if: X && guard` for a one-line `if:` (inside `${{ }}` when it is written so)."""
    if if_node.line != if_node.end_line or if_node.style not in (None, "'", '"'):
        return None
    text = src.line(if_node.line)
    m = re.match(r"(\s*if\s*:\s*)(.*?)\s*$", text)
    if m is None or "#" in m.group(2):
        return None
    value = m.group(2)
    inner = re.fullmatch(r"\$\{\{\s*(.*?)\s*\}\}", value)
    if inner is not None:
        return f"{m.group(1)}${{{{ ({inner.group(1)}) && {guard} }}}}"
    if if_node.style is not None or "${{" in value:
        return None
    return f"{m.group(1)}({value}) && {guard}"
