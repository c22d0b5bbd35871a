"""The image inventory of a revision: producers, consumers and the Dockerfiles behind a tag.

Producers are the workflows that push the image (their tags evaluated statically, see checks.parsers.gha.evaluate);
consumers are the `image:`/`IMAGE:` values of the Ascend workflows. Unknown stays unknown: a producer whose tags
cannot be evaluated makes "is this tag produced?" unanswerable, and the rules stay silent.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, Any

from npu_review.checks import kinds
from npu_review.checks.analysis.stacks import base_cann
from npu_review.checks.analysis.workflows import workflow, workflow_doc
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.parsers.gha.values import WILD, wild_regex
from npu_review.checks.parsers.imagetags import Grammar, ImageRef, TagInfo, documented_tags, parse_ref

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Workflow


def grammar(ctx: Context) -> Grammar:
    return ctx.memo(("image-grammar", "", ""), lambda: Grammar(ctx.facts.image_tags))


# -- producers and consumers --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Consumer:
    path: str
    line: int
    ref: ImageRef
    info: TagInfo
    location: str
    job: str | None

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"

    @property
    def tag(self) -> str:
        return self.ref.tag or ""


@dataclass(frozen=True)
class Product:
    path: str
    line: int
    tag: str  # may contain WILD
    info: TagInfo
    origins: frozenset[tuple[str, int]]
    job: str

    @property
    def known(self) -> bool:
        return WILD not in self.tag


@dataclass
class Producer:
    path: str
    products: list[Product] = field(default_factory=list)
    triggers: set[str] = field(default_factory=set)


@dataclass
class Inventory:
    """Every producer and consumer of one revision. The consumers are read on first use: a change's review that
    asks only for its own files' consumers (`changed_consumers`) parses no other Ascend workflow for them."""

    producers: dict[str, Producer] = field(default_factory=dict)
    _consumers: list[Consumer] | None = None
    _read_consumers: Callable[[], list[Consumer]] | None = None

    @property
    def consumers(self) -> list[Consumer]:
        if self._consumers is None:
            self._consumers = self._read_consumers() if self._read_consumers is not None else []
            self._read_consumers = None
        return self._consumers

    def products(self) -> Iterator[Product]:
        for p in self.producers.values():
            yield from p.products

    def literal_tags(self) -> set[str]:
        return {p.tag for p in self.products() if p.known}

    def produced(self, tag: str) -> bool | None:
        """True when a producer pushes `tag`, False when none can, None when a producer's tag is unknown."""
        unknown = False
        for p in self.products():
            if p.known:
                if p.tag == tag:
                    return True
            elif wild_regex(p.tag).fullmatch(tag):
                unknown = True
        return None if unknown else False

    def producers_of(self, tag: str) -> list[Product]:
        return [p for p in self.products() if p.known and p.tag == tag]


def _image_key(key: str) -> bool:
    return key in ("image", "IMAGE") or key.upper().endswith("_IMAGE")


def consumers_of(wf: Workflow, g: Grammar) -> list[Consumer]:
    """Family image references in `image:`, `IMAGE:`, `*_IMAGE:` values and `container: <ref>`.

    `${{ env.X }}` (workflow and job env) and `${{ matrix.X }}` (every leg) are resolved; unresolvable values are
    skipped.
    """
    from npu_review.checks.parsers.gha.workflow import Scope, legs

    found: dict[tuple[int, str], Consumer] = {}

    def add(node_value: list[Any], line: int, job: str | None) -> None:
        for val in node_value:
            if not val.known:
                continue  # unresolvable: unknown, skip
            ref = parse_ref(val.text)
            if ref is None or ref.tag is None or g.family(ref) is None:
                continue
            found.setdefault((line, ref.text), Consumer(wf.path, line, ref, g.classify(ref.tag), g.location(ref), job))

    top_env = wf.root.get("env")
    if top_env is not None:
        scope = Scope(wf)
        for key, _, value in top_env.entries():
            if _image_key(key) and value.is_scalar:
                add(scope.resolve(value), value.line, None)
    for job in wf.jobs.values():
        for scope in legs(wf, job):
            for path, node in job.node.walk():
                if not node.is_scalar or not path:
                    continue
                last = path[-1]
                if isinstance(last, str) and (_image_key(last) or (last == "container" and len(path) == 1)):
                    add(scope.resolve(node), node.line, job.id)
    return sorted(found.values(), key=lambda c: (c.line, c.ref.text))


