"""NPU224: an Ascend job's `runs-on` label is a misspelling of a GitHub-hosted label or of one the project uses."""

from __future__ import annotations

from collections.abc import Iterable

from rapidfuzz.distance import OSA

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_jobs
from npu_review.checks.analysis.references import runner_labels
from npu_review.checks.analysis.runners import ACTIONLINT_CONFIGS, LABEL_FILE_GLOBS, project_labels, runner_catalog
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import ASCEND_WORKFLOW, GITHUB, WORKFLOW, WorkflowHost, workflow_host
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.runners import GITHUB_HOSTED_LABELS, SELF_HOSTED_DEFAULT_LABELS
from npu_review.checks.parsers.gha.workflow import Job, Workflow, legs
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

MAX_DISTANCE = 2
_DIGITS = lazyre.compile(r"\d+")


class RunnerLabelMisspelled(Rule):
    """A `runs-on` label differs by a letter or two from a label that exists (GitHub's own, or one the project's
    other jobs use), but equals none of them: no runner ever takes the job.

    Why: GitHub queues a job until a runner with every label it asks for is online; a misspelled label has none,
    so the job waits and is cancelled after a day, and a release or image build silently does not happen.
    sgl-kernel-npu's release job for its CANN images asked for `ununtu-22.04-arm`.

    Known labels: GitHub-hosted runner labels, the default labels of self-hosted runners (`self-hosted`,
    `linux`, `arm64`, ...), labels other jobs of the project's workflows use (at the PR's base), and those the
    project lists (`.github/actionlint.yaml`, runner-label JSON files). Ascend runner labels (by the facts' shape
    or the project's lists) are NPU211's: retired or unknown ones are reported there.

    Bad:
        jobs:
          release:
            runs-on: ununtu-22.04-arm
            container:
              image: quay.io/ascend/cann:8.3.rc1-a3-ubuntu22.04-py3.11

    Good:
        jobs:
          release:
            runs-on: ubuntu-22.04-arm
            container:
              image: quay.io/ascend/cann:8.3.rc1-a3-ubuntu22.04-py3.11

    Close means two edits from a GitHub-hosted label (a closed list), one from a project label (a swap of two
    neighbouring letters is one edit): a project's own runners may differ by a region or a size.

    Fix: spell the label as the runner has it (a suggestion is attached).

    Silent on: labels that differ from a known one only in their numbers (`linux-amd64-cpu-8` beside
    `linux-amd64-cpu-4` is another runner size, `ubuntu-23.04` another version), labels computed by an
    expression, and labels close to nothing known (a new runner of the project's own).
    """

    id = "NPU224"
    name = "runner-label-misspelled"
    severity = Severity.ERROR
    title = "runs-on label misspelled: close to a GitHub-hosted or project label, equal to none"
    kinds = frozenset({ASCEND_WORKFLOW})
    # Labels in use are read from every workflow at the PR's base, and from the project's label lists.
    context_kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW})
    context_triggers = frozenset({ASCEND_WORKFLOW})

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return ACTIONLINT_CONFIGS + LABEL_FILE_GLOBS

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        npu = ascend_jobs(ctx, src.path)
        if npu is not None and job.id not in npu:
            return
        node = job.node.get("runs-on")
        if node is None:
            return
        catalog = runner_catalog(ctx)
        host = workflow_host(src.path) or GITHUB
        seen: set[str] = set()
        for item, label in _labels(wf, job, node):
            if label in seen:
                continue
            seen.add(label)
            if catalog.runner(label) is not None:
                continue  # an Ascend runner label: NPU211's
            known = _known(ctx, src.path, job.id, host)
            if label.lower() in known:
                continue
            close = _close(label, known)
            if not close:
                continue
            line = src.line(item.line)
            shown = " or ".join(f"`{known[c]}`" for c in close[:2])
            suggestion = line.replace(label, known[close[0]], 1) if len(close) == 1 and line.count(label) == 1 else None
            yield Hit(
                src.path,
                item.line,
                f"`{label}` is no runner label {host.name} or this project's runners have; did you mean {shown}? "
                f"No runner takes a job whose label none has: it waits in the queue until {host.name} cancels it.",
                suggestion=suggestion,
            )


