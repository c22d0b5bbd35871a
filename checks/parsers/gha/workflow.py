"""GitHub Actions workflows as data: jobs, steps, env, matrix legs, scopes and triggers, with lines."""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from npu_review.checks import kinds
from npu_review.checks.parsers.gha.expressions import EXPR, substitute
from npu_review.checks.parsers.gha.values import WILD, Val

if TYPE_CHECKING:
    from npu_review.checks.parsers.yamlmarks import Node, YamlDoc

T = TypeVar("T")

MAX_COMBINATIONS = 256  # matrix legs evaluated per job; larger matrices are treated as unknown

# The keys GitHub accepts in a job and in a step (docs.github.com, "Workflow syntax for GitHub Actions",
# 2026-08). Any other key makes the workflow invalid ("Unexpected value").
JOB_KEYS = frozenset(
    {
        "name", "permissions", "needs", "if", "runs-on", "snapshot", "environment", "concurrency", "outputs", "env",
        "defaults", "steps", "timeout-minutes", "strategy", "continue-on-error", "container", "services", "uses",
        "with", "secrets",
    }
)  # fmt: skip
STEP_KEYS = frozenset(
    {"id", "if", "name", "uses", "run", "working-directory", "shell", "with", "env", "continue-on-error",
     "timeout-minutes"}
)  # fmt: skip


# -- the workflow model ------------------------------------------------------------------------------------------


@dataclass(slots=True)
class Step:
    index: int
    node: Node
    id: str | None
    name: str | None
    uses: str | None
    run: Node | None
    with_: Mapping[str, Node]
    env: Mapping[str, Node]

    @property
    def line(self) -> int:
        return self.node.line


@dataclass
class Job:
    id: str
    node: Node
    env: Mapping[str, Node]
    outputs: Mapping[str, Node]
    needs: list[str]
    steps: list[Step]
    matrix_node: Node | None
    # The job this one is indented under by mistake (an unknown key of it that holds `runs-on:` or `steps:`):
    # GitHub refuses the workflow (NPU200 says so), but the job is the one its author means to run.
    nested_in: str | None = None

    def field(self, key: str) -> Node | None:
        return self.node.get(key)

    def combinations(self, objects: bool = False) -> list[dict[str, str]] | None:
        """Matrix legs (one empty dict without a matrix); None when the matrix is not static. With `objects`,
        a matrix value that is a mapping of scalars is kept as dotted keys (see matrix_combinations)."""
        if self.matrix_node is None:
            return [{}]
        return matrix_combinations(self.matrix_node, objects)


@dataclass
class Workflow:
    path: str
    doc: YamlDoc
    root: Node
    env: Mapping[str, Node]
    jobs: dict[str, Job] = field(default_factory=dict)

    @property
    def triggers(self) -> set[str]:
        on = self.root.get("on")
        if on is None:
            return set()
        if on.is_scalar:
            return {on.value}
        if on.is_seq:
            return {i.value for i in on.items if i.is_scalar}
        return {k for k, _, _ in on.entries()}


# The entries of a mapping that has none (most steps have no `env:`, many no `with:`): one empty dict shared by
# every model of the run, never changed (the model's mappings are read-only, hence typed Mapping).
_NO_ENTRIES: Mapping[str, Node] = {}


def _scalar_map(node: Node | None) -> Mapping[str, Node]:
    found = {k: v for k, _, v in node.entries()} if node is not None else None
    return found or _NO_ENTRIES


def nested_job(node: Node) -> bool:
    """Whether an unknown key's value of a job looks like a job of its own (`runs-on:` or `steps:`)."""
    return node.is_map and (node.get("runs-on") is not None or node.get("steps") is not None)