def products_of(wf: Workflow, g: Grammar, read: Any) -> list[Product]:
    from npu_review.checks.parsers.gha.evaluate import WorkflowEval

    out: dict[tuple[int, str], Product] = {}
    for push in WorkflowEval(wf, read).pushes():
        ref = parse_ref(push.ref.text)
        if ref is None:
            if push.ref.text.strip() == WILD or WILD in push.ref.text:
                # Wholly unknown reference: this producer's tags are unknown.
                out.setdefault(
                    (push.line, WILD), Product(wf.path, push.line, WILD, TagInfo(WILD), push.ref.origins, push.job)
                )
            continue
        if WILD not in ref.repository and g.family(ref) is None:
            continue  # another image
        tag = ref.tag if ref.tag is not None else (WILD if WILD in ref.repository else None)
        if tag is None or g.is_temporary(tag):
            continue
        out.setdefault((push.line, tag), Product(wf.path, push.line, tag, g.classify(tag), push.ref.origins, push.job))
    return sorted(out.values(), key=lambda p: (p.line, p.tag))


def _is_candidate_producer(src: SourceFile, g: Grammar) -> bool:
    # The text first: a workflow's content kinds are decided when asked for (reading most of the text).
    return any(m in src.text for m in g.producer_markers) or kinds.ASCEND_WORKFLOW in src.kinds


# What the image inventory reads: the workflows, and the Ascend Dockerfiles their steps read tags from (`grep ARG
# docker/ascend/Dockerfile...`). A rule that asks for the inventory declares these in its context_kinds.
INVENTORY_KINDS = frozenset({kinds.WORKFLOW, kinds.ASCEND_WORKFLOW, kinds.ASCEND_DOCKERFILE})


def inventory(ctx: Context, rev: str = "head") -> Inventory:
    """Producers and consumers of the revision (memoised per run)."""
    return ctx.memo(("image-inventory", rev, ""), lambda: _inventory(ctx, rev))


def _inventory(ctx: Context, rev: str) -> Inventory:
    g = grammar(ctx)
    inv = Inventory()
    ascend: list[str] = []
    # The paths of either kind (a WORKFLOW path admits ASCEND_WORKFLOW: it is among its candidates).
    for path in ctx.candidate_paths(frozenset({kinds.ASCEND_WORKFLOW}), rev):
        # On a change, what each workflow produces is kept between runs (ctx.kept): a review on a large tree
        # evaluates the workflows it has not seen, not all of them.
        readable, products, triggers = ctx.kept("image-products", path, rev, partial(_producer_of, ctx, g, path, rev))
        if not readable:
            continue
        # On a change, which workflows are Ascend ones (their content kinds) is asked when the consumers are, if
        # ever: a review that asks only for its own files' consumers leaves the others undecided. An audit has
        # decided every file's kinds anyway, and may have let this one go by then.
        if not ctx.audit or ctx.has_kind(path, kinds.ASCEND_WORKFLOW, rev):
            ascend.append(path)
        if products:
            inv.producers[path] = Producer(path, products, triggers)
    inv._read_consumers = lambda: [
        c for path in ascend if _is_ascend(ctx, path, rev) for c in _file_consumers(ctx, path, rev)
    ]
    return inv