def _labels(wf: Workflow, job: Job, node: Node) -> Iterable[tuple[Node, str]]:
    """(node of the label, label) of each literal label of `runs-on`, matrix values resolved per leg."""
    if node.is_map:
        inner = node.get("labels")
        if inner is None:
            return
        node = inner
    items = [node] if node.is_scalar else node.items if node.is_seq else []
    for item in items:
        if not item.is_scalar:
            continue
        if "${{" not in item.value:
            yield item, item.value.strip()
            continue
        for scope in legs(wf, job):
            for val in scope.resolve(item):
                if val.known and val.text.strip():
                    # The label came from the matrix: point at the matrix entry that spells it, when it has one.
                    origin = next((line for path, line in sorted(val.origins) if path == wf.path), item.line)
                    yield _at(item, origin), val.text.strip()


def _at(node: Node, line: int) -> Node:
    return Node(node.kind, line, line, node.value) if line != node.line else node


def _known(ctx: Context, path: str, job: str, host: WorkflowHost) -> dict[str, str]:
    """Known labels, lower case -> as spelled: GitHub's (in a GitHub workflow; GitCode's hosted labels are other
    ones), the self-hosted defaults, the project's lists, and those other jobs use at the reference revision (a
    label only this job uses at head is not known by that)."""

    def build() -> dict[str, str]:
        hosted = GITHUB_HOSTED_LABELS if host is GITHUB else frozenset()
        out = {label.lower(): label for label in hosted | SELF_HOSTED_DEFAULT_LABELS}
        for rev in ("head", ctx.reference_rev):
            out.update({label.lower(): label for label in project_labels(ctx, rev)})
        out.update({label.lower(): label for label in ctx.facts.ascend_runners.labels})
        return out

    base = ctx.memo(("npu224-known", "", host.name), build)
    used = runner_labels(ctx, ctx.reference_rev)
    mine = _own_labels(ctx, path, job) if ctx.reference_rev == "head" else {}
    extra = {label.lower(): label for label, n in used.items() if n > mine.get(label, 0) and "${{" not in label}
    return {**extra, **base}


def _own_labels(ctx: Context, path: str, job: str) -> dict[str, int]:
    from npu_review.checks.analysis.workflows import workflow
    from npu_review.checks.parsers.gha.runners import runner_label_sets

    wf = workflow(ctx, path)
    if wf is None or job not in wf.jobs:
        return {}
    out: dict[str, int] = {}
    for labels in runner_label_sets(wf, wf.jobs[job]):
        for label in labels or ():
            out[label] = 1
    return out


def _close(label: str, known: dict[str, str]) -> list[str]:
    """Known labels (lower case) close to `label`, nearest first: within two edits (a swap of neighbours is one)
    of a GitHub-hosted label, whose list is closed, and within one of the project's own, which may have siblings
    one region or size apart. A difference in numbers only (another size or version) does not count, nor, for the
    project's own labels, one in the first letter (sibling names such as `d_cluster` / `h_cluster`)."""
    low = label.lower()
    if len(low) < 2 * MAX_DISTANCE + 3:
        return []
    shape = _DIGITS.sub("0", low)
    hosted = {h.lower() for h in GITHUB_HOSTED_LABELS}
    found: list[tuple[int, str]] = []
    for k in known:
        limit = MAX_DISTANCE if k in hosted else 1
        if abs(len(k) - len(low)) > limit:
            continue
        d = OSA.distance(low, k, score_cutoff=limit)
        if d > limit or d == 0 or _DIGITS.sub("0", k) == shape:
            continue
        if k not in hosted and low[0] != k[0]:
            continue  # the project's labels `d_cluster` and `h_cluster` name two clusters: a typo keeps the start
        found.append((d, k))
    found.sort()
    return [k for d, k in found if d == found[0][0]] if found else []