def _job(job_id: str, jnode: Node, nested_in: str | None = None) -> Job:
    needs_node = jnode.get("needs")
    if needs_node is None:
        needs: list[str] = []
    elif needs_node.is_scalar:
        needs = [needs_node.value]
    else:
        needs = [i.value for i in needs_node.items if i.is_scalar]
    steps: list[Step] = []
    steps_node = jnode.get("steps")
    for i, snode in enumerate(steps_node.items if steps_node is not None and steps_node.is_seq else []):
        if not snode.is_map:
            continue
        run = snode.get("run")
        steps.append(
            Step(
                index=i,
                node=snode,
                # GitCode's workflows also name a step by `identifier:` (hicann/*: `identifier: process_checkout`,
                # read as `steps.process_checkout.outputs.path`).
                id=snode.scalar("id") or snode.scalar("identifier"),
                name=snode.scalar("name"),
                uses=snode.scalar("uses"),
                run=run if run is not None and run.is_scalar else None,
                with_=_scalar_map(snode.get("with")),
                env=_scalar_map(snode.get("env")),
            )
        )
    strategy = jnode.get("strategy")
    return Job(
        id=job_id,
        node=jnode,
        env=_scalar_map(jnode.get("env")),
        outputs=_scalar_map(jnode.get("outputs")),
        needs=needs,
        steps=steps,
        matrix_node=strategy.get("matrix") if strategy is not None else None,
        nested_in=nested_in,
    )


def job_blocks(root: Node, path: str) -> list[Node]:
    """The mappings of job id -> job of a workflow, in document order: its `jobs:`; in a GitCode workflow
    (kinds.GITCODE) also the `jobs:` of each stage of `stages:` and of `post:` (docs.gitcode.com: `jobs` is the
    top-level key without stages and is nested in each stage with them; hicann/hixl's hixl_action.yml)."""
    blocks = [root.get("jobs")]
    if kinds.workflow_host(path) is kinds.GITCODE:
        stages = root.get("stages")
        if stages is not None and stages.is_map:
            blocks.extend(stage.get("jobs") for _, _, stage in stages.entries() if stage.is_map)
        elif stages is not None and stages.is_seq:
            blocks.extend(stage.get("jobs") for stage in stages.items if stage.is_map)
        post = root.get("post")
        if post is not None and post.is_map:
            blocks.append(post.get("jobs"))
    return sorted((b for b in blocks if b is not None and b.is_map), key=lambda b: b.line)


def build(doc: YamlDoc, path: str) -> Workflow | None:
    """The workflow model of a parsed document; None when it is broken or not a mapping."""
    root = doc.root
    if root is None or not root.is_map:
        return None
    wf = Workflow(path, doc, root, _scalar_map(root.get("env")))
    for jobs in job_blocks(root, path):
        for job_id, _, jnode in jobs.entries():
            if not jnode.is_map or job_id in wf.jobs:
                continue
            wf.jobs[job_id] = _job(job_id, jnode)
    for job_id, job in list(wf.jobs.items()):
        for key, _, value in job.node.entries():
            if key not in JOB_KEYS and key not in wf.jobs and nested_job(value):
                wf.jobs[key] = _job(key, value, nested_in=job_id)
    return wf


def parse(text: str, path: str) -> Workflow | None:
    from npu_review.checks.parsers.yamlmarks import parse as parse_yaml

    return build(parse_yaml(text), path)


# -- matrix ------------------------------------------------------------------------------------------------------


def _matrix_value(node: Node) -> str | None:
    """Scalar matrix values only; mappings/lists inside a leg and expressions are not static strings."""
    if node.is_scalar and not EXPR.search(node.value):
        return node.value
    return None


def matrix_product(axes: Sequence[tuple[str, Sequence[T]]], limit: int) -> list[dict[str, T]] | None:
    """One leg (axis name -> value) per combination of the axes' values, none without axes; None when there
    would be more than `limit` (an axis without values counts as one)."""
    size = 1
    for _, values in axes:
        size *= max(len(values), 1)
    if size > limit:
        return None
    names = [k for k, _ in axes]
    return [dict(zip(names, vals, strict=True)) for vals in itertools.product(*(v for _, v in axes))] if axes else []


OBJECT = "\x01object"  # the value of `NAME.` in a leg whose `NAME` is a mapping (see matrix_combinations)


def _object_value(key: str, node: Node) -> dict[str, str] | None:
    """A mapping of scalars as dotted keys: {"meta.": OBJECT, "meta.name": "A2", ...}; None otherwise."""
    if not node.is_map:
        return None
    out = {f"{key}.": OBJECT}
    for k, _, v in node.entries():
        sv = _matrix_value(v)
        if sv is None:
            return None
        out[f"{key}.{k}"] = sv
    return out


