"""NPU211: an Ascend job's runner label is unknown or retired, or does not fit the job's image or NPU count."""

from __future__ import annotations

import posixpath
import re
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from npu_review.checks import globs, lazyre
from npu_review.checks.analysis.images import grammar
from npu_review.checks.analysis.runners import (
    ACTIONLINT_CONFIGS,
    LABEL_FILE_GLOBS,
    AscendJob,
    runner_catalog,
    runner_jobs,
)
from npu_review.checks.analysis.workflows import run_script, workflow, workflow_paths
from npu_review.checks.context import Context
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_WORKFLOW, NPU_SCRIPT, SHELL, WORKFLOW, YAML, in_ci_folders
from npu_review.checks.model import Severity
from npu_review.checks.parsers import shell
from npu_review.checks.parsers.gha.calls import local_target
from npu_review.checks.parsers.gha.runners import Runner, RunnerCatalog, runner_label_sets
from npu_review.checks.parsers.imagetags import parse_ref
from npu_review.checks.rule import Hit, Rule

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Job, Scope, Step, Workflow

_VAR_REF = lazyre.compile(r"\$\{?([A-Za-z_]\w*)")
_DIRECT_REF = lazyre.compile(r"[\"']?\$\{?([A-Za-z_]\w*)\}?[\"']?\Z")
MAX_SCRIPT_BYTES = 400_000


@dataclass(frozen=True)
class _Count:
    """How many NPUs a job asks for on one node, and where that is written."""

    value: int
    path: str
    line: int
    what: str


