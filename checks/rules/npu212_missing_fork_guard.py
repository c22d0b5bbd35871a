"""NPU212: a job on a self-hosted Ascend runner, or one that uses the Quay secrets, has no fork guard."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property, partial

from npu_review.checks import lazyre
from npu_review.checks.analysis.runners import ACTIONLINT_CONFIGS, LABEL_FILE_GLOBS, job_runners, runner_catalog
from npu_review.checks.analysis.workflows import workflow, workflow_at, workflow_paths
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_WORKFLOW, GITHUB, WORKFLOW, workflow_host
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.calls import local_target
from npu_review.checks.parsers.gha.runners import runner_label_sets
from npu_review.checks.parsers.gha.workflow import Job, Workflow, legs
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

_OWNER = lazyre.compile(
    r"github\.repository_owner\s*==\s*(['\"])(?P<a>[^'\"]+)\1"
    r"|(['\"])(?P<b>[^'\"]+)\3\s*==\s*github\.repository_owner"
    r"|github\.repository\s*==\s*(['\"])(?P<c>[^'\"/]+)/[^'\"]*\5"
)
_SECRET = lazyre.compile(r"secrets(?:\.([A-Za-z_][\w-]*)|\[\s*['\"]([^'\"]+)['\"]\s*\])")


# Where a repository names its own GitHub address (the owner a fork guard must name when no workflow names one).
_PROJECT_FILES = ("pyproject.toml", "setup.py", "setup.cfg")
_PROJECT_URL = lazyre.compile(
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


# `!github.event.repository.fork` / `github.event.repository.fork == false`: a fork guard that names no owner.
_NOT_FORK = lazyre.compile(r"!\s*github\.event\.repository\.fork\b|github\.event\.repository\.fork\s*==\s*false")
_EVENT_EQ = lazyre.compile(
    r"github\.event_name\s*==\s*(['\"])(?P<e>[\w-]+)\1|(['\"])(?P<f>[\w-]+)\3\s*==\s*github\.event_name"
)
_EVENT_NE = lazyre.compile(r"github\.event_name\s*!=|!=\s*github\.event_name")
_PR_LABEL = lazyre.compile(r"contains\(\s*github\.event\.pull_request\.labels")


def _if_text(node: Node) -> str:
    if_node = node.get("if")
    return if_node.value if if_node is not None and if_node.is_scalar else ""


class _Owners:
    """The owners a fork guard may name here, the one to suggest, and whether the project guards at all: the same
    for every workflow of the run. What the workflows' texts say (the owners named anywhere, a fork test) is read
    first; what needs their jobs parsed (the owners the guards of Ascend jobs name, whether a job's own `if:`
    guards it) only when a question cannot be answered without it: most reviews never ask."""

    def __init__(self, ctx: Context) -> None:
        self._ctx = ctx
        self.configured = list(ctx.facts.fork_guard.owners)  # a config file may name them; no profile does
        self.ref = _texts_at(ctx, ctx.reference_rev)
        # The head too: a change that adds a project's first guards says it guards; and one that renames the owner
        # in the guards of several jobs (a repository transfer) names the new one (`transfer`).
        self.head = self.ref if ctx.audit else _texts_at(ctx, "head")
        self.repo_owner = ctx.repository_owner
        self.project = _project_owners(ctx, "head") + _project_owners(ctx, ctx.reference_rev)
        # How often each owner is named in the reference revision's workflows.
        self.uses: Counter[str] = self.ref.anywhere
        # Owners accepted whatever the guards say, as far as the texts tell (config, repository, project URL).
        self._cheap_fixed = set(self.configured) | set(self.project) | ({self.repo_owner} if self.repo_owner else set())

    @cached_property
    def _jobs(self) -> tuple[_JobGuards, _JobGuards]:
        ref = _jobs_at(self._ctx, self._ctx.reference_rev)
        return ref, (ref if self._ctx.audit else _jobs_at(self._ctx, "head"))

    @cached_property
    def fixed(self) -> frozenset[str]:
        """Owners accepted whatever the guards say (config, repository, project URL, renames: an owner the head's
        guards of two Ascend jobs or more name)."""
        head_jobs = self._jobs[1].jobs
        return frozenset(self._cheap_fixed | {o for o, n in head_jobs.items() if n >= 2})

    def accepts(self, owner: str) -> bool:
        """`owner` may be named by a guard here."""
        if owner in self.ref.anywhere or owner in self.head.anywhere or owner in self._cheap_fixed:
            return True
        return owner in self.fixed

    def wrong(self, owner: str) -> bool:
        """`owner`, named by a guard, is not this repository's: other guards name another owner more often (or
        as often, when the repository or the project names that one), and nothing fixes `owner` itself."""
        if owner in self._cheap_fixed:
            return False
        n = self.uses[owner]
        rivals = [(p, m) for p, m in self.uses.items() if p != owner and m > 0 and m >= n]
        if not rivals or owner in self.fixed:
            return False
        return any(m > n or (m == n and p in self.fixed) for p, m in rivals)

    @cached_property
    def suggest(self) -> str | None:
        """The owner a suggested guard names."""
        ref_jobs, head_jobs = self._jobs
        order = [
            *self.configured,
            *(o for o, _ in ref_jobs.jobs.most_common()),
            *(o for o, _ in self.ref.anywhere.most_common()),
            *(o for o, _ in head_jobs.jobs.most_common()),
            *(o for o, _ in self.head.anywhere.most_common()),
            *([self.repo_owner] if self.repo_owner else []),
            *(o for o, _ in self.project.most_common()),
        ]
        return order[0] if order else None

    @cached_property
    def transfer(self) -> list[str]:
        """Owners the change writes into the workflows' guards that the reference revision never names, twice or
        more (`|| github.repository == 'flagos-ai/flagtree'` added to every guard: the repository moves to a new
        owner): a suggested guard names them beside `suggest`, as the project's own guards do."""
        if not self._ctx.audit:
            return [o for o, n in self.head.anywhere.most_common() if n >= 2 and not self.ref.anywhere[o]]
        # At a revision whose guards name two owners together (`FlagTree/x || flagos-ai/x`, the move done or under
        # way): the owners named beside the suggested one on the same line, in two guards or more.
        first = self.suggest
        beside: Counter[str] = Counter()
        for path in workflow_paths(self._ctx, self._ctx.reference_rev):
            src = self._ctx.source_at(path, self._ctx.reference_rev)
            if src is None or "repository" not in src.text:
                continue
            for line in src.lines:
                owners = set(guard_owners(line)) if "repository" in line else set()
                if first in owners and len(owners) > 1:
                    beside.update(owners - {first})
        return [o for o, n in beside.most_common() if n >= 2]

    def can_suggest(self) -> bool:
        """`suggest` is not None, without parsing the jobs when the texts tell."""
        if self.configured or self.ref.anywhere or self.head.anywhere or self.repo_owner or self.project:
            return True
        return self.suggest is not None

    @cached_property
    def guards_jobs(self) -> bool:
        """Some job's own `if:` keeps it out of forks at the reference revision (or at the head)."""
        ref_jobs, head_jobs = self._jobs
        return ref_jobs.guards_jobs or head_jobs.guards_jobs

    def guarding(self, reason: str) -> bool:
        """Does the project guard what this finding is about? A runner: only job guards say so (guarded login
        steps say the project cares about its secrets, not about forks queueing jobs); a secret: any guard."""
        if self.guards_jobs:
            return True
        guards_any = self.ref.guards_any or self.head.guards_any
        return guards_any and "secrets." in reason