def matrix_combinations(matrix: Node, objects: bool = False) -> list[dict[str, str]] | None:
    """GitHub's expansion: product of the axes, minus `exclude`, then `include` extends or adds legs.

    None when the matrix is dynamic (`${{ fromJSON(...) }}`), holds non-scalar values, or is too large. With
    `objects`, an axis whose values are mappings of scalars (`build: [{name: A2, file: Dockerfile}, ...]`) is
    kept: each leg holds `build.name`, `build.file`, ... and `build.` (OBJECT), so that `matrix.build.suffix`
    of an entry without `suffix` reads as empty, as GitHub reads a missing property.
    """
    if not matrix.is_map:
        return None
    if objects:
        return _object_combinations(matrix)
    axes: list[tuple[str, list[str]]] = []
    include: list[dict[str, str]] = []
    exclude: list[dict[str, str]] = []
    for key, _, value in matrix.entries():
        if key in ("include", "exclude"):
            if not value.is_seq:
                return None
            legs = []
            for item in value.items:
                if not item.is_map:
                    return None
                leg: dict[str, str] = {}
                for k, _, v in item.entries():
                    sv = _matrix_value(v)
                    if sv is None:
                        return None
                    leg[k] = sv
                legs.append(leg)
            (include if key == "include" else exclude).extend(legs)
            continue
        if not value.is_seq:
            return None
        values = []
        for item in value.items:
            sv = _matrix_value(item)
            if sv is None:
                return None
            values.append(sv)
        axes.append((key, values))
    product = matrix_product(axes, MAX_COMBINATIONS)
    if product is None:
        return None
    return _legs(list(product), {k for k, _ in axes}, include, exclude)


def _legs(
    combos: list[dict[str, str]], originals: set[str], include: list[dict[str, str]], exclude: list[dict[str, str]]
) -> list[dict[str, str]] | None:
    """The matrix's legs as GitHub makes them: the product without the `exclude` entries, then each `include`
    added to every leg it matches (or as a leg of its own); None beyond MAX_COMBINATIONS."""
    combos = [c for c in combos if not any(all(c.get(k) == v for k, v in ex.items()) for ex in exclude)]
    base_count = len(combos)
    for inc in include:
        matched = False
        for c in combos[:base_count]:
            # An include may add keys to a leg, never overwrite the leg's original values.
            if all(c.get(k) == v for k, v in inc.items() if k in originals) and all(
                k not in c or c[k] == v for k, v in inc.items() if k not in originals
            ):
                c.update(inc)
                matched = True
        if not matched:
            combos.append(dict(inc))
    if len(combos) > MAX_COMBINATIONS:
        return None
    return combos or [{}]


def _object_combinations(matrix: Node) -> list[dict[str, str]] | None:
    """matrix_combinations with mapping values kept as dotted keys (only the axes; an `include` or `exclude`
    holding mappings makes the matrix unknown)."""
    axes: list[tuple[str, list[dict[str, str]]]] = []
    include: list[dict[str, str]] = []
    exclude: list[dict[str, str]] = []
    for key, _, value in matrix.entries():
        if key in ("include", "exclude"):
            if not value.is_seq:
                return None
            for item in value.items:
                if not item.is_map:
                    return None
                leg: dict[str, str] = {}
                for k, _, v in item.entries():
                    sv = _matrix_value(v)
                    if sv is None:
                        return None
                    leg[k] = sv
                (include if key == "include" else exclude).append(leg)
            continue
        if not value.is_seq:
            return None
        values: list[dict[str, str]] = []
        for item in value.items:
            sv = _matrix_value(item)
            obj = _object_value(key, item) if sv is None else {key: sv}
            if obj is None:
                return None
            values.append(obj)
        axes.append((key, values))
    product = matrix_product(axes, MAX_COMBINATIONS)
    if product is None:
        return None
    combos: list[dict[str, str]] = []
    for chosen in product:
        merged: dict[str, str] = {}
        for part in chosen.values():
            merged.update(part)
        combos.append(merged)
    return _legs(combos, {k for k, _ in axes}, include, exclude)