class RunnerLabelMismatch(Rule):
    """An Ascend job asks for a runner label that no runner serves, or a runner that does not fit the job.

    Why: a job whose `runs-on` label has no runner waits in the queue until GitHub cancels it (24 h), and the
    PR check stays yellow: #5734 added a nightly job on `linux-aarch64-a2-8` two weeks after #5578 had moved
    every job to `linux-aarch64-a2b3-8` (fixed in #5887). A job that pulls the `a3` image on an A2 runner (or
    the `910b` image on an A3 runner) fails at the first NPU call, and a job that asks for more NPUs per node
    than the runner has fails when Ray places the workers: #7444 moved a nightly job from
    `linux-aarch64-a3-16` to `linux-aarch64-a2b3-8` while its script still defaulted to `NGPUS_PER_NODE=16`
    (fixed in #7456).

    The labels in use are those of at least two other Ascend jobs at the PR's base (a migration that renames
    every job in one PR is compared with the base, not with the history), the labels the project lists itself
    (`.github/actionlint.yaml` `self-hosted-runner: labels:`, and runner-label JSON files under `.github/`
    such as `{"linux-aarch64-a2b3-4": {"chip": "a2", "npu_num": 4}}`, whose `npu_num` is the capacity and
    `chip: cpu` marks a runner without NPUs), plus the labels the facts list. A `-0` label is a launcher
    (capacity unknown). A2 images (`910b`) need an `a2b3` runner, A3 images an `a3-*` runner. The NPU count is read from
    `trainer.n_gpus_per_node` in the job's commands and in the scripts it runs, with `NGPUS_PER_NODE`-style
    variables the job sets. Job names are not read: a job named `..._a3` that pulls the 910b image on an a2b3
    runner is fine. At a revision whose Ascend jobs use none of the labels the facts or the project's lists
    know (an old one), which labels had runners then is unknown, and only the image device and NPU count are
    checked.

    A job that calls a reusable workflow with a matrix of test cases, each naming its runner and its test
    config (`with: runner: ${{ matrix.test_config.os }}` and `config_file_path: ${{
    matrix.test_config.config_file_path }}`, the callee running on `${{ inputs.runner }}`), is checked per
    entry: the config (under `tests/**/config*/`: at the entry's `config_base_path`, or the only YAML file of
    that name) starts a vLLM
    server on `--tensor-parallel-size` x `--pipeline-parallel-size` x `--data-parallel-size` NPUs (data
    parallel not counted when `--data-parallel-size-local` or `--headless` splits it over nodes), which must
    fit the runner: vllm-ascend #8681 ran a TP 8 config on `linux-aarch64-a2b3-4` (fixed in #8957). The
    entries of a test matrix kept in a file under `.github/**/config*/` (`{name, os, config_file_path}`, as
    vllm-ascend's `.github/workflows/configs/nightly_config.yaml`) are checked the same way.

    In the examples, SWR_CN stands for swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci.

    Bad (a retired label, while the other Ascend jobs run on `linux-aarch64-a2b3-8`):
        runs-on: linux-aarch64-a2-8

    Bad (an A3 image on an A2 runner):
        runs-on: linux-aarch64-a2b3-8
        container:
          image: SWR_CN/verl/verl:latest-vllm-a3-ubuntu

    Good:
        runs-on: linux-aarch64-a3-16
        container:
          image: SWR_CN/verl/verl:latest-vllm-a3-ubuntu

    Fix: use a label the other Ascend jobs use for the same device, pull the image of the runner's device, and
    keep `NGPUS_PER_NODE`/`trainer.n_gpus_per_node` at most the runner's NPU count (8 on A2, 16 on
    `linux-aarch64-a3-16`).
    """

    id = "NPU211"
    name = "runner-label-mismatch"
    severity = Severity.ERROR
    title = "Ascend job runner label unknown, retired, or not matching the image or NPU count"
    # YAML: a change to a matrix file or a test config alone concerns the rule too (it reads them by path).
    kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW, YAML})
    context_kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW, NPU_SCRIPT})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return ACTIONLINT_CONFIGS + LABEL_FILE_GLOBS + TEST_CONFIG_GLOBS + MATRIX_FILE_GLOBS

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        rev = ctx.reference_rev
        # How many of the reference's Ascend jobs use each label, and how many of those are the job's own: what
        # the label check needs first of the other jobs (most labels are in use or current; see `_label`). Read
        # on first need: a change whose jobs run on current labels parses no other workflow for them.
        found: dict[str, tuple[list[AscendJob], Counter[str], Counter[tuple[str, str, str]]]] = {}

        def reference() -> tuple[list[AscendJob], Counter[str], Counter[tuple[str, str, str]]]:
            if not found:
                jobs = runner_jobs(ctx, rev)
                found[""] = (
                    jobs,
                    Counter(aj.runner.label for aj in jobs),
                    Counter((aj.path, aj.job, aj.runner.label) for aj in jobs),
                )
            return found[""]

        catalog = runner_catalog(ctx)
        concerned = _concerned(ctx)
        for path in workflow_paths(ctx, "head"):
            if not concerned(path):
                continue
            wf = workflow(ctx, path)
            if wf is None:
                continue
            for job in wf.jobs.values():
                runs_on = job.node.get("runs-on")
                if runs_on is None:
                    continue
                runners: dict[str, Runner] = {}
                for labels in runner_label_sets(wf, job):
                    runner = catalog.of(labels) if labels is not None else None
                    if runner is not None:
                        runners.setdefault(runner.label, runner)
                if not runners:
                    continue
                others: list[AscendJob] | None = None
                for runner in runners.values():
                    if runner.status == "current" or not ctx.is_added_line(path, runs_on.line):
                        continue  # `_label` returns at once: the label is served, or the line is not the change's
                    _jobs, total, own = reference()
                    if total[runner.label] - own[(path, job.id, runner.label)] >= 2:
                        continue  # likewise
                    if others is None:
                        others = [aj for aj in _jobs if (aj.path, aj.job) != (path, job.id)]
                    yield from self._label(ctx, wf, job, runner, runs_on.line, others)
                if len(runners) == 1:
                    (runner,) = runners.values()
                    yield from self._image(ctx, wf, job, runner, runs_on.line)
                    yield from self._count(ctx, wf, job, runner, runs_on.line)

        yield from self._test_configs(ctx)

    # -- does a matrix entry's test config fit its runner? ----------------------------------------------------------
    def _test_configs(self, ctx: Context) -> Iterator[Hit]:
        """Matrix entries that each name a runner and a test config: a caller job's (`uses:
        ./.github/workflows/X` with `runner: ${{ matrix.test_config.os }}` and `config_file_path: ${{
        matrix.test_config.config_file_path }}`), and the entries of a matrix file under `.github/**/config*/`
        (`{name, os, config_file_path}`): the NPUs the config's vLLM server asks for against the runner's."""
        catalog = runner_catalog(ctx)
        concerned = _concerned(ctx)
        found: list[tuple[str, str, _Entry]] = []
        for path in workflow_paths(ctx, "head"):
            if not concerned(path):
                continue
            wf = workflow(ctx, path)
            if wf is None:
                continue
            for job in wf.jobs.values():
                found += [(path, f" of job `{job.id}`", e) for e in matrix_test_entries(ctx, wf, job)]
        for path in ctx.paths_matching(MATRIX_FILE_GLOBS):
            found += [(path, "", e) for e in matrix_file_entries(ctx, path, catalog)]
        for path, of_job, entry in found:
            runner = catalog.runner(entry.runner)
            if runner is None or runner.npus is None:
                continue
            need = config_npus(ctx, entry.config)
            if need is None or need.value <= runner.npus:
                continue
            at = _first_added(ctx, [(path, entry.runner_line), (path, entry.config_line), (need.path, need.line)])
            if at is None:
                continue
            yield Hit(
                at[0],
                at[1],
                f"Matrix entry `{entry.name}`{of_job} runs on `{runner.label}`, which has {runner.npus} NPUs, but "
                f"its test config starts vLLM on {need.value} ({need.what}, {need.path}:{need.line}): the server "
                f"cannot start. Use a runner with at least {need.value} NPUs or lower the parallel sizes.",
            )

    # -- is the label served? ------------------------------------------------------------------------------------
    def _label(
        self, ctx: Context, wf: Workflow, job: Job, runner: Runner, line: int, others: list[AscendJob]
    ) -> Iterator[Hit]:
        use = Counter(aj.runner.label for aj in others)
        if use[runner.label] >= 2 or runner.status == "current":
            return
        catalog = runner_catalog(ctx)
        era = {aj.runner.label for aj in runner_jobs(ctx, ctx.reference_rev)}
        if not era and not ctx.audit:
            # No Ascend job at the base (the first Ascend workflow of a repository): nothing says which labels
            # are served at that time, and the retirements in the facts may postdate the change. Unknown.
            return
        if era and not era & set(catalog.current):
            # The repository predates the labels the facts know (an old revision): which labels were
            # served then is not known, so only the base's own usage could tell, and it says too little.
            return
        if not ctx.is_added_line(wf.path, line):
            return
        in_use = [label for label, n in use.most_common() if n >= 2]
        current = dict.fromkeys(in_use + list(catalog.current))
        same = [
            label
            for label in current
            if (r := catalog.runner(label)) is not None and r.device == runner.device and r.npus == runner.npus
        ]
        where = "the base of this change" if not ctx.audit else "this revision"
        listing = ", ".join(f"`{label}` ({use[label]} jobs)" for label in in_use[:4]) or "none"
        severity = None
        effect = "the job would wait for a runner until it times out"
        # The labels known to be served come only from the repository's own list (`.github/actionlint.yaml`):
        # a runner of a shared pool may have this label too (fla-org's `linux-aarch64-a2-1`, sweep-r30, judged
        # false as "no runner serves it"). What is known: the list leaves it out.
        listed_only = not in_use and not catalog.retired and all(label in catalog.project for label in current)
        if runner.status == "retired":
            head = f"`{runner.label}` is a retired Ascend runner label: {runner.note}"
        elif listed_only:
            sources = sorted({catalog.project[label].source for label in current})
            head = (
                f"`{runner.label}` is not among the Ascend runner labels {' and '.join(sources)} lists "
                f"({', '.join(f'`{label}`' for label in list(current)[:4])}), and no other Ascend job uses it"
            )
            effect = "unless a runner has it, the job waits for one until it times out. List it there if one does"
            severity = Severity.WARNING
        else:
            head = (
                f"No Ascend runner serves `{runner.label}`: it is not a known label and not used by other Ascend jobs"
            )
        if runner.status != "retired" and not ctx.audit and self._migration(ctx, runner.label, use):
            head = f"`{runner.label}` is a new Ascend runner label (no Ascend job at the base uses it)"
            effect = "fine if the runners were renamed; otherwise the jobs wait for a runner until they time out"
            severity = Severity.NOTICE
        src = ctx.source(wf.path)
        suggestion = None
        if len(same) == 1 and src is not None and src.line(line).count(runner.label) == 1:
            suggestion = src.line(line).replace(runner.label, same[0])
        hint = f" Use `{same[0]}` for the same device and NPU count." if len(same) == 1 else ""
        yield Hit(
            wf.path,
            line,
            f"{head}; {effect}. Labels in use at {where}: {listing}.{hint}",
            suggestion=suggestion,
            severity=severity,
        )

    def _migration(self, ctx: Context, label: str, use: Counter[str]) -> bool:
        """This change moves at least two jobs to a label no job used before (a runner migration)."""
        if use[label]:
            return False
        moved = [
            aj for aj in runner_jobs(ctx, "head") if aj.runner.label == label and ctx.is_added_line(aj.path, aj.line)
        ]
        return len(moved) >= 2

    # -- does the image fit the runner? --------------------------------------------------------------------------
    def _image(self, ctx: Context, wf: Workflow, job: Job, runner: Runner, line: int) -> Iterator[Hit]:
        from npu_review.checks.parsers.gha.workflow import legs

        if runner.device is None:
            return
        g = grammar(ctx)
        container = job.node.get("container")
        node = (
            container
            if container is not None and container.is_scalar
            else (container.get("image") if container is not None else None)
        )
        if node is None or not node.is_scalar:
            return
        devices: set[str | None] = set()
        tags: set[str] = set()
        for scope in legs(wf, job):
            for val in scope.resolve(node):
                ref = parse_ref(val.text) if val.known else None
                if ref is None or ref.tag is None or g.family(ref) is None:
                    return  # unknown image: silent
                info = g.classify(ref.tag)
                devices.add(info.device)
                tags.add(ref.tag)
        if len(devices) != 1 or None in devices:
            return
        (device,) = devices
        if device == runner.device:
            return
        at = _first_added(ctx, [(wf.path, line), (wf.path, node.line)])
        if at is None:
            return
        yield Hit(
            at[0],
            at[1],
            f"Job `{job.id}` pulls the {device} image (`{sorted(tags)[0]}`) on `{runner.label}`, a {runner.device} "
            f"runner: the image's CANN kernels do not run on that device. Pull the {runner.device} image or run the "
            f"job on a {device} runner.",
        )

    # -- does the NPU count fit? ---------------------------------------------------------------------------------
    def _count(self, ctx: Context, wf: Workflow, job: Job, runner: Runner, line: int) -> Iterator[Hit]:
        if runner.npus is None:
            return
        counts = list(_job_counts(ctx, wf, job))
        too_many = [c for c in counts if c.value > runner.npus]
        if not too_many:
            return
        worst = max(too_many, key=lambda c: c.value)
        candidates = [(wf.path, line)] + [(c.path, c.line) for c in too_many]
        at = _first_added(ctx, candidates)
        if at is None:
            return
        yield Hit(
            at[0],
            at[1],
            f"Job `{job.id}` asks for {worst.value} NPUs per node ({worst.what}, {worst.path}:{worst.line}) but "
            f"runs on `{runner.label}`, which has {runner.npus}: Ray cannot place the workers. Use at most "
            f"{runner.npus} or a larger runner.",
        )


