"""NPU203: an Ascend image tag names a component wrongly (torch vs torch_npu, device, backend, `.postN` spelling)."""

from __future__ import annotations

import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from npu_review.checks import globs, kinds, lazyre
from npu_review.checks.analysis.images import (
    INVENTORY_KINDS,
    Consumer,
    changed_consumers,
    grammar,
    head_documented_tags,
    inventory,
    spelled_line,
)
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.facts import Facts
from npu_review.checks.messages import places
from npu_review.checks.model import Severity
from npu_review.checks.parsers.imagetags import Grammar, TagInfo
from npu_review.checks.rule import Hit, Rule

_POST = lazyre.compile(r"(?P<ver>\d+\.\d+\.\d+)(?P<post>\.?post\d+)")


@dataclass(frozen=True)
class _Occurrence:
    path: str
    line: int
    tag: str
    info: TagInfo
    source: str  # "build", "workflow", "docs"

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}"


def _noted(ctx: Context) -> dict[str, list[tuple[int, str, TagInfo]]]:
    """The tags each doc and script read in the per-file pass names (see `check_file`), by path; kept for the run."""
    return ctx.memo(("npu203-doc-tags", "head", ""), dict)


class ImageTagComponentNaming(Rule):
    """An Ascend image tag that the build pushes, a workflow pulls or the docs give names a component wrongly.

    Why: the tag scheme is `{release|latest}-cann<CANN>-torch_npu<torch_npu>-<910b|a3>-<os>-<py>-<vllm|sglang>`
    (and `latest-<vllm|sglang>-<910b|a3>-<os>`). A tag that writes `torch2.9.0post2` where the scheme says
    `torch_npu2.9.0post2` is a different tag: verl's build pushed `v0.8.0-cann9.0.0-torch2.9.0post2-...` (#7008)
    while the tests and docs pulled `torch_npu...` (fixed in #7124). The same goes for `a2` instead of `910b`,
    a bare `9.0.0` where `cann9.0.0` belongs, and for the torch_npu suffix spelled `.post2` in one place and
    `post2` in another for the same image: `docker pull` fails for one of them.

    Silent on a workflow, doc or script mention of a tag that the build pushes at the same revision: that
    mention names the pushed image rightly even when the pushed tag breaks the scheme (the finding is then on
    the producer's line only, and renaming the mention would name a tag nobody pushes).

    The `.post2`/`post2` spellings both existed on purpose in different eras (F2 floating tags used `post2`,
    release tags use `.post2` since #7201), so spellings are only compared between mentions of the same image
    at the PR head (the same tag up to the spelling), with the build's spelling as the reference.

    Bad:
        # .github/workflows/docker-build-ascend-a2.yml
        docker buildx imagetools create \\
          -t "$IMAGE:v0.8.0-cann9.0.0-torch2.9.0post2-910b-ubuntu22.04-py3.11-vllm" $DIGESTS
        # docs/ascend_tutorial/quick_start.md (the A3 build pushes `...-torch_npu2.9.0.post2-a3-...`)
        docker pull quay.io/ascend/verl:v0.8.0-cann9.0.0-torch_npu2.9.0post2-a3-ubuntu22.04-py3.11-vllm

    Good:
        # .github/workflows/docker-build-ascend-a2.yml
        docker buildx imagetools create \\
          -t "$IMAGE:v0.8.0-cann9.0.0-torch_npu2.9.0.post2-910b-ubuntu22.04-py3.11-vllm" $DIGESTS
        # docs/ascend_tutorial/quick_start.md
        docker pull quay.io/ascend/verl:v0.8.0-cann9.0.0-torch_npu2.9.0.post2-a3-ubuntu22.04-py3.11-vllm

    Fix: rename the component as the message says (a suggestion is attached when the fix is exact) and use the
    build's `.postN` spelling everywhere.
    """

    id = "NPU203"
    name = "image-tag-component-naming"
    severity = Severity.ERROR
    title = "Ascend image tag names a component wrongly or spells it two ways"
    kinds = frozenset({kinds.ASCEND_WORKFLOW, kinds.WORKFLOW, kinds.DOCS, kinds.SHELL})
    # Unchanged files it reads on a change: the producers and consumers (workflows, the Dockerfiles F1 tags
    # derive from) and the supported-tags table; not every doc and script of the repository.
    context_kinds = INVENTORY_KINDS

    @classmethod
    def context_paths(cls, facts: Facts) -> tuple[str, ...]:
        return facts.image_tags.fetch_always

    def check_file(self, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        # Nothing is reported here: the tags of a doc or a script are noted while the engine holds its text, so that
        # check_project, which weighs them against the build's, need not read every doc and script again.
        if self._reads(ctx, src.path):
            _noted(ctx)[src.path] = self._doc_tags(ctx, src)
        return ()

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        g = grammar(ctx)
        if not ctx.audit:
            # Every finding is on a tag's occurrence, and a change's findings on its added lines: with the consumers
            # of the files it touches alone, none of those is on an added line, nothing is reported (the other
            # workflows' consumers are read only when one is).
            own = self._occurrences(ctx, g, changed_consumers(ctx), touched_builds=True)
            if not any(ctx.is_added_line(o.path, o.line) for o in own):
                return
        occurrences = list(self._occurrences(ctx, g, inventory(ctx).consumers))
        if not occurrences:
            return
        notes: dict[tuple[str, int], list[tuple[str, bool]]] = defaultdict(list)  # (text, exact fix known)
        fixes: dict[tuple[str, int], dict[str, str]] = defaultdict(dict)  # tag as written -> fixed tag
        # A mention of a tag the build pushes names that image rightly, whatever the scheme says: the naming is
        # the producer's to fix (reported on its line), and a "fixed" mention would name a tag nobody pushes.
        produced = {o.tag for o in occurrences if o.source == "build"}
        for occ in occurrences:
            if occ.source != "build" and occ.tag in produced:
                continue
            for issue in occ.info.issues:
                notes[(occ.path, occ.line)].append(
                    (_issue_text(issue.field, issue.token, issue.fix, g), bool(issue.fix))
                )
                fixes[(occ.path, occ.line)].setdefault(occ.tag, occ.info.fixed())
        self._spellings(ctx, g, occurrences, notes, fixes)
        for (path, line), texts in sorted(notes.items()):
            src = ctx.source(path)
            suggestion = None
            text = src.line(line) if src is not None else ""
            replaced = text
            for old, new in fixes.get((path, line), {}).items():
                if old != new and old in replaced:
                    replaced = replaced.replace(old, new)
            if replaced != text and all(exact for _, exact in texts):
                suggestion = replaced
            yield Hit(path, line, " ".join(dict.fromkeys(t for t, _ in texts)), suggestion=suggestion)

    # -- where tags are written ------------------------------------------------------------------------------
    def _occurrences(
        self, ctx: Context, g: Grammar, consumers: list[Consumer], touched_builds: bool = False
    ) -> Iterator[_Occurrence]:
        """Where tags are written: the builds' products, `consumers`, the docs and scripts `_reads` keeps. With
        `touched_builds`, the products of the files the change touches alone: a product's line is one of its
        origins' or its push's (spelled_line), and no other file has an added line (the others' are not read)."""
        inv = inventory(ctx)
        for prod in inv.products():
            if not prod.known or not prod.info.known:
                continue
            if touched_builds and not any(ctx.touched(p) for p in {prod.path, *(o for o, _ in prod.origins)}):
                continue
            path, line = spelled_line(ctx, prod)
            yield _Occurrence(path, line, prod.tag, prod.info, "build")
        for c in consumers:
            if c.info.known:
                yield _Occurrence(c.path, c.line, c.tag, c.info, "workflow")
        noted = _noted(ctx)
        if ctx.audit:
            paths = ctx.head_paths()
        else:  # (the files `_reads` may keep: the touched ones and the supported-tags tables, not the whole tree)
            touched = (p for p in ctx.changeset.changes if ctx.changeset.head.exists(p))
            paths = sorted({*touched, *ctx.paths_matching(tuple(ctx.facts.image_tags.read_always))})
        for path in paths:
            if not self._reads(ctx, path):
                continue
            found = noted.get(path)
            if found is None:
                src = ctx.source(path)
                if src is None:
                    continue
                found = self._doc_tags(ctx, src)
            for line, tag, info in found:
                yield _Occurrence(path, line, tag, info, "docs")

    @staticmethod
    def _reads(ctx: Context, path: str) -> bool:
        """The docs and scripts whose tags count: all in an audit; on a change, the ones it touches plus the
        supported-tags table."""
        file_kinds = ctx.kindmap.kinds(path)
        if kinds.DOCS not in file_kinds and kinds.SHELL not in file_kinds:
            return False
        return ctx.audit or ctx.touched(path) or globs.match_any(path, ctx.facts.image_tags.read_always)

    @staticmethod
    def _doc_tags(ctx: Context, src: SourceFile) -> list[tuple[int, str, TagInfo]]:
        if not any(m in src.text for m in ctx.facts.image_tags.text_markers):
            return []
        g = grammar(ctx)
        infos = ((line, tag, g.classify(tag)) for line, tag, _, _ in head_documented_tags(ctx, src))
        return [(line, tag, info) for line, tag, info in infos if info.known]

    # -- one `.postN` spelling per image ------------------------------------------------------------------------
    def _spellings(
        self,
        ctx: Context,
        g: Grammar,
        occurrences: list[_Occurrence],
        notes: dict[tuple[str, int], list[tuple[str, bool]]],
        fixes: dict[tuple[str, int], dict[str, str]],
    ) -> None:
        groups: dict[str, list[_Occurrence]] = defaultdict(list)
        for occ in occurrences:
            if occ.info.post:
                groups["image:" + g.normalized(occ.info)].append(occ)
            if occ.source == "build" and occ.info.post and "torch_npu" in occ.info.values:
                m = _POST.search(occ.info.fields.get("torch_npu", ""))
                if m:
                    digits = m.group("post").lstrip(".")
                    groups[f"build:{occ.info.values['torch_npu']}{digits}"].append(occ)
        for key, members in groups.items():
            spellings = Counter(_spelling(o.info.post) for o in members)
            if len(spellings) < 2:
                continue
            reference = _reference(members, spellings, g)
            what = "this image" if key.startswith("image:") else "this torch_npu version in the build's tags"
            for occ in members:
                mine = _spelling(occ.info.post)
                fixed_tag = _respell(occ.info.fixed(), reference)
                if mine != reference:
                    others = [o.where for o in members if _spelling(o.info.post) == reference]
                    notes[(occ.path, occ.line)].append(
                        (
                            f"The torch_npu suffix is spelled `{occ.info.post}` here but `{_example(reference, occ)}` "
                            f"for {what} elsewhere ({places(others)}); use one spelling.",
                            True,
                        )
                    )
                    fixes[(occ.path, occ.line)][occ.tag] = fixed_tag
                elif not ctx.audit and ctx.is_added_line(occ.path, occ.line):
                    others = [o.where for o in members if _spelling(o.info.post) != reference]
                    notes[(occ.path, occ.line)].append(
                        (
                            f"Other mentions of {what} still spell the torch_npu suffix differently "
                            f"({places(others)}); use one spelling.",
                            True,
                        )
                    )


def _spelling(post: str | None) -> str:
    return "dot" if post and post.startswith(".") else "nodot"


def _reference(members: list[_Occurrence], spellings: Counter[str], g: Grammar) -> str:
    built = {_spelling(o.info.post) for o in members if o.source == "build"}
    if len(built) == 1:
        return next(iter(built))
    (top, n), *rest = spellings.most_common()
    if not rest or rest[0][1] < n:
        return top
    return "dot" if g.post_spelling.startswith(".") else "nodot"


def _respell(tag: str, spelling: str) -> str:
    def repl(m: re.Match[str]) -> str:
        digits = m.group("post").lstrip(".")
        return m.group("ver") + ("." if spelling == "dot" else "") + digits

    return re.sub(r"(?<=torch_npu)" + _POST.pattern, repl, tag)


def _example(spelling: str, occ: _Occurrence) -> str:
    digits = (occ.info.post or "post").lstrip(".")
    return ("." if spelling == "dot" else "") + digits


_FIELD_NAMES = {"torch_npu": "torch_npu version", "cann": "CANN version", "device": "device", "backend": "backend"}


def _issue_text(field: str, token: str, fix: str | None, g: Grammar) -> str:
    if field == "device":
        valid = ", ".join(g.devices)
        tail = f"; write `{fix}`" if fix else ""
        return f"`{token}` is not a device of the tag scheme ({valid}){tail}."
    if field == "backend":
        valid = ", ".join(g.backends)
        tail = f"; write `{fix}`" if fix else ""
        return f"`{token}` is not a backend of the tag scheme ({valid}){tail}."
    name = _FIELD_NAMES.get(field, field)
    if fix:
        prefix = re.match(r"[a-z_]*", fix).group(0)  # type: ignore[union-attr]
        return f"`{token}` should be `{fix}`: the tag scheme names the {name} `{prefix}<ver>`."
    return f"`{token}` does not follow the tag scheme for the {name}."