# -- scopes: what `${{ env.X }}` etc. mean at a given place ---------------------------------------------------------


@dataclass
class Scope:
    """Resolution context for one matrix leg of one job (or the workflow top level)."""

    workflow: Workflow
    job: Job | None = None
    combo: dict[str, str] | None = field(default_factory=dict)  # None: the leg is unknown
    step_outputs: dict[str, dict[str, list[Val]]] = field(default_factory=dict)
    needs_outputs: Callable[[str, str], list[Val] | None] | None = None
    extra_env: Mapping[str, Node] = field(default_factory=dict)
    # Values written to `$GITHUB_ENV` by earlier steps of the job, and a called workflow's `inputs` (None: the
    # workflow is not evaluated for a known call, its inputs are unknown).
    runtime_env: dict[str, list[Val]] = field(default_factory=dict)
    inputs: dict[str, list[Val]] | None = None

    def env_nodes(self) -> dict[str, Node]:
        merged = dict(self.workflow.env)
        if self.job is not None:
            merged.update(self.job.env)
        merged.update(self.extra_env)
        return merged

    def lookup(self, ctx: str, parts: tuple[str, ...], _depth: int = 0) -> list[Val] | None:
        if ctx == "env" and len(parts) == 1:
            if parts[0] in self.runtime_env and parts[0] not in self.extra_env:
                return self.runtime_env[parts[0]]
            node = self.env_nodes().get(parts[0])
            if node is None or not node.is_scalar or _depth > 5:
                return None
            return substitute(
                node.value,
                lambda c, p: self.lookup(c, p, _depth + 1),
                (self.workflow.path, node.line),
            )
        if ctx == "matrix" and len(parts) == 1:
            if self.combo is None or parts[0] not in self.combo:
                return None
            return [Val(self.combo[parts[0]])]
        if ctx == "matrix" and len(parts) == 2 and self.combo is not None and f"{parts[0]}." in self.combo:
            return [Val(self.combo.get(f"{parts[0]}.{parts[1]}", ""))]  # a missing property reads as empty
        if ctx == "inputs" and len(parts) == 1 and self.inputs is not None:
            low = parts[0].lower()
            return next((v for k, v in self.inputs.items() if k.lower() == low), None)
        if ctx == "steps" and len(parts) == 3 and parts[1] == "outputs":
            return self.step_outputs.get(parts[0], {}).get(parts[2])
        if ctx == "needs" and len(parts) == 3 and parts[1] == "outputs" and self.needs_outputs is not None:
            return self.needs_outputs(parts[0], parts[2])
        return None

    def resolve(self, node: Node) -> list[Val]:
        """A scalar node's value with expressions substituted (WILD where unknown)."""
        return substitute(node.value, self.lookup, (self.workflow.path, node.line))


def legs(
    workflow: Workflow, job: Job, objects: bool = False, inputs: dict[str, list[Val]] | None = None
) -> Iterator[Scope]:
    """One Scope per matrix leg of `job` (a single leg with unknown matrix values when the matrix is dynamic).
    `objects`: see matrix_combinations; `inputs`: the called workflow's inputs for one call."""
    combos = job.combinations(objects)
    if combos is None:
        yield Scope(workflow, job, None, inputs=inputs)
        return
    for combo in combos:
        yield Scope(workflow, job, combo, inputs=inputs)


def env_mapping(scope: Scope, nodes: Mapping[str, Node]) -> dict[str, list[Val]]:
    return {k: scope.resolve(v) if v.is_scalar else [Val(WILD)] for k, v in nodes.items()}


# -- triggers ---------------------------------------------------------------------------------------------------


def trigger_filters(wf: Workflow, key: str) -> Iterator[tuple[str, Node]]:
    """(event, entry node) of every scalar entry of `on.<event>.<key>` (`paths`, `paths-ignore`, `branches`)."""
    on = wf.root.get("on")
    if on is None or not on.is_map:
        return
    for event, _, spec in on.entries():
        lst = spec.get(key) if spec.is_map else None
        if lst is None:
            continue
        for item in lst.items if lst.is_seq else [lst]:
            if item.is_scalar:
                yield event, item