def _concerned(ctx: Context) -> Callable[[str], bool]:
    """Whether a workflow at head can carry or cause a finding of this change: every finding is on an added line
    of the workflow itself, of a script one of its steps runs (`bash x.sh`, named literally) or of a test config
    its matrix names (literally): so the change touches the workflow, or the workflow's text names the file name
    of a file the change touches. Every workflow in an audit."""
    if ctx.audit:
        return lambda _path: True

    def build() -> frozenset[str]:
        names = sorted({p.rsplit("/", 1)[-1] for p in ctx.changeset.changes})
        paths = workflow_paths(ctx, "head")
        touched = [p for p in paths if ctx.touched(p)]
        # (found without reading the others where the tree can search its files)
        return frozenset(touched).union(ctx.paths_mentioning(names, [p for p in paths if not ctx.touched(p)]))

    return ctx.memo(("npu211-concerned", "head", ""), build).__contains__


def _first_added(ctx: Context, candidates: list[tuple[str, int]]) -> tuple[str, int] | None:
    for path, line in candidates:
        if ctx.is_added_line(path, line):
            return path, line
    return None


# -- NPU counts -------------------------------------------------------------------------------------------------


def _job_counts(ctx: Context, wf: Workflow, job: Job) -> Iterator[_Count]:
    from npu_review.checks.parsers.gha.workflow import legs

    section = ctx.facts.ascend_runners
    key, env_names = section.npu_count_key, set(section.npu_count_env)
    scopes = list(legs(wf, job))
    scope = scopes[0] if len(scopes) == 1 else None
    for step in job.steps:
        if step.run is None:
            continue
        yield from _run_counts(ctx, wf, job, step, scope, key, env_names)


