"""NPU216: a reusable workflow's cancelling concurrency group is the same for calls that should run side by side."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import lazyre
from npu_review.checks.analysis.workflows import workflow_at, workflow_paths
from npu_review.checks.context import Context
from npu_review.checks.kinds import ASCEND_WORKFLOW, GITHUB, WORKFLOW, workflow_host
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.calls import Call, calls, declared
from npu_review.checks.parsers.gha.expressions import EXPR
from npu_review.checks.parsers.gha.workflow import Workflow, matrix_product
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

MAX_LEGS = 256
_INPUT_REF = lazyre.compile(r"(?<![\w.])inputs\s*(?:\.\s*([A-Za-z_][\w-]*)|\[\s*['\"]([^'\"]+)['\"]\s*\])", re.I)
_EVENT_INPUT_REF = lazyre.compile(
    r"(?<![\w.])(?:github\s*\.\s*event\s*\.\s*)?inputs\s*(?:\.\s*([A-Za-z_][\w-]*)|\[\s*['\"]([^'\"]+)['\"]\s*\])",
    re.I,
)
_MATRIX_REF = lazyre.compile(r"(?<![\w.])matrix((?:\.[A-Za-z_][\w-]*)+)")
_PER_RUN = lazyre.compile(r"github\s*\.\s*run_(?:id|number|attempt)", re.I)
# Contexts whose values the run computes, per call of a reusable workflow: from its inputs, often (a build job's
# `label_extension` output, set from the `hardware` input), so a group reading one may differ call by call.
_RUN_VALUE = lazyre.compile(r"(?<![\w.])(?:needs|steps|jobs|env)\s*\.", re.I)


@dataclass(frozen=True)
class _Group:
    line: int
    text: str
    inputs: frozenset[str]  # lower-case input names the group reads
    per_run: bool  # the group differs in every run (github.run_id)
    where: str  # "" for the workflow, else "job `x`"


@dataclass(frozen=True)
class _Collision:
    target: str
    group: _Group
    caller: str
    job: str
    inputs: tuple[str, ...]  # the inputs that tell the calls apart but are not in the group
    why: str
    severity: Severity

    @property
    def key(self) -> tuple[str, int | str, str, str, tuple[str, ...]]:
        return (self.target, self.group.where, self.caller, self.job, self.inputs)


class ConcurrencyGroupCollision(Rule):
    """A reusable workflow cancels in-progress runs of a concurrency group that calls meant to run side by side
    share.

    Why: a called workflow's `concurrency` is evaluated for each call, with the caller's `github` context
    (`github.workflow_ref`, `github.ref` are the caller's). With `cancel-in-progress: true`, two calls whose
    group comes out the same cancel each other, though they differ in an input the group leaves out: the matrix
    legs of one call job (two branches, two devices), two call jobs of one caller, or runs of the caller that its
    own concurrency group keeps apart (a request id). The cancelled leg shows as "cancelled", never as failed,
    so its results quietly go missing. vllm-ascend's nightly test workflows keyed the group on the config file,
    while callers started parallel runs per `/nightly` request id: the requests cancelled each other.

    Bad:
        # .github/workflows/_e2e.yaml (a caller grouped by request id passes `request_id`)
        concurrency:
          group: e2e-${{ github.workflow_ref }}-${{ inputs.config_file }}
          cancel-in-progress: true

    Good:
        # .github/workflows/_e2e.yaml
        concurrency:
          group: e2e-${{ github.workflow_ref }}-${{ inputs.config_file }}-${{ inputs.request_id }}
          cancel-in-progress: true

    Fix: add the inputs that tell the calls apart to the group (or drop `cancel-in-progress` for the called
    workflow and let the caller's own group cancel).

    Not reported: groups without `cancel-in-progress: true` (a literal; an expression is not evaluated),
    groups that include `github.run_id`, calls ordered by `needs:`, the legs of a matrix with `max-parallel:
    1` (they run one after another), and calls whose differing inputs cannot be told apart statically, among
    them differences only a dynamic matrix (`fromJSON(...)`) makes (it may have a single leg), and groups that read
    a value the run computes (`needs.build.outputs.label_extension`, `steps.*`, `env.*`): it may come from the
    inputs the group seems to leave out.
    """

    id = "NPU216"
    name = "concurrency-group-collision"
    severity = Severity.WARNING
    title = "Reusable workflow's cancelling concurrency group collides between parallel calls"
    kinds = frozenset({WORKFLOW, ASCEND_WORKFLOW})

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        found = list(_collisions(ctx, "head"))
        if not found:
            return
        before = set() if ctx.audit else {c.key for c in _collisions(ctx, "base")}
        by_group: dict[tuple[str, int], list[_Collision]] = {}
        for c in found:
            if c.key not in before:
                by_group.setdefault((c.target, c.group.line), []).append(c)
        for (target, line), group in sorted(by_group.items()):
            missing = sorted({i for c in group for i in c.inputs})
            shown = ", ".join(f"`{i}`" for i in missing)
            whys = list(dict.fromkeys(c.why for c in group))
            more = f" (and {len(whys) - 2} more)" if len(whys) > 2 else ""
            severity = max(c.severity for c in group)
            verb, it = ("tells", "it") if len(missing) == 1 else ("tell", "them")
            yield Hit(
                target,
                line,
                f"This concurrency group cancels in progress but leaves out {shown}, which {verb} apart calls that "
                f"run side by side: {'; '.join(whys[:2])}{more}. They get the same group and cancel each other: "
                f"add {it} to the group.",
                severity=severity,
                caused_by_change=True,
            )


def _relevant(ctx: Context) -> set[str] | None:
    """On a change, the workflows a new collision can involve (None: all, in an audit): a collision is between a
    called workflow and a caller, so one the change makes has the change in one of the two. The touched workflows,
    the callers that name a touched one (`./.github/workflows/x.yml`) and the workflows a touched one names."""
    if ctx.audit:
        return None

    def find() -> set[str]:
        paths = set(workflow_paths(ctx, "head")) | set(workflow_paths(ctx, "base"))
        touched = {
            p
            for change in ctx.changeset.changes.values()
            for p in (change.path, change.old_path)
            if p is not None and p in paths
        }
        # A caller names the workflow it calls as `./.github/workflows/x.yml`.
        out = touched | set(ctx.paths_mentioning([f"./{t}" for t in sorted(touched)], sorted(paths - touched)))
        for t in touched:
            for rev in ("head", "base"):
                text = ctx.text(t, rev) or ""
                out.update(p for p in paths if f"./{p}" in text)
        return out

    return ctx.memo(("npu216-relevant", "", ""), find)


def _collisions(ctx: Context, rev: str) -> Iterator[_Collision]:
    workflows: dict[str, Workflow] = {}
    relevant = _relevant(ctx)
    for path in workflow_paths(ctx, rev):
        if relevant is not None and path not in relevant:
            continue
        if workflow_host(path) is not GITHUB:
            continue  # GitCode's `concurrency:` is another shape (`max:`, `exceed-action:`, hicann/*'s workflows)
        src = ctx.source_at(path, rev)
        if src is None or ("cancel-in-progress" not in src.text and "./.github/workflows/" not in src.text):
            continue
        wf = workflow_at(ctx, path, rev)
        if wf is not None:
            workflows[path] = wf
    targets = {p: groups for p, wf in workflows.items() if "workflow_call" in wf.triggers if (groups := _groups(wf))}
    if not targets:
        return
    for _, caller in sorted(workflows.items()):
        by_target: dict[str, list[Call]] = {}
        for call in calls(caller):
            if call.target in targets:
                by_target.setdefault(call.target, []).append(call)
        for target, target_calls in sorted(by_target.items()):
            defaults = _defaults(workflows[target])
            for group in targets[target]:
                yield from _within_run(target, group, caller, target_calls, defaults)
                yield from _across_runs(target, group, caller, target_calls)


def _groups(wf: Workflow) -> list[_Group]:
    out: list[_Group] = []
    places: list[tuple[str, Node | None]] = [("", wf.root.get("concurrency"))]
    places += [(f"job `{j.id}`", j.node.get("concurrency")) for j in wf.jobs.values()]
    for where, conc in places:
        if conc is None or not conc.is_map:
            continue
        cancel = conc.scalar("cancel-in-progress")
        group = conc.get("group")
        if (cancel or "").strip().lower() != "true" or group is None or not group.is_scalar:
            continue
        if any(_RUN_VALUE.search(m.group(1)) for m in EXPR.finditer(group.value)):
            continue  # a value the run computes (a job's output, a step's, `env`), which may tell the calls apart
        names = frozenset(
            (a or b).lower() for m in EXPR.finditer(group.value) for a, b in _INPUT_REF.findall(m.group(1))
        )
        out.append(_Group(group.line, group.value, names, bool(_PER_RUN.search(group.value)), where))
    return out


def _defaults(wf: Workflow) -> dict[str, str]:
    out: dict[str, str] = {}
    on = wf.root.get("on")
    spec = on.get("workflow_call") if on is not None and on.is_map else None
    block = spec.get("inputs") if spec is not None and spec.is_map else None
    for name, _, value in block.entries() if block is not None else ():
        out[name.lower()] = (value.scalar("default") or "") if value.is_map else ""
    for p in declared(wf, "workflow_call", "input"):
        out.setdefault(p.name.lower(), "")
    return out


# -- calls within one run: matrix legs and sibling call jobs ------------------------------------------------------


@dataclass(frozen=True)
class _Sym:
    """A value a dynamic matrix gives at run time: `axis`'s `i`-th value."""

    job: str  # symbols of different call jobs never compare equal
    axis: str
    i: int


_Leg = dict[str, "Node | _Sym"]


def _legs(job: str, job_matrix: Node | None) -> tuple[list[_Leg], bool] | None:
    """The matrix legs of a call job (keys -> value nodes, or symbols for dynamic axes), and whether a dynamic
    axis is involved. None for a matrix this cannot expand."""
    if job_matrix is None:
        return [{}], False
    if job_matrix.is_scalar:  # `matrix: ${{ fromJSON(...) }}`: every key may vary
        return [{"*": _Sym(job, "*", 1)}, {"*": _Sym(job, "*", 2)}], True
    if not job_matrix.is_map:
        return None
    axes: list[tuple[str, list[Node | _Sym]]] = []
    dynamic = False
    include: list[Node] = []
    exclude: list[Node] = []
    for key, _, value in job_matrix.entries():
        if key in ("include", "exclude"):
            if not value.is_seq:
                return None
            (include if key == "include" else exclude).extend(i for i in value.items if i.is_map)
            continue
        if value.is_seq:
            axes.append((key, list(value.items)))
        elif value.is_scalar and EXPR.search(value.value):
            axes.append((key, [_Sym(job, key, 1), _Sym(job, key, 2)]))
            dynamic = True
        else:
            return None
    product = matrix_product(axes, MAX_LEGS)
    if product is None:
        return None
    names = [k for k, _ in axes]
    legs: list[_Leg] = [leg for leg in product if not any(_matches(leg, ex, names) for ex in exclude)]
    base = len(legs)
    for inc in include:
        matched = False
        for leg in legs[:base]:
            if _matches(leg, inc, names, only_axes=True):
                for k, _, v in inc.entries():
                    leg.setdefault(k, v)
                matched = True
        if not matched:
            legs.append({k: v for k, _, v in inc.entries()})
    if len(legs) > MAX_LEGS:
        return None
    return legs or [{}], dynamic


def _matches(leg: _Leg, entry: Node, axes: list[str], only_axes: bool = False) -> bool:
    for k, _, v in entry.entries():
        if only_axes and k not in axes:
            continue
        mine = leg.get(k)
        if mine is None or isinstance(mine, _Sym) or _canon(mine) != _canon(v):
            return False
    return True


def _canon(node: Node) -> str:
    if node.is_scalar:
        return node.value
    if node.is_seq:
        return "[" + ",".join(_canon(i) for i in node.items) + "]"
    return "{" + ",".join(f"{k}:{_canon(v)}" for k, _, v in node.entries()) + "}"


def _matrix_value(leg: _Leg, path: str) -> str:
    parts = path.strip(".").split(".")
    if "*" in leg:
        sym = leg["*"]
        assert isinstance(sym, _Sym)
        return f"<dynamic:{sym.job}:{path}:{sym.i}>"
    value = leg.get(parts[0])
    if value is None:
        return ""
    if isinstance(value, _Sym):
        return f"<dynamic:{value.job}:{value.axis}:{value.i}:{'.'.join(parts[1:])}>"
    node: Node | None = value
    for part in parts[1:]:
        node = node.get(part) if node is not None else None
    return "" if node is None else _canon(node)


def _render(text: str, leg: _Leg) -> str:
    """A `with:` value with the leg's matrix values put in (other expressions kept as written)."""

    def expr(m: re.Match[str]) -> str:
        body = _MATRIX_REF.sub(lambda r: repr(_matrix_value(leg, r.group(1))), m.group(1))
        return "${{ " + body + " }}"

    return EXPR.sub(expr, text)


def _values(call: Call, leg: _Leg, defaults: dict[str, str]) -> dict[str, str]:
    out = dict(defaults)
    for name, node in call.with_.items():
        out[name.lower()] = _render(node.value, leg) if node.is_scalar else _canon(node)
    return out


def _ordered(caller: Workflow, a: str, b: str) -> bool:
    """Whether job `a` runs after `b` or `b` after `a` (through `needs:`)."""

    def after(x: str, y: str) -> bool:
        seen: set[str] = set()
        todo = [x]
        while todo:
            job = caller.jobs.get(todo.pop())
            if job is None:
                continue
            for n in job.needs:
                if n == y:
                    return True
                if n not in seen:
                    seen.add(n)
                    todo.append(n)
        return False

    return after(a, b) or after(b, a)


def _within_run(
    target: str, group: _Group, caller: Workflow, target_calls: list[Call], defaults: dict[str, str]
) -> Iterator[_Collision]:
    expanded: list[tuple[Call, list[dict[str, str]]]] = []
    for call in target_calls:
        got = _legs(call.job.id, call.job.matrix_node)
        if got is None:
            continue
        expanded.append((call, [_values(call, leg, defaults) for leg in got[0]]))
    for i, (call, values) in enumerate(expanded):
        # the legs of one call job (a difference only a dynamic matrix makes is unknown: it may have one leg);
        # with `max-parallel: 1` they run one after another and never meet in the group
        diff = None if _one_at_a_time(call) else _first_difference(values, group.inputs)
        if diff:
            yield _Collision(
                target,
                group,
                caller.path,
                call.job.id,
                diff,
                f"the matrix legs of `{caller.path}` job `{call.job.id}` differ in {_names(diff)} only",
                Severity.WARNING,
            )
        # two call jobs of one caller that run at the same time
        for other, other_values in expanded[i + 1 :]:
            if _ordered(caller, call.job.id, other.job.id):
                continue
            diff = _pair_difference(values, other_values, group.inputs)
            if diff:
                yield _Collision(
                    target,
                    group,
                    caller.path,
                    f"{call.job.id}+{other.job.id}",
                    diff,
                    f"`{caller.path}` jobs `{call.job.id}` and `{other.job.id}` differ in {_names(diff)} only",
                    Severity.WARNING,
                )


def _names(inputs: tuple[str, ...]) -> str:
    return ", ".join(f"`{i}`" for i in inputs)


def _first_difference(values: list[dict[str, str]], keys: frozenset[str]) -> tuple[str, ...]:
    seen: dict[tuple[str, ...], dict[str, str]] = {}
    for v in values:
        key = tuple(v.get(k, "") for k in sorted(keys))
        first = seen.setdefault(key, v)
        if first is not v:
            diff = tuple(
                sorted(
                    k
                    for k in set(first) | set(v)
                    if k not in keys and first.get(k) != v.get(k) and not _dynamic(first.get(k), v.get(k))
                )
            )
            if diff:
                return diff
    return ()


def _dynamic(a: str | None, b: str | None) -> bool:
    """Two values that differ only by what a dynamic matrix gives (unknown: it may have a single leg)."""
    return "<dynamic:" in (a or "") or "<dynamic:" in (b or "")


def _pair_difference(a: list[dict[str, str]], b: list[dict[str, str]], keys: frozenset[str]) -> tuple[str, ...]:
    for x in a:
        for y in b:
            if all(x.get(k, "") == y.get(k, "") for k in keys):
                diff = tuple(sorted(k for k in set(x) | set(y) if k not in keys and x.get(k) != y.get(k)))
                if diff:
                    return diff
    return ()


# -- runs of the caller that its own group keeps apart ------------------------------------------------------------


def _across_runs(target: str, group: _Group, caller: Workflow, target_calls: list[Call]) -> Iterator[_Collision]:
    if group.per_run:
        return
    conc = caller.root.get("concurrency")
    text = conc.value if conc is not None and conc.is_scalar else (conc.scalar("group") or "") if conc else ""
    if _PER_RUN.search(text):
        return
    apart = {(a or b).lower() for m in EXPR.finditer(text) for a, b in _EVENT_INPUT_REF.findall(m.group(1))}
    if not apart:
        return
    for call in target_calls:
        carried = []
        for name, node in call.with_.items():
            if name.lower() in group.inputs or not node.is_scalar:
                continue
            refs = {
                (a or b).lower() for m in EXPR.finditer(node.value) for a, b in _EVENT_INPUT_REF.findall(m.group(1))
            }
            if refs & apart:
                carried.append(name.lower())
        if carried:
            yield _Collision(
                target,
                group,
                caller.path,
                call.job.id,
                tuple(sorted(carried)),
                f"`{caller.path}` job `{call.job.id}` sets {_names(tuple(sorted(carried)))} from an input by which "
                "its own concurrency group keeps parallel runs apart",
                Severity.WARNING,
            )


def _one_at_a_time(call: Call) -> bool:
    """The call job's matrix legs run one after another (`strategy.max-parallel: 1`)."""
    strategy = call.job.field("strategy")
    limit = strategy.get("max-parallel") if strategy is not None and strategy.is_map else None
    return limit is not None and limit.is_scalar and str(limit.value).strip() == "1"
