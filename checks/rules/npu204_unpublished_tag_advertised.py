"""NPU204: docs or a script header tell users to pull an Ascend image tag that is neither built nor listed."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.analysis.images import (
    INVENTORY_KINDS,
    Inventory,
    grammar,
    head_documented_tags,
    inventory,
    spelled_line,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import DOCS, SHELL
from npu_review.checks.messages import places
from npu_review.checks.model import Severity
from npu_review.checks.parsers.imagetags import Grammar, documented_tags
from npu_review.checks.rule import Hit, Rule

_HEADING = lazyre.compile(r"\s{0,3}(#{1,6})\s+(.*?)\s*#*\s*$")


class UnpublishedTagAdvertised(Rule):
    """Documentation or a script header names an Ascend image tag that no build workflow pushes and that
    docker/ascend/supported_tags.md does not list.

    Why: users copy the tag from the docs (`docker pull quay.io/ascend/verl:<tag>`, "base image: <tag>" in a
    script header). A tag that was never pushed fails to pull; one the build stopped pushing gives an image
    nobody rebuilds. verl's F2 tags lived on in the CI guide after the build moved to `latest-vllm-910b-ubuntu`
    (#7201). The published tags are those the build workflows push and every table of supported_tags.md (its
    History tables list old tags on purpose). In supported_tags.md itself, a `latest` tag outside the History
    tables must be one the build pushes.

    Not reported here: tags that differ from a published tag only in how a component is named or spelled
    (`torch2.9.0post2` for `torch_npu2.9.0.post2`): NPU203 reports those. Temporary `tmp-*` tags, tags of
    images this repository does not build, and anything when the repository has neither a build workflow nor
    a supported-tags list.

    Bad:
        docker pull quay.io/ascend/verl:latest-cann9.0.0-torch_npu2.9.0post2-910b-ubuntu22.04-py3.11-vllm

    Good:
        docker pull quay.io/ascend/verl:latest-vllm-910b-ubuntu

    Fix: name a tag from supported_tags.md (a suggestion is attached when exactly one published tag has the
    same device, backend and role), or add the tag there when a build really pushes it.
    """

    id = "NPU204"
    name = "unpublished-tag-advertised"
    severity = Severity.WARNING
    title = "Docs advertise an Ascend image tag that is not published"
    kinds = frozenset({DOCS, SHELL})
    context_kinds = INVENTORY_KINDS | {DOCS}

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if not any(m in src.text for m in ctx.facts.published_tags.text_markers):
            return
        g = grammar(ctx)
        occurrences = list(self._tags(ctx, src, g))
        if not occurrences:
            return
        inv = inventory(ctx)
        listed = _listed(ctx, g)
        lists = ctx.facts.published_tags.lists
        if not inv.producers and not listed:
            return  # nothing says what is published: unknown
        if src.path in lists:
            yield from self._list_file(ctx, src, g, inv)
            return
        published, normalized = _published(ctx, g, inv, listed)
        reported: set[int] = set()
        for line, tag in occurrences:
            if line in reported or tag in published or g.is_temporary(tag):
                continue
            info = g.classify(tag)
            if inv.produced(tag) is None:
                continue  # a producer whose tag cannot be evaluated may push it
            if info.known and g.normalized(info) in normalized:
                continue  # the same tag named or spelled differently: NPU203's finding
            if not info.known and not listed:
                continue
            reported.add(line)
            yield self._hit(ctx, src, g, inv, listed, line, tag)

    # -- where tags are named ----------------------------------------------------------------------------------
    def _tags(self, ctx: Context, src: SourceFile, g: Grammar) -> Iterator[tuple[int, str]]:
        seen: set[tuple[int, int]] = set()
        if DOCS in src.kinds:
            for line, tag, start, _ in head_documented_tags(ctx, src):
                seen.add((line, start))
                yield line, tag
            return
        # Scripts: explicit references anywhere, bare tags only in comments (the header).
        for line, tag, start, _ in documented_tags(src.text, g, bare=False):
            seen.add((line, start))
            yield line, tag
        comments = "\n".join(t if t.lstrip().startswith("#") else "" for t in src.lines)
        for line, tag, start, _ in documented_tags(comments, g, bare=True):
            if (line, start) not in seen:
                yield line, tag

    # -- supported_tags.md itself ------------------------------------------------------------------------------
    def _list_file(self, ctx: Context, src: SourceFile, g: Grammar, inv: Inventory) -> Iterator[Hit]:
        if not inv.producers:
            return
        built = {p.info.variant for p in inv.products() if p.info.known}
        history = _history_lines(src, list(ctx.facts.published_tags.history_sections))
        for line, tag, _, _ in head_documented_tags(ctx, src):
            info = g.classify(tag)
            if line in history or info.role != "floating" or info.variant not in built:
                continue
            if inv.produced(tag) is not False:
                continue
            pushed = sorted(
                p.tag
                for p in inv.products()
                if p.known and p.info.variant == info.variant and p.info.role == "floating"
            )
            text = src.line(line)
            suggestion = text.replace(tag, pushed[0]) if len(pushed) == 1 and text.count(tag) == 1 else None
            hint = f" The build pushes `{pushed[0]}` for {info.device}/{info.backend}." if len(pushed) == 1 else ""
            yield Hit(
                src.path,
                line,
                f"`{tag}` is listed as a current image, but no build workflow pushes it (any more): users pull "
                f"a copy nobody rebuilds.{hint} Move it to the History table or list the tag the build pushes.",
                suggestion=suggestion,
            )

    def _hit(
        self,
        ctx: Context,
        src: SourceFile,
        g: Grammar,
        inv: Inventory,
        listed: dict[str, tuple[str, int]],
        line: int,
        tag: str,
    ) -> Hit:
        info = g.classify(tag)
        same: dict[str, str] = {}
        if info.known:
            for p in inv.products():
                if p.known and p.info.variant == info.variant and p.info.role == info.role:
                    same[p.tag] = ":".join(map(str, spelled_line(ctx, p)))
            if not same:
                for t, (path, n) in listed.items():
                    ti = g.classify(t)
                    if (
                        ti.known
                        and ti.variant == info.variant
                        and ti.role == info.role
                        and not _in_history(ctx, path, n)
                    ):
                        same.setdefault(t, f"{path}:{n}")
        lists = ", ".join(sorted({p for p, _ in listed.values()})) or "the supported-tags list"
        hint = ""
        suggestion = None
        if len(same) == 1 and info.role == "floating":
            ((other, where),) = same.items()
            hint = f" The published tag for {info.device}/{info.backend} is `{other}` ({where})."
            text = src.line(line)
            if text.count(tag) == 1:
                suggestion = text.replace(tag, other)
        elif same:
            kind = "tags" if info.role == "floating" else f"{info.role} tags"
            hint = f" Published {kind} for {info.device}/{info.backend}: {places(f'`{t}`' for t in sorted(same))}."
        return Hit(
            src.path,
            line,
            f"`{tag}` is not pushed by any build workflow and not listed in {lists}: pulling it fails, or gets an "
            f"image nobody rebuilds.{hint}",
            suggestion=suggestion,
        )


def _published(
    ctx: Context, g: Grammar, inv: Inventory, listed: dict[str, tuple[str, int]]
) -> tuple[set[str], set[str]]:
    """The tags the builds push or the lists name, and their normalised spellings: the same for every file."""

    def load() -> tuple[set[str], set[str]]:
        published = inv.literal_tags() | set(listed)
        return published, {g.normalized(g.classify(t)) for t in published if g.classify(t).known}

    return ctx.memo(("npu204-published", "head", ""), load)


def _listed(ctx: Context, g: Grammar) -> dict[str, tuple[str, int]]:
    """Tags in the published-tags lists at head (every table), with where each is listed first."""

    def load() -> dict[str, tuple[str, int]]:
        out: dict[str, tuple[str, int]] = {}
        for path in ctx.facts.published_tags.lists:
            src = ctx.source(path)
            if src is None:
                continue
            for line, tag, _, _ in head_documented_tags(ctx, src):
                out.setdefault(tag, (src.path, line))
        return out

    return ctx.memo(("published-tags", "head", ""), load)


def _in_history(ctx: Context, path: str, line: int) -> bool:
    src = ctx.source(path)
    if src is None:
        return False
    words = list(ctx.facts.published_tags.history_sections)
    return line in ctx.memo(("history-lines", "head", path), lambda: _history_lines(src, words))


def _history_lines(src: SourceFile, words: list[str]) -> set[int]:
    """Lines under a heading that names one of `words` (until the next heading of the same or a higher level)."""
    out: set[int] = set()
    level_in: int | None = None
    for n, text in enumerate(src.lines, start=1):
        m = _HEADING.match(text)
        if m:
            level = len(m.group(1))
            title = m.group(2).lower()
            if level_in is not None and level <= level_in:
                level_in = None
            if level_in is None and any(re.search(rf"(?<![a-z]){re.escape(w)}(?![a-z])", title) for w in words):
                level_in = level
            continue
        if level_in is not None:
            out.add(n)
    return out