def _caller_env(wf: Workflow, job: Job, step: Step, scope: Scope | None) -> dict[str, tuple[str | None, int]]:
    """Variables the workflow sets for a step (workflow, job, step `env:`): value (None = unknown) and line."""
    out: dict[str, tuple[str | None, int]] = {}
    for nodes in (wf.env, job.env, step.env):
        for name, node in nodes.items():
            value = None
            if node.is_scalar and scope is not None:
                vals = scope.resolve(node)
                if len(vals) == 1 and vals[0].known:
                    value = vals[0].text
            out[name] = (value, node.line)
    return out


def _run_counts(
    ctx: Context, wf: Workflow, job: Job, step: Step, scope: Scope | None, key: str, env_names: set[str]
) -> Iterator[_Count]:
    assert step.run is not None
    run_line = step.run.line
    lines = step.run.text_lines()
    if not lines:
        return
    script = run_script(ctx, "\n".join(t for _, t in lines) + "\n")
    if script.error is not None:
        return
    view = script.view(True, ctx.facts.launchers)

    def phys(n: int) -> int:
        return lines[n - 1][0] if 1 <= n <= len(lines) else run_line

    base_env: dict[str, tuple[str | None, int]] | None = None  # read for the first script call (most steps have none)
    by_index = {inv.index: inv for inv in view.invocations}
    scripts: set[int] = set()
    for call in view.calls:
        first = call.words[0] if call.words else ""
        if call.program in ("bash", "sh"):
            target = call.argument
        elif first.endswith(".sh"):
            target = first
        else:
            continue
        scripts.add(call.index)
        inv = by_index.get(call.index)
        eff = inv.effective(key) if inv is not None else None
        if eff is not None and eff.override is not None:
            value = shell.as_int(eff.value)
            if value is not None:
                yield _Count(value, wf.path, phys(eff.override.line), f"`{key}={value}`")
            continue
        if base_env is None:
            base_env = _caller_env(wf, job, step, scope)
        env = dict(base_env)
        for name in env_names | {a.name for a in view.assignments}:
            ev = view.env(name, at=call.index)
            if ev is not None:
                env[name] = (ev.value if isinstance(ev.value, str) else None, phys(ev.line))
        for a in view.assignments:
            if a.kind == "prefix" and a.index == call.index:
                env[a.name] = (a.raw if a.raw is not None and "$" not in a.raw else None, phys(a.line))
        yield from _script_counts(ctx, target, env, key, wf.path)
    for inv in view.invocations:
        if inv.index in scripts:
            continue
        eff = inv.effective(key)
        if eff.override is None:
            continue
        value = shell.as_int(eff.value)
        if value is not None:
            yield _Count(value, wf.path, phys(eff.override.line), f"`{key}={value}`")