class MissingForkGuard(Rule):
    """A job that forks run by themselves asks for a self-hosted Ascend runner, or uses the registry secrets,
    and has none of the fork guards the project uses elsewhere (`if: github.repository_owner == '<owner>'`).

    Why: forks copy the workflows. Once a fork enables Actions, every push to it (a synced `main` included)
    queues the job for the Ascend runner label, which no runner of the fork serves (the job waits until it
    times out, and the fork's owner gets failure mails), or runs the image build and push without the
    registry credentials. A project that guards its Ascend jobs wants every one of them guarded.

    Only jobs a fork runs by itself are reported, following GitHub's rules: workflows triggered by `push`
    (branch pushes; a `push` of tags only is not, "Sync fork" does not push tags), `create`, `delete`, and
    `workflow_run` of such a workflow. Not reported: `schedule` (disabled in forks until their owner enables
    it), `workflow_dispatch` and `repository_dispatch` (someone starts them in the fork on purpose), and
    `pull_request*` (a pull request from a fork runs in the base repository). A reusable workflow
    (`workflow_call`) runs with its caller's trigger: the caller job (`uses: ./.github/workflows/...`) is
    reported when a job of the called workflow runs on an Ascend runner (its `runs-on: ${{ inputs.X }}`
    read from the caller's `with:`). A job is guarded when its `if:` names the owner (or
    `github.repository == 'owner/name'`, or `!github.event.repository.fork`), when it `needs:` a guarded job
    (skipped with it, unless its `if:` uses `always()` or `failure()`), when its `if:` allows only events
    forks do not run or requires a pull-request label, and for a secret, when the step that uses the secret
    is guarded. A caller job is guarded for the called workflow's Ascend job when that job's `if:` reads an
    input the caller sets to an owner guard (`should_run: ${{ github.repository_owner == 'o' }}`), and for
    the secrets it passes when it hands over any owner-guarded input (`should_push:`).

    Which owner: the one the repository's own guards name (its Ascend jobs' first, then any workflow's, then
    the repository's owner as the App or the git remote knows it, then the owner in the project's own URL in
    pyproject.toml, setup.py or setup.cfg); no owner is built in. Where the project guards none of its jobs
    (for a secret: no job and no step), it has chosen not to: nothing is reported on its existing jobs (nor
    with `--all`), and a change that adds such a job gets a notice only. Guarded login steps alone say a
    project keeps its secrets out of forks, not that it keeps jobs from queueing there.

    Bad:
        on:
          push:
            branches: [main]
        jobs:
          unit_ascend:
            if: github.repository_owner == 'verl-project'
            runs-on: linux-aarch64-a2b3-8
          e2e_ascend:
            runs-on: linux-aarch64-a2b3-8     # queued in every fork that syncs main

    Good:
        on:
          push:
            branches: [main]
        jobs:
          e2e_ascend:
            if: github.repository_owner == 'verl-project'
            runs-on: linux-aarch64-a2b3-8

    Fix: add the guard to the job's `if:` (`... && github.repository_owner == '<owner>'` when it already has
    a condition). A guard that names another owner than the repository's guards (and its remote) do is
    reported too: the job would never run in the repository itself. A change that writes a new owner into the
    project's guards (a repository moving to another owner, `|| github.repository == 'new-owner/x'` added to each)
    gets a suggested guard naming both owners, as its own guards do; so does a revision whose guards name two
    owners together (`github.repository == 'old/x' || github.repository == 'new/x'`).
    """

    id = "NPU212"
    name = "missing-fork-guard"
    severity = Severity.ERROR
    title = "Ascend or registry job that forks run without a repository-owner fork guard"
    kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW})
    context_kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return _PROJECT_FILES + ACTIONLINT_CONFIGS + LABEL_FILE_GLOBS

    def check_workflow(self, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if workflow_host(src.path) is not GITHUB:
            # GitHub runs only the workflows directly under .github/workflows. How GitCode runs a fork's pull
            # request on a project's self-hosted runners, and what its guard would read, is not known here.
            return
        secret = re.compile(ctx.facts.fork_guard.secret_pattern)
        status = list(ctx.facts.github_actions.status_functions)
        events = _fork_events(ctx, src.path)
        guarded: dict[str, bool] = {}
        base_ifs = None if ctx.audit else _base_if_texts(ctx, src.path)
        for job in wf.jobs.values():
            if_text = _if_text(job.node)
            if base_ifs is not None and not _job_edited(ctx, src.path, wf, job, if_text, base_ifs):
                # A change keeps only findings on the lines it adds, and those it causes by removing a guard
                # (the job's `if:` then differs from the base's): this job can give neither, whatever the
                # project's owners are (their census reads every workflow; most changes never need it).
                continue
            owners = self._owners(ctx)
            named = guard_owners(if_text)
            if named:
                # Wrong only against the project's other guards (the repository's own owner alone is no proof:
                # a clone of a fork has the fork's remote).
                ours = sorted(o for o, n in owners.uses.items() if n > 0 and not owners.wrong(o))
                if ours and all(owners.wrong(o) for o in named):
                    why = self._needs_guard(ctx, wf, job, secret, owners)
                    if_node = job.node.get("if")
                    if why is not None and if_node is not None:
                        yield Hit(
                            src.path,
                            if_node.line,
                            f"The fork guard of job `{job.id}` names owner `{named[0]}`, but this repository's "
                            f"guards name {' or '.join(f'`{o}`' for o in ours)}: the job never runs here.",
                        )
                continue
            if not events or not owners.can_suggest() or _NOT_FORK.search(if_text):
                continue
            if _skipped_in_forks(if_text, events):
                continue
            why = self._needs_guard(ctx, wf, job, secret, owners)
            if why is None or self._inherits_guard(wf, job, owners, status, guarded):
                continue
            hit = self._hit(ctx, src, wf, job, why, owners, sorted(events))
            # Where nothing is guarded, only a job the change adds gets a notice (never in an audit).
            new = not ctx.audit and ctx.is_added_line(hit.path, hit.line) and not hit.caused_by_change
            if owners.guarding(why[0]) or new:
                yield hit

    # -- what needs a guard ----------------------------------------------------------------------------------
    def _needs_guard(
        self, ctx: Context, wf: Workflow, job: Job, secret: re.Pattern[str], owners: _Owners
    ) -> tuple[str, int] | None:
        catalog = runner_catalog(ctx)
        runs_on = job.node.get("runs-on")
        for labels in runner_label_sets(wf, job):
            runner = catalog.of(labels) if labels is not None else None
            if runner is not None and runs_on is not None:
                return f"runs on the self-hosted Ascend runner `{runner.label}`", runs_on.line
        called = self._callee_runner(ctx, wf, job, owners)
        if called is not None:
            return called
        with_node = job.node.get("with")
        if with_node is not None and any(
            n.is_scalar and (_NOT_FORK.search(n.value) or any(owners.accepts(o) for o in guard_owners(n.value)))
            for _, n in with_node.walk()
        ):
            return None  # its secrets go with an owner-guarded input (`should_push: ...`) the callee gates on
        uses = job.node.scalar("uses")
        for path, node in job.node.walk():
            if not node.is_scalar or "secrets" not in node.value:
                continue
            if len(path) >= 2 and path[0] == "steps" and isinstance(path[1], int):
                step = job.node.get("steps")
                step_node = step.items[path[1]] if step is not None and step.is_seq else None
                step_if = _if_text(step_node) if step_node is not None and step_node.is_map else ""
                if _NOT_FORK.search(step_if) or any(owners.accepts(o) for o in guard_owners(step_if)):
                    continue  # the step that uses the secret is guarded
            for m in _SECRET.finditer(node.value):
                name = m.group(1) or m.group(2)
                if secret.search(name):
                    line = next((n for n, t in node.text_lines() if name in t), node.line)
                    if uses is not None and path[:1] == ("secrets",):
                        return f"passes `secrets.{name}` to `{uses}`", line
                    return f"uses `secrets.{name}`", line
        return None

    def _callee_runner(self, ctx: Context, wf: Workflow, job: Job, owners: _Owners) -> tuple[str, int] | None:
        """A caller job (`uses: ./.github/workflows/X`): the first job of X that runs on an Ascend runner and
        is not guarded in X itself; its `runs-on: ${{ inputs.N }}` is the caller's `with: N` (per matrix leg)."""
        uses_node = job.node.get("uses")
        uses = uses_node.value.strip() if uses_node is not None and uses_node.is_scalar else ""
        target = local_target(uses, wf.path)
        if target is None:
            return None
        assert uses_node is not None
        callee = workflow(ctx, target)
        if callee is None:
            return None
        catalog = runner_catalog(ctx)
        with_node = job.node.get("with")
        # Inputs the caller sets to an owner guard (`should_run: ${{ github.repository_owner == 'o' }}`).
        gated = {
            key
            for key, _, node in (with_node.entries() if with_node is not None else ())
            if node.is_scalar and (guard_owners(node.value) or _NOT_FORK.search(node.value))
        }
        for cjob in callee.jobs.values():
            cif = _if_text(cjob.node)
            if guard_owners(cif) or _NOT_FORK.search(cif) or any(f"inputs.{k}" in cif for k in gated):
                continue
            runs_on = cjob.node.get("runs-on")
            if runs_on is None:
                continue
            sets: list[tuple[str, ...] | None]
            m = _INPUT_REF.fullmatch(runs_on.value.strip()) if runs_on.is_scalar else None
            arg = with_node.get(m.group(1)) if m is not None and with_node is not None else None
            if m is not None:
                sets = []
                if arg is not None and arg.is_scalar:
                    for scope in legs(wf, job):
                        vals = scope.resolve(arg)
                        sets.append((vals[0].text.strip(),) if len(vals) == 1 and vals[0].known else None)
            else:
                sets = list(runner_label_sets(callee, cjob))
            for labels in sets:
                runner = catalog.of(labels) if labels is not None else None
                if runner is not None:
                    where = f"whose job `{cjob.id}` runs on the self-hosted Ascend runner `{runner.label}`"
                    return f"calls `{uses}`, {where}", uses_node.line
        return None

    def _inherits_guard(
        self, wf: Workflow, job: Job, owners: _Owners, status: list[str], memo: dict[str, bool]
    ) -> bool:
        """True when a job this one needs is guarded (then this one is skipped in forks too)."""
        if_text = _if_text(job.node)
        if any(s in if_text.replace(" ", "") for s in status):
            return False
        return any(self._guarded(wf, need, owners, status, memo, set()) for need in job.needs)

    def _guarded(
        self, wf: Workflow, job_id: str, owners: _Owners, status: list[str], memo: dict[str, bool], busy: set[str]
    ) -> bool:
        if job_id in memo:
            return memo[job_id]
        job = wf.jobs.get(job_id)
        if job is None or job_id in busy:
            return False
        busy.add(job_id)
        if_text = _if_text(job.node)
        result = bool(_NOT_FORK.search(if_text)) or any(owners.accepts(o) for o in guard_owners(if_text))
        if not result and not any(s in if_text.replace(" ", "") for s in status):
            result = any(self._guarded(wf, n, owners, status, memo, busy) for n in job.needs)
        memo[job_id] = result
        return result

    # -- whose guard ---------------------------------------------------------------------------------------------
    def _owners(self, ctx: Context) -> _Owners:
        """The owners a guard may name and the one to suggest: the same for every workflow of the run."""
        return ctx.memo(("npu212-owners", "", ""), lambda: _Owners(ctx))

    # -- the finding -----------------------------------------------------------------------------------------
    def _hit(
        self,
        ctx: Context,
        src: SourceFile,
        wf: Workflow,
        job: Job,
        why: tuple[str, int],
        owners: _Owners,
        events: list[str],
    ) -> Hit:
        reason, reason_line = why
        owner = owners.suggest
        assert owner is not None
        if_node = job.node.get("if")
        runs_on = job.node.get("runs-on")
        names = [owner, *(o for o in owners.transfer if o != owner)]
        guard = " || ".join(f"github.repository_owner == '{o}'" for o in names)
        on = " or ".join(f"`{e}`" for e in events)
        effect = (
            "it waits for a runner that never comes, until it times out"
            if "runs on" in reason
            else "it runs without those secrets and fails"
        )
        guarding = owners.guarding(reason)
        if guarding:
            what = (
                f"has no fork guard and {reason}" if reason.startswith("calls") else f"{reason} but has no fork guard"
            )
            message = (
                f"Job `{job.id}` {what}: in every fork with Actions enabled, on {on}, {effect}. Add `if: {guard}`."
            )
        else:
            message = (
                f"Job `{job.id}` {reason}: in every fork with Actions enabled, on {on}, {effect}. This project "
                f"guards no job against forks yet (which may be its choice); to spare forks, add `if: {guard}`."
            )
        key = wf.root.get("jobs")
        key_node = key.key_node(job.id) if key is not None else None
        candidates: list[tuple[int, str | None]] = []
        if if_node is not None:
            candidates.append((if_node.line, _extend_if(src, if_node, f"({guard})" if len(names) > 1 else guard)))
        if runs_on is not None:
            candidates.append((runs_on.line, _insert_if(src, runs_on, guard) if if_node is None else None))
        candidates.append((reason_line, None))
        if key_node is not None:
            candidates.append((key_node.line, None))
        line, suggestion = next(((n, s) for n, s in candidates if ctx.is_added_line(src.path, n)), candidates[0])
        caused = False
        if not ctx.audit and not ctx.is_added_line(src.path, line):
            caused = self._guard_removed(ctx, src.path, job.id, owners)
        severity = None if guarding else Severity.NOTICE
        return Hit(src.path, line, message, suggestion=suggestion, severity=severity, caused_by_change=caused)

    def _guard_removed(self, ctx: Context, path: str, job_id: str, owners: _Owners) -> bool:
        """The change itself removed this job's guard (the base had one)."""
        change = ctx.changeset.changed(path)
        if change is None:
            return False
        base = workflow_at(ctx, change.old_path or path, "base")
        job = base.jobs.get(job_id) if base is not None else None
        return job is not None and any(owners.accepts(o) for o in guard_owners(_if_text(job.node)))


@dataclass(frozen=True)
class _TextGuards:
    """What one revision's workflow texts say about fork guards."""

    anywhere: Counter[str]  # owners named anywhere in the workflows (jobs, steps, inputs, scripts)
    guards_any: bool  # some guard anywhere (an owner, or `!github.event.repository.fork`)


@dataclass(frozen=True)
class _JobGuards:
    """The fork guards of one revision's jobs (their workflows parsed)."""

    jobs: Counter[str]  # owners named by the `if:` of Ascend jobs
    guards_jobs: bool  # some job's own `if:` keeps it out of forks


def _base_if_texts(ctx: Context, path: str) -> dict[str, str]:
    """The `if:` of each job of the workflow before the change (empty for a new workflow)."""
    change = ctx.changeset.changed(path)
    base = workflow_at(ctx, change.old_path or path, "base") if change is not None else None
    return {job_id: _if_text(job.node) for job_id, job in base.jobs.items()} if base is not None else {}


def _job_edited(ctx: Context, path: str, wf: Workflow, job: Job, if_text: str, base_ifs: dict[str, str]) -> bool:
    """The change writes a line a finding of this job can be on (`_hit`: the job's key, its `if:`, its `runs-on:`,
    or the reason's line: a runner, a call's `uses:`/`with:`, a line that names `secrets`), or changes (removes)
    its `if:`."""
    node = job.node
    added = [n for n in range(node.line, (node.end_line or node.line) + 1) if ctx.is_added_line(path, n)]
    jobs = wf.root.get("jobs")
    key_node = jobs.key_node(job.id) if jobs is not None else None
    if key_node is not None and ctx.is_added_line(path, key_node.line):
        return True
    if added:
        src = ctx.source(path)
        spans = [
            (part.line, part.end_line or part.line)
            for key in ("if", "runs-on", "uses", "with", "secrets", "strategy")
            if (part := node.get(key)) is not None
        ]
        for line in added:
            if any(a <= line <= b for a, b in spans) or (src is not None and "secrets" in src.line(line)):
                return True
    return base_ifs.get(job.id, if_text) != if_text


def _texts_at(ctx: Context, rev: str) -> _TextGuards:
    anywhere: Counter[str] = Counter()
    fork_flag = False
    for path in workflow_paths(ctx, rev):
        named, flag = ctx.of_blob("fork-guards-of-text", path, rev, partial(_text_guards, ctx, path))
        anywhere.update(named)
        fork_flag = fork_flag or flag
    return _TextGuards(anywhere, bool(anywhere) or fork_flag)


def _text_guards(ctx: Context, path: str, rev: str) -> tuple[list[str], bool]:
    """One workflow's part of `_texts_at`: the owners it names anywhere, whether it tests for a fork. A guard
    names `github.repository...`: a workflow whose text does not say `repository` has none."""
    src = ctx.source_at(path, rev)
    if src is None or "repository" not in src.text:
        return [], False
    return list(guard_owners(src.text)), bool(_NOT_FORK.search(src.text))


def _jobs_at(ctx: Context, rev: str) -> _JobGuards:
    jobs: Counter[str] = Counter()
    guards_jobs = False
    for path in workflow_paths(ctx, rev):
        in_ascend, in_jobs = ctx.of_blob("fork-guards-of-jobs", path, rev, partial(_job_guards, ctx, path))
        jobs.update(in_ascend)
        guards_jobs = guards_jobs or in_jobs
    return _JobGuards(jobs, guards_jobs)


def _job_guards(ctx: Context, path: str, rev: str) -> tuple[list[str], bool]:
    """One workflow's part of `_jobs_at`: the owners the `if:` of its Ascend jobs name (once for each Ascend
    runner of the job: each of its `ascend_jobs` entries), whether a job's own `if:` guards it. A workflow whose
    text does not say `repository` is not parsed (nor are its jobs' runners worked out)."""
    src = ctx.source_at(path, rev)
    if src is None or "repository" not in src.text:
        return [], False
    wf = workflow_at(ctx, path, rev)
    if wf is None:
        return [], False
    catalog = runner_catalog(ctx)
    in_ascend: list[str] = []
    for job in wf.jobs.values():
        named = guard_owners(_if_text(job.node))
        if named:
            for _runner in job_runners(catalog, wf, job):
                in_ascend.extend(named)
    in_jobs = any(guard_owners(t) or _NOT_FORK.search(t) for t in (_if_text(j.node) for j in wf.jobs.values()))
    return in_ascend, in_jobs


_INPUT_REF = lazyre.compile(r"\$\{\{\s*inputs\.([A-Za-z_][\w-]*)\s*\}\}")


def _fork_events(ctx: Context, path: str) -> frozenset[str]:
    """The events under which a fork runs the workflow at `path` (head) by itself, once Actions are on there."""
    return ctx.memo(("npu212-fork-events", "head", path), lambda: _find_fork_events(ctx, path, set()))


def _find_fork_events(ctx: Context, path: str, busy: set[str]) -> frozenset[str]:
    wf = workflow(ctx, path)
    if wf is None or path in busy:
        return frozenset()
    busy.add(path)
    fork = set(ctx.facts.github_actions.fork_triggers)
    on = wf.root.get("on")
    out: set[str] = set()
    for event in sorted(wf.triggers & fork):
        spec = on.get(event) if on is not None and on.is_map else None
        tags_only = (
            spec is not None
            and spec.is_map
            and spec.get("tags") is not None
            and spec.get("branches") is None
            and spec.get("branches-ignore") is None
        )
        if event == "push" and tags_only:
            continue  # tag pushes only: a fork gets none by syncing
        if event == "workflow_run":
            watched = spec.get("workflows") if spec is not None and spec.is_map else None
            names = {i.value for i in (watched.items if watched is not None and watched.is_seq else [])}
            if watched is not None and watched.is_scalar:
                names.add(watched.value)
            for other in workflow_paths(ctx, "head"):
                owf = workflow(ctx, other)
                if owf is not None and owf.root.scalar("name") in names and _find_fork_events(ctx, other, busy):
                    out.add(event)
                    break
            continue
        out.add(event)
    return frozenset(out)


def _skipped_in_forks(if_text: str, events: frozenset[str]) -> bool:
    """The job's `if:` lets it run only on events a fork does not run it for (`github.event_name == 'schedule'`),
    or only with a pull-request label (a push event has no pull request)."""
    if _PR_LABEL.search(if_text) and "||" not in if_text:
        return True
    named = {m.group("e") or m.group("f") for m in _EVENT_EQ.finditer(if_text)}
    return bool(named) and not _EVENT_NE.search(if_text) and not named & events


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