def _producer_of(
    ctx: Context, g: Grammar, path: str, rev: str
) -> tuple[tuple[bool, list[Product], set[str]], tuple[str, ...]]:
    """Whether the workflow is readable, its products and its triggers; and the other files its evaluation read.
    The products are `_products`' list itself: the base and head inventories share it (a list never changed)."""
    src = ctx.source(path, rev)
    if src is None:
        return (False, [], set()), ()
    # A workflow pushes with a `docker` command or docker/build-push-action (WorkflowEval.pushes): one whose
    # text never says `docker` pushes nothing, and is neither parsed nor evaluated for it.
    if "docker" not in src.text or not _is_candidate_producer(src, g):
        return (True, [], set()), ()
    wf = _sound_workflow(ctx, path, rev)
    if wf is None:
        return (True, [], set()), ()
    products, reads = _products(ctx, wf, g, rev)
    return (True, products, wf.triggers if products else set()), reads


def _products(ctx: Context, wf: Workflow, g: Grammar, rev: str) -> tuple[list[Product], tuple[str, ...]]:
    """`products_of` the workflow at `rev`, with the files its evaluation read (a script it runs, a Dockerfile it
    greps); kept for the run by its blob: the base of a workflow the change does not touch is its head's when the
    change touches none of those either."""
    held: dict[str, tuple[list[Product], tuple[str, ...]]] = ctx.memo(
        ("image-products", ctx.effective_rev(wf.path, rev), wf.path), dict
    )
    if rev in held:
        return held[rev]
    for products, reads in held.values():
        if not any(ctx.touched(p) for p in reads):
            return products, reads
    paths: list[str] = []

    def read(path: str) -> str | None:
        paths.append(path)
        return ctx.text(path, rev)

    products = products_of(wf, g, read)
    held[rev] = (products, tuple(dict.fromkeys(paths)))
    return held[rev]


def _is_ascend(ctx: Context, path: str, rev: str) -> bool:
    """The workflow at `rev` is an Ascend one (its path or its text says so)."""
    if ctx.audit:
        return True  # `_inventory` kept the Ascend ones only
    src = ctx.source(path, rev)
    return src is not None and kinds.ASCEND_WORKFLOW in src.kinds


def _sound_workflow(ctx: Context, path: str, rev: str) -> Workflow | None:
    """The workflow model, None when its YAML is broken (the inventory leaves such a workflow out)."""
    doc = workflow_doc(ctx, path, rev)
    if doc is None or not doc.ok:
        return None
    return workflow(ctx, path, rev)


def _file_consumers(ctx: Context, path: str, rev: str) -> list[Consumer]:
    """The consumers of one Ascend workflow (kept per blob for the run: the base of an untouched file is its head)."""

    def read(blob_rev: str) -> list[Consumer]:
        wf = _sound_workflow(ctx, path, blob_rev)
        return [] if wf is None else consumers_of(wf, grammar(ctx))

    return ctx.of_blob("image-consumers-of-file", path, rev, read)


def replaced_consumers(ctx: Context, c: Consumer) -> list[Consumer]:
    """On a change, the consumers the same job of the same workflow had at the base with another tag: what the
    change's consumer line replaced (none in an audit, for a new file or a new job)."""
    change = ctx.changeset.changed(c.path)
    if ctx.audit or change is None or c.job is None:
        return []
    return [b for b in _file_consumers(ctx, change.old_path or c.path, "base") if b.job == c.job and b.tag != c.tag]


def changed_consumers(ctx: Context) -> list[Consumer]:
    """The consumers at head in the files the change touches, in the order of `inventory(ctx).consumers` (every
    consumer in an audit): where a change's added consumer lines are, without reading the other workflows."""
    if ctx.audit:
        return inventory(ctx).consumers
    out: list[Consumer] = []
    for path in sorted(ctx.changeset.changes):
        if not ctx.kindmap.has(path, kinds.WORKFLOW) and not ctx.kindmap.has(path, kinds.ASCEND_WORKFLOW):
            continue
        src = ctx.source(path)
        if src is not None and kinds.ASCEND_WORKFLOW in src.kinds:
            out.extend(_file_consumers(ctx, path, "head"))
    return out