def _script_counts(
    ctx: Context, target: str, env: dict[str, tuple[str | None, int]], key: str, wf_path: str
) -> Iterator[_Count]:
    path = re.sub(r"^(\./)+", "", target.strip("\"'"))
    if not path.endswith(".sh") or "$" in path:
        return
    src = ctx.source(path)
    if src is None or len(src.text) > MAX_SCRIPT_BYTES or SHELL not in src.kinds:
        return
    script = ctx.shell(src)
    if script.error is not None:
        return
    view = script.view(True, ctx.facts.launchers)
    for inv in view.invocations:
        eff = inv.effective(key)
        if eff.override is None or eff.override.raw is None:
            continue
        raw = eff.override.raw
        names = set(_VAR_REF.findall(raw))
        for source_line in eff.override.sources:
            m = re.match(r"\s*(?:export\s+)?([A-Za-z_]\w*)=[\"']?\$\{\1:?-", src.line(source_line))
            if m:
                names.add(m.group(1))
        given = [n for n in names if n in env]
        if given:
            direct = _DIRECT_REF.match(raw)
            if direct is None or direct.group(1) not in env or len(given) > 1:
                continue  # the caller's value mixes with the script's: unknown
            value_text, line = env[direct.group(1)]
            value = shell.as_int(value_text) if value_text is not None else None
            if value is not None:
                yield _Count(value, wf_path, line, f"`{direct.group(1)}={value}` passed to {path}")
            continue
        value = shell.as_int(eff.value)
        if value is None:
            continue
        at = eff.override.sources[0] if eff.override.sources else eff.override.line
        yield _Count(value, path, at, f"`{key}` resolves to {value}")


