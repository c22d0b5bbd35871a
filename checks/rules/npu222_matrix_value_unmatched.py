"""NPU222: a step's `if:` compares `matrix.X` with a value that no leg of the job's matrix has."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.device import ascend_jobs
from npu_review.checks.analysis.references import matrix_values
from npu_review.checks.analysis.workflows import workflow
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.gha.workflow import Job, Step, Workflow
from npu_review.checks.rule import Hit, Rule

_KEY = r"matrix\s*(?:\.\s*(?P<{n}>[A-Za-z_][\w-]*)|\[\s*'(?P<{n}q>[^']+)'\s*\])(?!\s*[.\[\w-])"
_LITERAL = r"(?:'(?P<{n}>(?:[^']|'')*)'|(?P<{n}n>-?\d+(?:\.\d+)?|true|false|null))"
_CMP = lazyre.compile(
    rf"(?<![\w.]){_KEY.format(n='k1')}\s*(?P<op1>==|!=)\s*{_LITERAL.format(n='v1')}"
    rf"|{_LITERAL.format(n='v2')}\s*(?P<op2>==|!=)\s*{_KEY.format(n='k2')}"
)


class MatrixValueUnmatched(Rule):
    """A step's `if:` compares a matrix value with one that no leg of the matrix has, so the step never runs
    (`==`) or always runs (`!=`).

    Why: steps that only some legs of an Ascend matrix need (an A3-only install, a multi-card test) are gated on
    `matrix.os == 'linux-aarch64-a3-16'`-style conditions. When the matrix is edited (a runner renamed, a device
    token changed, an entry dropped) and the condition is not, the gated step silently stops running on every
    leg: the test it guards is never run again, and the job stays green.

    The legs are GitHub's expansion of the matrix (`include` and `exclude` applied); comparisons follow GitHub's
    (strings ignore case, `'8'` equals `8`). A key that no leg has at all is also reported (`matrix.device`
    where the axis is `devices`).

    Bad:
        strategy:
          matrix:
            os: [linux-aarch64-a2b3-4, linux-aarch64-a3-16]
        steps:
          - name: Multi-card tests
            if: matrix.os == 'linux-aarch64-a2-4'
            run: pytest -sv tests/e2e/multicard

    Good:
        strategy:
          matrix:
            os: [linux-aarch64-a2b3-4, linux-aarch64-a3-16]
        steps:
          - name: Multi-card tests
            if: matrix.os == 'linux-aarch64-a2b3-4'
            run: pytest -sv tests/e2e/multicard

    Fix: compare with a value the matrix has (the message lists them), or drop the step.

    Silent on: matrices built by an expression (`fromJSON(...)`) or with non-scalar values, and comparisons
    through functions (`contains(matrix.os, 'a3')`, `startsWith(...)`).
    """

    id = "NPU222"
    name = "matrix-value-unmatched"
    severity = Severity.WARNING
    title = "Step if: compares matrix.X with a value no matrix leg has"
    kinds = frozenset({ASCEND_WORKFLOW})
    needles = ("matrix",)

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if job.matrix_node is None:
            return
        npu = ascend_jobs(ctx, src.path)
        if npu is not None and job.id not in npu:
            return
        values = matrix_values(job)
        if values is None or not values:
            return
        # On a change that edits the matrix, a condition it leaves unmatched is the change's doing though its line
        # is unchanged (related: the matrix line it wrote). A value renamed (`npu` -> `npu-a2`, `npu-a3`) leaves
        # the step off the legs it was written for; a value dropped with its legs leaves a dead step (a notice).
        edited = (
            []
            if ctx.audit
            else [
                n
                for n in range(job.matrix_node.line, (job.matrix_node.end_line or job.matrix_node.line) + 1)
                if ctx.is_added_line(src.path, n)
            ]
        )
        before = _base_values(ctx, src.path, job.id) if edited else None
        for step in job.steps:
            for hit, key, value in _step(src, step, values):
                if edited and not ctx.is_added_line(hit.path, hit.line):
                    had = (before or {}).get(key, set())
                    if not any(_equal(v, value) for v in had):
                        continue  # unmatched before the change too: not its doing
                    new = values.get(key, set()) - had
                    renamed = any(_derived(v, value) for v in new)
                    hit = dataclasses.replace(
                        hit,
                        message=hit.message
                        if renamed
                        else hit.message.replace(
                            "Compare with a value the matrix has.",
                            f"This change drops `{value}` from the matrix, which leaves this test dead: update it "
                            "with the matrix.",
                        ),
                        severity=None if renamed else Severity.NOTICE,
                        related=(Related(src.path, edited[0], "the matrix this change edits"),),
                        caused_by_change=True,
                    )
                yield hit


def _base_values(ctx: Context, path: str, job_id: str) -> dict[str, set[str]] | None:
    """The matrix values of the job before the change (None: no such job or matrix, or not static)."""
    wf = workflow(ctx, path, "base")
    job = wf.jobs.get(job_id) if wf is not None else None
    return matrix_values(job) if job is not None else None


def _derived(new: str, old: str) -> bool:
    """`new` renames `old`: the old value is one of its words (`npu` -> `npu-a2`, `910b` -> `ascend910b`)."""
    n, o = new.lower(), old.lower()
    return n != o and (o in re.split(r"[-_.]", n) or n.startswith(o) or n.endswith(o))


def _step(src: SourceFile, step: Step, values: dict[str, set[str]]) -> Iterator[tuple[Hit, str, str]]:
    node = step.node.get("if")
    if node is None or not node.is_scalar or "matrix" not in node.value:
        return
    text = node.value
    for m in _CMP.finditer(text):
        key = m.group("k1") or m.group("k1q") or m.group("k2") or m.group("k2q")
        op = m.group("op1") or m.group("op2")
        quoted = m.group("v1") if m.group("v1") is not None else m.group("v2")
        value = quoted.replace("''", "'") if quoted is not None else (m.group("v1n") or m.group("v2n"))
        if key is None or value is None:
            continue
        have = values.get(key)
        if have is not None and any(_equal(v, value) for v in have):
            continue
        line = _line_of(src, node.line, node.end_line, m.group(0))
        if have is None:
            what = f"no leg of the job's matrix has a key `{key}` (keys: {', '.join(f'`{k}`' for k in sorted(values))})"
        else:
            shown = ", ".join(f"`{v}`" for v in sorted(have)[:6]) + (" ..." if len(have) > 6 else "")
            what = f"no leg of the job's matrix has `{key}: {value}` (its values: {shown})"
        effect = "the step never runs" if op == "==" else "the condition is always true"
        hit = Hit(src.path, line, f"`{m.group(0).strip()}`: {what}, so {effect}. Compare with a value the matrix has.")
        yield hit, key, value


def _equal(a: str, b: str) -> bool:
    """GitHub's `==` on a matrix value and a literal: strings ignore case, numbers compare as numbers."""
    if a.lower() == b.lower():
        return True
    try:
        return float(a) == float(b)
    except ValueError:
        return False


def _line_of(src: SourceFile, first: int, last: int, needle: str) -> int:
    probe = needle.strip()[:40]
    for n in range(first, max(first, last) + 1):
        if probe and probe in src.line(n):
            return n
    return first
