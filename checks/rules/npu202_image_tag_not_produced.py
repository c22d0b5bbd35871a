"""NPU202: an Ascend workflow pulls a floating image tag that no build workflow pushes (any more)."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Iterator

from rapidfuzz.distance import Levenshtein

from npu_review.checks.analysis.builds import (
    IMAGE_SCRIPT_GLOBS,
    Graph,
    Unpushed,
    change_adds_pull_lines,
    change_mentions,
    graph,
    repository,
    unpushed,
)
from npu_review.checks.analysis.images import (
    INVENTORY_KINDS,
    Consumer,
    Inventory,
    Product,
    changed_consumers,
    grammar,
    inventory,
    replaced_consumers,
    spelled_line,
    unchanged_pullers,
)
from npu_review.checks.context import Context
from npu_review.checks.facts import Facts
from npu_review.checks.kinds import (
    ASCEND_DOCKERFILE,
    ASCEND_WORKFLOW,
    DOCKERFILE,
    DOCS,
    NPU_SCRIPT,
    SHELL,
    WORKFLOW,
)
from npu_review.checks.messages import places
from npu_review.checks.model import Related, Severity
from npu_review.checks.parsers.gha.values import WILD
from npu_review.checks.parsers.imagetags import parse_ref
from npu_review.checks.rule import Hit, Rule

# What the image graph is built from for this rule: the builds that push (workflows, scripts) and the Ascend
# Dockerfiles; pulls are judged in the files a change touches (all of them in an audit).
_GRAPH_READS = frozenset({WORKFLOW, ASCEND_WORKFLOW, ASCEND_DOCKERFILE})


class ImageTagNotProduced(Rule):
    """A workflow pulls an image tag that no build workflow pushes, or a change stops pushing a tag that
    workflows still pull.

    Why: the registry keeps old tags forever, so a job pulling a tag the build no longer pushes still starts,
    and silently tests an image that stopped getting the latest verl, CANN and vLLM-Ascend. This happened when
    the build renamed its tags (F1 `verl-9.0.0-910b-...-latest` to F2 `latest-cann9.0.0-...` in #7008, F2 to F3
    `latest-vllm-910b-ubuntu` in #7201) before the consumers were moved, and can happen when a build workflow is
    deleted (#7035 deleted the qwen3_5 builds). The tags a build pushes are evaluated from the workflow: literal
    `echo "tag=..." >> $GITHUB_OUTPUT`, `imagetools create -t`, `tags:` lists, `${{ matrix.* }}`, and the F1
    tag derived from the Dockerfile's FROM line. Temporary `tmp-*` tags are not products.

    Reported on a changed consumer line whose floating tag is not pushed (or is a typo or two away from a
    pushed tag), and on a changed producer line (the tag, or the Dockerfile FROM an F1 tag derives from) that
    stops pushing a tag that consumers still pull, listing those consumers (twin builds moved to one new tag
    scheme, the device aside, are one cause: one comment). When the change deletes the build
    (no changed line is left to carry the finding), each consumer still pulling its tags is reported, also
    when the change does not touch it (listed in the review summary, not inline). Untouched old state is not
    reported on a change; `--all` reports it.
    A changed or new consumer that pulls the same tag as jobs the change does not touch (a new job copying
    the others mid-migration) is a notice: the stale tag is the state the change found, not its doing. So is a
    job that pulled, before the change, a tag no build pushed either and now pulls another (a frozen image's
    twin for the job's new runner): it ran on an old image already.
    Without a tag grammar (no project profile, any layout), the same holds for every image the repository's
    own builds push, read from its image/build graph (checks/analysis/builds.py): pushes in workflows (run
    blocks, build-push-action, metadata-action rules, reusable workflows evaluated per call), scripts and docs;
    pulls in CI `container:`/`services:`, `docker run`/`docker pull`, Dockerfile `FROM` and docs' code blocks.
    A pulled version tag no build can push (mirrors of one image hold each other's tags) is an error (twins that
    differ only by a variant suffix the builds use are one finding); so is a pulled name that is the namespace
    of a pushed repository (`quay.io/ascend:<version>` for `quay.io/ascend/vllm-ascend`). A floating name
    (`nightly-cpu`, `main`) may be kept by hand beside what the builds push, and a tag that is the name of a
    branch the workflows name (`releases/v0.13.0` -> `releases-v0.13.0`) may be pushed by that branch's copy of
    the build: neither is reported. Nor is a tag a build of the repository makes without pushing it (a script's
    `docker build -t <tag>`, pushed by hand or run right after): the image is the repository's own.

    Not reported: a producer whose tag cannot be evaluated (an unresolvable expression, metadata-action), a
    device/backend no build workflow in the repo builds at all, release and model-specific tags pulled by a
    consumer (pinned on purpose). Builds that run only on `workflow_dispatch` count as producers.

    Bad:
        # .github/workflows/docker-build-ascend-a2.yml
        echo "tag=latest-vllm-910b-ubuntu" >> "$GITHUB_OUTPUT"
        # .github/workflows/vllm_ascend.yml (SWR_CN = swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci)
        image: SWR_CN/verl/verl:latest-cann9.0.0-torch_npu2.9.0post2-910b-ubuntu22.04-py3.11-vllm

    Good:
        # .github/workflows/docker-build-ascend-a2.yml
        echo "tag=latest-vllm-910b-ubuntu" >> "$GITHUB_OUTPUT"
        # .github/workflows/vllm_ascend.yml
        image: SWR_CN/verl/verl:latest-vllm-910b-ubuntu

    Fix: pull the tag the build pushes for the same device and backend (the message names it), or rename the
    producer and all consumers in the same PR.
    """

    id = "NPU202"
    name = "image-tag-not-produced"
    severity = Severity.ERROR
    title = "Pulled Ascend image tag is not pushed by any build workflow"
    kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW, DOCS, DOCKERFILE, ASCEND_DOCKERFILE, SHELL})
    context_kinds = INVENTORY_KINDS | _GRAPH_READS

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return IMAGE_SCRIPT_GLOBS  # scripts that push images (the graph reads them among the producers)

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        inv = inventory(ctx)
        yield from self._consumers(ctx, inv)
        if not ctx.audit:
            yield from self._producer_changes(ctx, inv)
        yield from self._graph_pulls(ctx)

    # -- without a tag grammar: the image/build graph --------------------------------------------------------------
    def _graph_pulls(self, ctx: Context) -> Iterator[Hit]:
        """Pulls of an image the repository's own builds push (any layout, no profile), judged against the tags
        the builds can push; the images of the profile's families are judged above."""
        if not change_mentions(ctx, ("docker", "image", "container", "FROM", "push", "metadata-action")):
            return
        if not change_adds_pull_lines(ctx):
            return  # only pulls on added lines are judged here (below), and no added line can hold one
        g = graph(ctx, reads=_GRAPH_READS)
        if not g.pushed:
            return
        fam = grammar(ctx)
        groups: dict[tuple[str, str, str], list[Unpushed]] = {}

        def judged(repo: str) -> bool:  # the families' images are judged above, with the tag grammar
            ref = parse_ref(repo)
            return ref is None or fam.family(ref) is None

        for pull in g.judged_pulls(judged):
            if fam.family(pull.ref) is not None:
                continue
            if not ctx.audit and not ctx.is_added_line(pull.path, pull.line):
                continue
            miss = unpushed(g, pull)
            if miss is None or not _ascend_repository(ctx, g, miss):
                continue
            stem = _stem(pull.ref.tag or "", miss.pushed) if miss.kind == "tag" else ""
            groups.setdefault((miss.repository, miss.kind, stem), []).append(miss)
        for (_repo, kind, _tag_stem), items in sorted(groups.items()):
            items.sort(key=lambda m: (m.pull.path, m.pull.line))
            first = items[0]
            others = tuple(Related(m.pull.path, m.pull.line, "same cause") for m in items[1:])
            yield self._namespace(ctx, first, others) if kind == "namespace" else self._unpushed_tag(first, others)

    def _unpushed_tag(self, miss: Unpushed, others: tuple[Related, ...]) -> Hit:
        shown = list(dict.fromkeys(f"`{p.shown}`" for p in miss.pushed))
        where = places(sorted({f"{p.path}:{p.line}" for p in miss.pushed}))
        also = f" ({len(others)} more place(s) pull the same way: {places(f'{r.path}:{r.line}' for r in others)})"
        return Hit(
            miss.pull.path,
            miss.pull.line,
            f"No build of this repository pushes `{miss.pull.ref.text}`: the builds push `{miss.repository}` as "
            f"{', '.join(shown[:6])}{' ...' if len(shown) > 6 else ''} ({where}). A tag nobody pushes is missing, "
            f"or an old copy that is never rebuilt.{also if others else ''} Pull a tag a build pushes.",
            related=others,
        )

    def _namespace(self, ctx: Context, miss: Unpushed, others: tuple[Related, ...]) -> Hit:
        repos = sorted({p.repository for p in miss.pushed})
        where = places(sorted({f"{p.path}:{p.line}" for p in miss.pushed}))
        suggestion = None
        src = ctx.source(miss.pull.path)
        written = miss.pull.ref.repository
        if len(repos) == 1 and src is not None:
            text = src.line(miss.pull.line)
            name = repos[0].rsplit("/", 1)[1]
            if text.count(written + ":") == 1:
                suggestion = text.replace(written + ":", f"{written}/{name}:")
        return Hit(
            miss.pull.path,
            miss.pull.line,
            f"`{written}` is a namespace, not an image: no build pushes it (registries such as quay.io hold "
            f"`namespace/name` repositories). The builds of this repository push {', '.join(f'`{r}`' for r in repos)} "
            f"({where}); write the image's name.",
            suggestion=suggestion,
            related=others,
        )

    # -- consumers pulling what nobody pushes -------------------------------------------------------------------
    def _consumers(self, ctx: Context, inv: Inventory) -> Iterator[Hit]:
        if not inv.producers:
            return  # the images are built elsewhere: unknown
        built_variants = {p.info.variant for p in inv.products() if p.info.known}
        floating_by_variant: dict[tuple[str | None, str | None], set[str]] = defaultdict(set)
        for p in inv.products():
            if p.known and p.info.role == "floating":
                floating_by_variant[p.info.variant].add(p.tag)
        literal = sorted(inv.literal_tags())
        # Only added consumer lines are judged on a change: those of the files it touches.
        for c in changed_consumers(ctx):
            if not ctx.audit and not ctx.is_added_line(c.path, c.line):
                continue
            if not c.info.known:
                near = [t for t in literal if Levenshtein.distance(c.tag, t, score_cutoff=2) <= 2]
                if len(near) == 1 and inv.produced(c.tag) is False:
                    yield self._typo(ctx, c, near[0])
                continue
            if c.info.role != "floating" or c.info.variant not in built_variants:
                continue
            if inv.produced(c.tag) is not False:
                continue
            pushed = sorted(floating_by_variant.get(c.info.variant, ()))
            device, backend = c.info.variant
            where = places(
                ":".join(map(str, spelled_line(ctx, p))) for p in inv.products() if p.known and p.tag in pushed
            )
            hint = (
                f" The build pushes {', '.join(f'`{t}`' for t in pushed)} for {device}/{backend} ({where})."
                if pushed
                else ""
            )
            suggestion = None
            src = ctx.source(c.path)
            if len(pushed) == 1 and src is not None and src.line(c.line).count(c.tag) == 1:
                suggestion = src.line(c.line).replace(c.tag, pushed[0])
            same = unchanged_pullers(ctx, inv, c)
            also = (
                f" {len(same)} unchanged job line(s) pull the same tag ({places(o.where for o in same)}): a "
                "migration not done yet; move them all together."
                if same
                else ""
            )
            # The job pulled, before this change, a tag no build pushed either: it already ran on an old image,
            # and the change moves it to another one (the device's twin of a frozen tag), not off a built one.
            before = [] if same else replaced_consumers(ctx, c)
            frozen = bool(before) and all(inventory(ctx, "base").produced(b.tag) is False for b in before)
            if frozen:
                also = f" The job pulled `{before[0].tag}` before this change, which no build pushed either."
            yield Hit(
                c.path,
                c.line,
                f"No build workflow pushes `{c.tag}`; the registry may still serve an old copy, which is never "
                f"rebuilt.{hint}{also}",
                suggestion=suggestion,
                severity=Severity.NOTICE if same or frozen else None,
            )

    def _typo(self, ctx: Context, c: Consumer, near: str) -> Hit:
        src = ctx.source(c.path)
        text = src.line(c.line) if src is not None else ""
        return Hit(
            c.path,
            c.line,
            f"No build workflow pushes `{c.tag}`; did you mean `{near}`, which the build pushes?",
            suggestion=text.replace(c.tag, near) if text.count(c.tag) == 1 else None,
        )

    # -- producers that stop pushing what consumers pull ---------------------------------------------------------
    def _producer_changes(self, ctx: Context, inv: Inventory) -> Iterator[Hit]:
        base = inventory(ctx, "base")
        removed: dict[str, list[Product]] = defaultdict(list)
        for p in base.products():
            if p.known and inv.produced(p.tag) is False:
                removed[p.tag].append(p)
        if not removed:
            return
        stale: dict[str, list[Consumer]] = defaultdict(list)
        for c in inv.consumers:
            if c.tag in removed:
                stale[c.tag].append(c)
        if not stale:
            return
        sites = [(prod, site) for prod in inv.products() if (site := _changed_line(ctx, prod)) is not None]
        for old, consumers in sorted(stale.items()):
            before = removed[old]
            was = places(":".join(map(str, spelled_line(ctx, p, "base"))) for p in before)
            matching = _sites_for(ctx, before, sites)
            listed = places(c.where for c in consumers)
            if matching:
                for prod, (path, line) in matching:
                    new = f"`{prod.tag}`" if prod.known else "a tag that cannot be evaluated"
                    yield Hit(
                        path,
                        line,
                        f"This change stops pushing `{old}` (pushed before by {was}; now {new}), but "
                        f"{len(consumers)} workflow line(s) still pull it: {listed}. The old image stays in the "
                        "registry, frozen, so those jobs keep running on it: move them to the new tag once this "
                        "change's build has pushed it (a follow-up PR, if the build runs after merge).",
                        # A migration in steps is how projects do it (the new tag exists only after the build): a
                        # warning, not an error (blind judging: an error asking to move the pulls in this PR was
                        # noise three times in a calibration replay).
                        severity=Severity.WARNING,
                        # One retagging decision, one comment: every tag the change's builds stop pushing while
                        # jobs pull it (`latest-vllm-910b-ubuntu` and `latest-vllm-a3-ubuntu`, and the sglang
                        # build's `latest-sglang-a3-ubuntu` of the same change: replay-r9 judged its own comment a
                        # duplicate) is one cause.
                        cause="stops pushing",
                    )
                continue
            deleted = [p.path for p in before if not ctx.changeset.head.exists(p.path)]
            cause = f"deletes {', '.join(sorted(set(deleted)))}" if deleted else "changes the build"
            for c in consumers:
                # A deletion has no head line to carry the finding: it goes on each consumer, and on a consumer
                # the change did not touch it is marked as caused by the change (listed in the review summary).
                yield Hit(
                    c.path,
                    c.line,
                    f"This change {cause}, which pushed `{old}` ({was}); nothing pushes it any more, but this "
                    "job still pulls it.",
                    caused_by_change=not ctx.is_added_line(c.path, c.line),
                )


def _sites_for(
    ctx: Context, before: list[Product], sites: list[tuple[Product, tuple[str, int]]]
) -> list[tuple[Product, tuple[str, int]]]:
    """The changed product lines that replaced `before`: same build file first, then same variant, then any."""
    info = before[0].info
    renamed = {c.old_path: c.path for c in ctx.changeset.changes.values() if c.old_path}
    paths = {renamed.get(p.path, p.path) for p in before}
    known = [s for s in sites if s[0].known] or sites

    def same_variant(s: tuple[Product, tuple[str, int]]) -> bool:
        return s[0].info.variant == info.variant and s[0].info.role == info.role

    tiers = [
        [s for s in known if s[0].path in paths and same_variant(s)],
        [s for s in known if s[0].path in paths and s[0].info.role == info.role],
        [s for s in known if s[0].path in paths],
        [s for s in known if same_variant(s)],
        known,
    ]
    return next((t for t in tiers if t), [])


def _changed_line(ctx: Context, prod: Product) -> tuple[str, int] | None:
    """The changed line a product's tag comes from: the line spelling the tag, else the push, else any origin."""
    added = sorted((path, line) for path, line in prod.origins if ctx.is_added_line(path, line))
    if not added:
        return None
    best: tuple[int, tuple[str, int]] | None = None
    for path, line in added:
        src = ctx.source(path)
        text = src.line(line) if src is not None else ""
        score = 3 if prod.known and prod.tag in text else 2 if (path, line) == (prod.path, prod.line) else 1
        if "FROM" in text.split()[:1]:
            score = max(score, 2)
        if best is None or score > best[0]:
            best = (score, (path, line))
    return best[1] if best else None


def _stem(tag: str, pushed: tuple[object, ...]) -> str:
    """The tag without a variant suffix the builds use (`v0.13.0-dev-a3` -> `v0.13.0-dev`): the twins of one
    stale tag are one cause."""
    suffixes = set()
    for p in pushed:
        shown = getattr(p, "shown", "")
        if ">" in shown:
            tail = shown.rsplit(">", 1)[1]
            if tail.startswith("-"):
                suffixes.add(tail)
    for suffix in sorted(suffixes, key=len, reverse=True):
        if tag.endswith(suffix):
            return tag[: -len(suffix)]
    return tag


def _ascend_repository(ctx: Context, g: Graph, miss: Unpushed) -> bool:
    """The pulled image is an Ascend one: the repository is Ascend-only, or a build pushing it is an Ascend
    workflow or NPU script, or builds an Ascend Dockerfile."""
    if ctx.ascend_only():
        return True
    repos = {p.repository for p in miss.pushed}
    for p in miss.pushed:
        if ctx.has_kind(p.path, ASCEND_WORKFLOW) or ctx.has_kind(p.path, NPU_SCRIPT):
            return True
    for b in g.builds:
        if b.dockerfile is None or not ctx.has_kind(b.dockerfile, ASCEND_DOCKERFILE):
            continue
        for t in b.tags:
            name = t.text.rsplit(":", 1)[0] if ":" in t.text.rsplit("/", 1)[-1] else t.text
            ref = parse_ref(name) if WILD not in name else None  # the tag may be unknown, the repository not
            if ref is not None and repository(ref) in repos:
                return True
    return False