# -- test configs named by matrix entries ------------------------------------------------------------------------

# Where test configs named by matrix entries are read (the App fetches these with the workflows).
TEST_CONFIG_GLOBS = ("tests/**/config*/**/*.yaml", "tests/**/config*/**/*.yml")
# Test matrices kept outside the workflows (vllm-ascend's .github/workflows/configs/nightly_config.yaml).
MATRIX_FILE_GLOBS = in_ci_folders("**/config*/*.yaml", "**/config*/*.yml")
_RUNNER_KEYS = ("os", "runner", "runs-on", "runs_on")
_MATRIX_REF = lazyre.compile(r"\$\{\{\s*matrix\.([A-Za-z_][\w-]*)(?:\.([A-Za-z_][\w-]*))?\s*\}\}")
_INPUT_REF = lazyre.compile(r"\$\{\{\s*inputs\.([A-Za-z_][\w-]*)\s*\}\}")
_PARALLEL = {
    "--tensor-parallel-size": "tp",
    "-tp": "tp",
    "--pipeline-parallel-size": "pp",
    "-pp": "pp",
    "--data-parallel-size": "dp",
    "-dp": "dp",
}
# DP spread over nodes: the local share is not the whole size.
_DP_ELSEWHERE = ("--data-parallel-size-local", "--data-parallel-address", "--headless", "--data-parallel-start-rank")


@dataclass(frozen=True)
class _Entry:
    name: str
    runner: str
    runner_line: int
    config: str  # the config file's path at head
    config_line: int


def matrix_test_entries(ctx: Context, wf: Workflow, job: Job) -> Iterator[_Entry]:
    """The (runner, test config) pairs a caller job's matrix entries give a reusable workflow whose job runs on
    `${{ inputs.<runner input> }}`, each config found at head (under the entry's `config_base_path`, as a path,
    or as the only YAML file of that name)."""
    uses = job.node.scalar("uses") or ""
    with_node = job.node.get("with")
    target = local_target(uses, wf.path)
    if target is None or with_node is None or job.matrix_node is None:
        return
    callee = workflow(ctx, target)
    if callee is None:
        return
    runner_inputs = set()
    for cjob in callee.jobs.values():
        runs_on = cjob.node.get("runs-on")
        m = _INPUT_REF.fullmatch(runs_on.value.strip()) if runs_on is not None and runs_on.is_scalar else None
        if m is not None:
            runner_inputs.add(m.group(1))
    refs: dict[str, tuple[str, str | None]] = {}
    for key, _, node in with_node.entries():
        m = _MATRIX_REF.fullmatch(node.value.strip()) if node.is_scalar else None
        if m is not None:
            refs[key] = (m.group(1), m.group(2))
    runner_ref = next((refs[k] for k in sorted(runner_inputs) if k in refs), None)
    config_ref = next((v for k, v in refs.items() if "config" in k and k not in runner_inputs), None)
    if runner_ref is None or config_ref is None or runner_ref[0] != config_ref[0]:
        return
    group, runner_key, config_key = runner_ref[0], runner_ref[1], config_ref[1]
    if runner_key is None or config_key is None:  # `matrix.os` + `matrix.config`: the entries are `include` maps
        group, runner_key, config_key = "include", runner_ref[0], config_ref[0]
    items = job.matrix_node.get(group)
    for item in items.items if items is not None and items.is_seq else []:
        if not item.is_map:
            continue
        r, c = item.get(runner_key), item.get(config_key)
        if r is None or c is None or not r.is_scalar or not c.is_scalar or "${{" in r.value + c.value:
            continue
        config = _config_path(ctx, c.value.strip(), item.scalar("config_base_path"))
        if config is not None:
            yield _Entry(item.scalar("name") or c.value.strip(), r.value.strip(), r.line, config, c.line)


