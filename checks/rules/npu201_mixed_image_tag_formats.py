"""NPU201: the Ascend workflows pull floating image tags of different formats, or the SWR mirrors disagree."""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Iterable
from itertools import combinations

from npu_review.checks.analysis.images import (
    INVENTORY_KINDS,
    Consumer,
    Inventory,
    changed_consumers,
    grammar,
    inventory,
    unchanged_pullers,
)
from npu_review.checks.context import Context
from npu_review.checks.kinds import ASCEND_WORKFLOW
from npu_review.checks.messages import places
from npu_review.checks.model import Severity
from npu_review.checks.parsers.imagetags import Grammar
from npu_review.checks.rule import Hit, Rule


class MixedImageTagFormats(Rule):
    """Floating ("latest") image tags in the Ascend workflows use more than one tag format, or two mirrors
    pull different tags for the same device and backend.

    Why: the build pushes one floating tag per device/backend in one format (F1 `verl-9.0.0-910b-...-latest`,
    F2 `latest-cann9.0.0-torch_npu2.9.0post2-910b-...-vllm`, F3 `latest-vllm-910b-ubuntu`). When a migration
    updates only some workflows, the others keep pulling the old tag, which the registry still serves but nobody
    rebuilds: those jobs test a stale image and pass or fail for the wrong reason. The same happens when the
    nightly jobs on the `swr.ap-southeast-1` mirror pull another tag than the PR jobs on `swr.cn-southwest-2`.

    Not reported: release tags (`v0.8.0-cann9.0.0-...`, `verl-8.5.0-...-v0.7.1`) and model-specific tags
    (`verl-8.5.2-a3-...-qwen3-5`) next to floating ones; they are pinned on purpose. A job named `..._a3` that
    runs a 910b image on an a2b3 runner is not this rule's business (see NPU211). A changed or new job that
    pulls the same tag as jobs the change does not touch (a new consumer copying the others mid-migration) is
    a notice only: the mix of formats is the state the change found. A change that moves consumer lines to the
    format the build pushes gets no finding on those lines (it made them right): the consumers it left on the old
    format are warnings in the review body and the check run, one cause.

    In the examples, SWR_CN stands for swr.cn-southwest-2.myhuaweicloud.com/modelfoundry/ascend-ci and SWR_AP
    for swr.ap-southeast-1.myhuaweicloud.com/base_image/ascend-ci.

    Bad:
        # .github/workflows/e2e_ascend.yml (migrated)
        image: SWR_CN/verl/verl:latest-vllm-910b-ubuntu
        # .github/workflows/model_ascend.yml (forgotten)
        image: SWR_CN/verl/verl:latest-cann9.0.0-torch_npu2.9.0post2-910b-ubuntu22.04-py3.11-vllm
        # .github/workflows/nightly_ascend.yml (other mirror, other tag)
        image: SWR_AP/verl/verl:latest-cann9.0.0-torch_npu2.9.0post2-910b-ubuntu22.04-py3.11-vllm

    Good:
        # .github/workflows/e2e_ascend.yml
        image: SWR_CN/verl/verl:latest-vllm-910b-ubuntu
        # .github/workflows/nightly_ascend.yml
        image: SWR_AP/verl/verl:latest-vllm-910b-ubuntu
        # .github/workflows/release_ascend.yml (a release tag, pinned on purpose)
        image: SWR_CN/verl/verl:v0.8.0-cann9.0.0-torch_npu2.9.0.post2-910b-ubuntu22.04-py3.11-vllm

    Fix: move every floating tag to the format the build pushes now (the message names it and the files still
    on the old one), on both mirrors, in the same PR.
    """

    id = "NPU201"
    name = "mixed-image-tag-formats"
    severity = Severity.ERROR
    title = "Ascend workflows mix floating image tag formats, or the mirrors disagree"
    kinds = frozenset({ASCEND_WORKFLOW})
    context_kinds = INVENTORY_KINDS

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        # On a change, nothing is reported unless it adds a floating consumer line (in a file it touches): the
        # other workflows' consumers are read only then.
        if not ctx.audit and not any(
            c.info.role == "floating" and ctx.is_added_line(c.path, c.line) for c in changed_consumers(ctx)
        ):
            return
        inv = inventory(ctx)
        floating = [c for c in inv.consumers if c.info.role == "floating"]
        if not floating:
            return
        g = grammar(ctx)
        messages: dict[tuple[str, int], list[str]] = defaultdict(list)
        suggestions: dict[tuple[str, int], str] = {}
        pushed = self._formats(ctx, g, inv, floating, messages, suggestions)
        self._mirrors(ctx, g, inv, floating, messages)
        by_line = {(c.path, c.line): c for c in floating}
        for (path, line), texts in sorted(messages.items()):
            c = by_line.get((path, line))
            # A change that moves consumers to the format the build pushes made its own lines right: the stale
            # consumers elsewhere are listed in the review body and the check run (a cross-file finding the
            # change brings up), as a warning, never as an error on the line the change fixed.
            elsewhere = pushed and not ctx.is_added_line(path, line)
            same = unchanged_pullers(ctx, inv, c) if c is not None and not elsewhere else []
            if same:  # a new job that pulls what the untouched jobs pull: the mix is not this change's doing
                texts = [*texts, f"{len(same)} unchanged job line(s) pull the same tag: a migration not done yet."]
            yield Hit(
                path,
                line,
                " ".join(texts),
                suggestion=suggestions.get((path, line)),
                severity=Severity.NOTICE if same else (Severity.WARNING if elsewhere else None),
                caused_by_change=elsewhere,
                cause=f"stale tag format {c.info.scheme}" if elsewhere and c is not None else None,
            )

    # -- one format ------------------------------------------------------------------------------------------
    def _formats(
        self,
        ctx: Context,
        g: Grammar,
        inv: Inventory,
        floating: list[Consumer],
        messages: dict[tuple[str, int], list[str]],
        suggestions: dict[tuple[str, int], str],
    ) -> bool:
        """The format findings; True when the change moves consumer lines to the format the build pushes (their
        stale counterparts are then the change's cross-file findings, not errors on its own lines)."""
        counts = Counter(c.info.scheme for c in floating)
        if len(counts) < 2:
            return False
        built = {p.info.scheme for p in inv.products() if p.known and p.info.role == "floating"}
        reference: str | None = None
        why = ""
        if len(built) == 1 and next(iter(built)) in counts:
            reference, why = next(iter(built)), ", the format the build pushes"
        else:
            (top, n), *rest = counts.most_common()
            if not rest or rest[0][1] < n:
                reference = top
        pushed = bool(why) and not ctx.audit
        pushed = pushed and any(ctx.is_added_line(c.path, c.line) and c.info.scheme == reference for c in floating)
        total = len(floating)
        produced = inv.literal_tags()
        summarised: set[str] = set()
        for c in floating:
            key = (c.path, c.line)
            scheme = c.info.scheme or "?"
            if reference is not None and scheme != reference:
                others = [o.where for o in floating if o.info.scheme == reference]
                messages[key].append(
                    f"`{c.tag}` uses the {scheme} tag format ({g.scheme_format(scheme)}) while "
                    f"{counts[reference]} of {total} floating Ascend image tags use {reference} "
                    f"({g.scheme_format(reference)}){why}, e.g. {places(others, 3)}."
                )
                twin = {
                    o.tag
                    for o in floating
                    if o.info.scheme == reference and o.info.variant == c.info.variant and o.tag in produced
                }
                src = ctx.source(c.path)
                line_text = src.line(c.line) if src is not None else ""
                if len(twin) == 1 and c.tag and line_text.count(c.tag) == 1:
                    suggestions[key] = line_text.replace(c.tag, next(iter(twin)))
            elif reference is None or (ctx.is_added_line(c.path, c.line) and not ctx.audit):
                stale = [o for o in floating if o.info.scheme != scheme]
                if not stale or (pushed and scheme == reference):
                    continue  # (the line the change made right: its stale counterparts are reported instead)
                extra = ""
                if reference is not None:  # a change on the reference side: one summary per file
                    if c.path in summarised:
                        continue
                    summarised.add(c.path)
                    siblings = [o for o in floating if o.path == c.path and o.info.scheme == scheme]
                    more = sum(1 for o in siblings if ctx.is_added_line(o.path, o.line)) - 1
                    extra = f" (as do {more} more changed lines of this file)" if more > 0 else ""
                formats = ", ".join(f"{s} ({n})" for s, n in counts.most_common() if s != scheme)
                mine = f"the {scheme} tag format{why if scheme == reference else ''}"
                messages[key].append(
                    f"`{c.tag}` uses {mine}{extra}, but other floating Ascend image tags still use {formats}: "
                    f"{places(o.where for o in stale)}. Move them all to one format in the same PR."
                )
        return pushed

    # -- mirrors agree -----------------------------------------------------------------------------------------
    def _mirrors(
        self,
        ctx: Context,
        g: Grammar,
        inv: Inventory,
        floating: list[Consumer],
        messages: dict[tuple[str, int], list[str]],
    ) -> None:
        by_variant: dict[tuple[str, str], dict[str, list[Consumer]]] = defaultdict(lambda: defaultdict(list))
        for c in floating:
            if c.info.device and c.info.backend:
                by_variant[(c.info.device, c.info.backend)][c.location].append(c)
        produced = inv.literal_tags()
        summarised: set[tuple[str, str, str]] = set()  # one note per file and variant on the reference side
        for (device, backend), locations in sorted(by_variant.items()):
            if len(locations) < 2:
                continue
            tags = {loc: {c.tag for c in cs} for loc, cs in locations.items()}
            if not any(tags[a].isdisjoint(tags[b]) for a, b in combinations(tags, 2)):
                continue
            reference: str | None = None
            with_built = [loc for loc in tags if tags[loc] & produced]
            if len(with_built) == 1:
                reference = with_built[0]
            else:
                ranked = sorted(locations, key=lambda loc: -len(locations[loc]))
                if len(locations[ranked[0]]) > len(locations[ranked[1]]):
                    reference = ranked[0]
            for loc, cs in sorted(locations.items()):
                for c in cs:
                    key = (c.path, c.line)
                    if reference is not None and loc != reference:
                        if c.tag in tags[reference]:
                            continue
                        ref_tags = ", ".join(f"`{t}`" for t in sorted(tags[reference]))
                        messages[key].append(
                            f"For {device}/{backend}, mirror {g.mirror_name(loc)} pulls `{c.tag}` while "
                            f"mirror {g.mirror_name(reference)} pulls {ref_tags} "
                            f"({places(o.where for o in locations[reference])})."
                        )
                    elif reference is None or (ctx.is_added_line(c.path, c.line) and not ctx.audit):
                        other = [o for lo, os_ in locations.items() if lo != loc for o in os_ if o.tag not in tags[loc]]
                        if not other or (reference is not None and (c.path, device, backend) in summarised):
                            continue
                        summarised.add((c.path, device, backend))
                        messages[key].append(
                            f"For {device}/{backend}, mirror {g.mirror_name(loc)} pulls `{c.tag}` but other "
                            f"mirrors pull {', '.join(sorted({f'`{o.tag}`' for o in other}))} "
                            f"({places(o.where for o in other)})."
                        )
