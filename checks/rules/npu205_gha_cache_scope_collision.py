"""NPU205: two Ascend image builds write the same GitHub Actions cache scope (`cache-to: type=gha`)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import kinds
from npu_review.checks.analysis.images import grammar
from npu_review.checks.analysis.workflows import workflow
from npu_review.checks.context import Context
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.values import WILD
from npu_review.checks.parsers.gha.workflow import Scope, legs
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

# buildx's gha cache backend uses this scope when `scope=` is not given.
DEFAULT_SCOPE = "buildkit"


@dataclass(frozen=True)
class _Writer:
    path: str
    line: int
    job: str
    leg: str  # "arch=linux/amd64" or ""
    scope: str
    explicit: bool
    by_hand: bool = False  # the workflow runs only when someone starts it (`workflow_dispatch` alone)

    @property
    def who(self) -> str:
        leg = f" [{self.leg}]" if self.leg else ""
        return f"{self.path}:{self.line} (job `{self.job}`{leg})"


class GhaCacheScopeCollision(Rule):
    """Two Ascend image builds export their layer cache to the same GitHub Actions cache scope.

    Why: `cache-to: type=gha` stores one cache per scope and repository branch, and the last writer wins. When
    the A2 and A3 builds, the latest and the release build, or the amd64 and arm64 legs of a matrix write the
    same scope (a missing `scope=` is the shared default `buildkit`), each run overwrites the cache of the other
    and every build starts cold: the 2-3 hour Ascend image builds then hit the job time limit or OOM. verl hit
    this with `scope=ascend-${{ matrix.tag }}` in both the a2 and the a3 workflow (#7176, fixed in #7311).

    A notice, not a warning, when only builds started by hand (`on: workflow_dispatch` alone) share the scope
    with this one: the overwrite happens on the days someone runs them.

    Not reported: `cache-from` of another job's scope (reading a shared cache on purpose is fine), scopes that
    cannot be evaluated (`${{ github.ref_name }}`), and one matrix leg writing its own scope.

    Bad (the A2 and the A3 build, each a matrix of `tag: [amd64, arm64]`, write the same scopes):
        # .github/workflows/docker-build-ascend-a2.yml
        cache-to: type=gha,mode=max,scope=ascend-${{ matrix.tag }}
        # .github/workflows/docker-build-ascend-a3.yml
        cache-to: type=gha,mode=max,scope=ascend-${{ matrix.tag }}

    Bad (no scope at all: every build writes the default scope `buildkit`):
        # .github/workflows/docker-build-ascend-a2.yml
        cache-to: type=gha,mode=max

    Good:
        # .github/workflows/docker-build-ascend-a2.yml
        cache-from: type=gha,scope=ascend-a2-${{ matrix.tag }}
        cache-to: type=gha,mode=max,scope=ascend-a2-${{ matrix.tag }}
        # .github/workflows/docker-build-ascend-a3.yml
        cache-from: type=gha,scope=ascend-a3-${{ matrix.tag }}
        cache-to: type=gha,mode=max,scope=ascend-a3-${{ matrix.tag }}

    Fix: give every build job a scope of its own that includes the device, the image variant and the matrix
    leg, e.g. `scope=ascend-a3-v080-${{ matrix.tag }}`.
    """

    id = "NPU205"
    name = "gha-cache-scope-collision"
    severity = Severity.WARNING
    title = "Ascend image builds share a GitHub Actions cache scope"
    kinds = frozenset({kinds.ASCEND_WORKFLOW, kinds.WORKFLOW})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        if not ctx.audit and not any(
            ctx.is_added_line(w.path, w.line) for w in self._writers(ctx, sorted(ctx.changeset.changes))
        ):
            return  # a change's finding is on a cache-to line it adds: none in the files it touches, none anywhere
        writers: dict[str, list[_Writer]] = defaultdict(list)
        for w in self._writers(ctx, ctx.candidate_paths(frozenset({kinds.ASCEND_WORKFLOW}))):
            writers[w.scope].append(w)
        # One finding per cache-to line, naming every scope it shares and with whom.
        per_line: dict[tuple[str, int], list[str]] = defaultdict(list)
        # Whether two writers of the line's scope run on their own (push, schedule, PR): builds started by hand
        # overwrite the others' cache only on the day someone starts them.
        routine: dict[tuple[str, int], bool] = defaultdict(bool)
        for scope, group in sorted(writers.items()):
            if len({(w.path, w.job, w.leg) for w in group}) < 2:
                continue
            lines = sorted({(w.path, w.line) for w in group})
            if not ctx.audit and not any(ctx.is_added_line(p, n) for p, n in lines):
                continue
            shown = f"scope `{scope}`" if any(w.explicit for w in group) else "the default scope (no `scope=`)"
            for path, line in lines:
                mine = [w for w in group if (w.path, w.line) == (path, line)]
                others = [w for w in group if (w.path, w.line) != (path, line)]
                parts = []
                if len(mine) > 1:
                    parts.append(f"each of its matrix legs ({'; '.join(w.leg or w.job for w in mine)})")
                if others:
                    parts.append(_join(w.who for w in others))
                if not all(w.by_hand for w in mine):
                    routine[(path, line)] |= len(mine) > 1 or not all(w.by_hand for w in others)
                per_line[(path, line)].append(f"{shown}: written by {' and by '.join(parts)}")
        for (path, line), notes in sorted(per_line.items()):
            by_hand = not routine[(path, line)]
            yield Hit(
                path,
                line,
                "This build exports its layer cache to the same GitHub Actions cache as other builds, so each run "
                f"replaces the others' cache: {'; '.join(notes)}. Give each job and matrix leg its own `scope=`."
                + (
                    " Only builds started by hand (`workflow_dispatch`) take part here, so this costs a cold "
                    "build on the days they run."
                    if by_hand
                    else ""
                ),
                severity=Severity.NOTICE if by_hand else None,
                cause="shared cache scope",  # one decision (scopes that do not tell builds apart), one comment
            )

    def _writers(self, ctx: Context, paths: Iterable[str]) -> Iterator[_Writer]:
        """The cache-to writers of the workflows among `paths` (in their order); a path of either workflow kind is
        a candidate of ASCEND_WORKFLOW (context.candidate_paths), so that list holds every one."""
        g = grammar(ctx)
        for path in paths:
            if not ctx.kindmap.has(path, kinds.WORKFLOW) and not ctx.kindmap.has(path, kinds.ASCEND_WORKFLOW):
                continue
            src = ctx.source(path)
            if src is None or "type=gha" not in src.text:
                continue
            if kinds.ASCEND_WORKFLOW not in src.kinds and not any(m in src.text for m in g.producer_markers):
                continue
            wf = workflow(ctx, path)
            if wf is None:
                continue
            by_hand = wf.triggers == {"workflow_dispatch"}
            for job in wf.jobs.values():
                builds = [
                    s
                    for s in job.steps
                    if s.uses and s.uses.split("@")[0].endswith("docker/build-push-action") and "cache-to" in s.with_
                ]
                if not builds:
                    continue
                combos = job.combinations() or []
                varying = [k for k in (combos[0] if combos else {}) if len({c.get(k) for c in combos}) > 1]
                for scope in legs(wf, job):
                    leg = ", ".join(f"{k}={(scope.combo or {}).get(k)}" for k in varying[:1])
                    for step in builds:
                        node = step.with_["cache-to"]
                        step_scope = Scope(wf, job, scope.combo, extra_env=step.env)
                        for value, explicit in _gha_scopes(node, step_scope):
                            yield _Writer(path, node.line, job.id, leg, value, explicit, by_hand)


def _gha_scopes(node: Node, scope: Scope) -> Iterator[tuple[str, bool]]:
    """The gha scopes a `cache-to` value writes (one entry per line), skipping unknown ones."""
    if not node.is_scalar:
        return
    for line, text in node.text_lines():
        entry = text.strip()
        if not entry:
            continue
        for val in scope.resolve(Node(node.kind, line, line, value=entry)):
            if WILD in val.text:
                continue
            attrs = dict(part.split("=", 1) for part in val.text.split(",") if "=" in part)
            if attrs.get("type", "").strip() != "gha":
                continue
            if "scope" in attrs:
                yield attrs["scope"].strip(), True
            else:
                yield DEFAULT_SCOPE, False


def _join(items: Iterable[str]) -> str:
    uniq = list(dict.fromkeys(items))
    if len(uniq) > 6:
        return ", ".join(uniq[:6]) + f" and {len(uniq) - 6} more"
    return ", ".join(uniq)