def matrix_file_entries(ctx: Context, path: str, catalog: RunnerCatalog) -> Iterator[_Entry]:
    """Mappings of a matrix file that name an Ascend runner (`os:` / `runner:`) and a `config_file_path`."""
    src = ctx.source(path)
    if src is None or "config_file_path" not in src.text or len(src.text) > MAX_SCRIPT_BYTES:
        return
    doc = ctx.yaml(src)
    if doc.root is None:
        return
    for _, node in doc.root.walk():
        if not node.is_map:
            continue
        r = next((node.get(k) for k in _RUNNER_KEYS if node.get(k) is not None), None)
        c = node.get("config_file_path")
        if r is None or c is None or not r.is_scalar or not c.is_scalar or "${{" in r.value + c.value:
            continue
        if catalog.runner(r.value.strip()) is None:
            continue
        config = _config_path(ctx, c.value.strip(), node.scalar("config_base_path"))
        if config is not None:
            yield _Entry(node.scalar("name") or c.value.strip(), r.value.strip(), r.line, config, c.line)


def _config_path(ctx: Context, name: str, base: str | None) -> str | None:
    if not name.endswith((".yaml", ".yml")) or name.startswith("/"):
        return None
    if base:
        path = posixpath.normpath(posixpath.join(base.strip(), name))
        return path if globs.match_any(path, TEST_CONFIG_GLOBS) and ctx.changeset.head.exists(path) else None
    if "/" in name:
        return name if globs.match_any(name, TEST_CONFIG_GLOBS) and ctx.changeset.head.exists(name) else None
    index = ctx.memo(("yaml-by-name", "head", ""), lambda: _yaml_by_name(ctx))
    found = index.get(name.rsplit("/", 1)[-1], [])
    return found[0] if len(found) == 1 else None


def _yaml_by_name(ctx: Context) -> dict[str, list[str]]:
    out: dict[str, list[str]] = {}
    for p in ctx.paths_matching(TEST_CONFIG_GLOBS):
        out.setdefault(p.rsplit("/", 1)[-1], []).append(p)
    return out


def config_npus(ctx: Context, path: str) -> _Count | None:
    """The most NPUs one vLLM server of a test config asks for: the product of its parallel sizes over each
    argument list (`server_cmd:` and the like), where that list says so."""
    src = ctx.source(path)
    if (
        src is None
        or len(src.text) > MAX_SCRIPT_BYTES
        or (not any(w in src.text for w in ("parallel-size", "-tp", "-pp", "-dp")))
    ):
        return None
    doc = ctx.yaml(src)
    if doc.root is None:
        return None
    best: _Count | None = None
    for _, node in doc.root.walk():
        if not node.is_seq or not node.items or not all(i.is_scalar for i in node.items):
            continue
        args = [(i.value.strip(), i.line) for i in node.items]
        words: list[tuple[str, int]] = []
        for text, line in args:
            for w in text.split():
                if w.startswith("-") and "=" in w:
                    flag, given = w.split("=", 1)
                    words += [(flag, line), (given, line)]
                else:
                    words.append((w, line))
        sizes: dict[str, tuple[int, int]] = {}
        for k, (w, line) in enumerate(words):
            kind = _PARALLEL.get(w)
            if kind is not None and k + 1 < len(words) and words[k + 1][0].isdigit():
                sizes[kind] = (int(words[k + 1][0]), line)
        if any(w in _DP_ELSEWHERE for w, _ in words):
            sizes.pop("dp", None)
        if not sizes:
            continue
        total = 1
        for n, _ in sizes.values():
            total *= n
        what = " x ".join(f"{_FLAG[k]} {sizes[k][0]}" for k in ("tp", "pp", "dp") if k in sizes)
        at = sizes.get("tp", next(iter(sizes.values())))[1]
        if best is None or total > best.value:
            best = _Count(total, path, at, f"`{what}`")
    return best


_FLAG = {"tp": "--tensor-parallel-size", "pp": "--pipeline-parallel-size", "dp": "--data-parallel-size"}