def head_documented_tags(ctx: Context, src: SourceFile) -> list[tuple[int, str, int, int]]:
    """`documented_tags(src.text, grammar(ctx), bare=True)` of a file at head, kept for the run: NPU204 asks
    while the engine is at the file, NPU203 after it let the file go (a few tags per file at most)."""
    return ctx.memo(("documented-tags", "head", src.path), lambda: list(documented_tags(src.text, grammar(ctx), True)))


def spelled_line(ctx: Context, prod: Product, rev: str = "head") -> tuple[str, int]:
    """Where a product's tag is written out (e.g. the `echo "tag=..."` line), else the line that pushes it."""
    if prod.known:
        for path, line in sorted(prod.origins):
            src = ctx.source(path, rev)
            if src is not None and prod.tag in src.line(line):
                return path, line
    return prod.path, prod.line


# -- which Dockerfile builds an image ----------------------------------------------------------------------------


def built_files(wf: Workflow, job_id: str, _seen: frozenset[str] = frozenset()) -> set[str]:
    """Dockerfiles a job builds (build-push-action `file:`, `docker build -f`); for a job that only merges
    manifests, the Dockerfiles of the jobs it needs. Unresolvable names are left out."""
    from npu_review.checks.parsers.gha.workflow import legs

    job = wf.jobs.get(job_id)
    if job is None or job_id in _seen:
        return set()
    out: set[str] = set()
    for scope in legs(wf, job):
        for step in job.steps:
            if step.uses and step.uses.split("@")[0].endswith("docker/build-push-action"):
                node = step.with_.get("file")
                if node is not None and node.is_scalar:
                    for val in scope.resolve(node):
                        if val.known:
                            out.add(re.sub(r"^(\./)+", "", val.text.strip()))
            elif step.run is not None:
                for m in re.finditer(
                    r"docker\s+(?:buildx\s+)?build\b[^\n]*?(?:-f|--file)[ =]+[\"']?([\w./-]+)", step.run.value
                ):
                    out.add(re.sub(r"^(\./)+", "", m.group(1)))
    if not out:
        for need in job.needs:
            out |= built_files(wf, need, _seen | {job_id})
    return out


def dockerfiles_of(ctx: Context, tag: str, info: TagInfo) -> tuple[set[str], bool]:
    """The Dockerfiles (at head) whose image a consumer tag pulls, and whether the tag matched exactly.

    Exact: the producers that push `tag`. Otherwise, for a floating tag, the floating producers of the same
    device and backend (the tag is stale; its image is still meant to come from there)."""
    inv = inventory(ctx)
    products = inv.producers_of(tag)
    exact = bool(products)
    if not products and info.known and info.role == "floating":
        products = [
            p for p in inv.products() if p.known and p.info.role == "floating" and p.info.variant == info.variant
        ]
    files: set[str] = set()
    for prod in products:
        wf = workflow(ctx, prod.path)
        if wf is not None:
            files |= {f for f in built_files(wf, prod.job) if ctx.changeset.head.exists(f)}
    cann = info.values.get("cann")
    if not exact and cann:
        # A stale tag naming another CANN version was built from another Dockerfile (an older one).
        files = {f for f in files if (base := base_cann(ctx, f)) is not None and base.lower() == cann.lower()}
    return files, exact


def unchanged_pullers(ctx: Context, inv: Inventory, consumer: Consumer) -> list[Consumer]:
    """Other consumer lines, not added by the change, that pull the same tag as `consumer` (on a change).

    A changed or new consumer that pulls what the untouched jobs pull copies the state it found (a migration
    half done elsewhere); its tag is not this change's doing. Empty in an audit."""
    if ctx.audit or not consumer.tag:
        return []
    return [
        c
        for c in inv.consumers
        if c.tag == consumer.tag
        and (c.path, c.line) != (consumer.path, consumer.line)
        and not ctx.is_added_line(c.path, c.line)
    ]
