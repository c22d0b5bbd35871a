"""NPU206: docker/build-push-action pushes by digest with a tagged name or tags, or the digest is read from
the wrong step."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from npu_review.checks import lazyre
from npu_review.checks.context import Context, SourceFile
from npu_review.checks.kinds import ASCEND_WORKFLOW, WORKFLOW, workflow_host
from npu_review.checks.model import Severity
from npu_review.checks.parsers.gha.workflow import Job, Scope, Step, Workflow, legs
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

_DIGEST_REF = lazyre.compile(r"steps\.([A-Za-z_][\w-]*)\.outputs\.digest\b")
_DIGEST_ACTIONS = ("docker/build-push-action",)


def _is_build(step: Step) -> bool:
    return step.uses is not None and step.uses.split("@")[0].endswith(_DIGEST_ACTIONS)


def _outputs(text: str) -> list[dict[str, str]]:
    """Each exporter of an `outputs:` value (`type=image,name=...,push-by-digest=true`), as key -> value."""
    out = []
    for entry in text.split("\n"):
        entry = entry.strip().strip("-").strip()
        if not entry:
            continue
        fields: dict[str, str] = {}
        for part in _split_csv(entry):
            key, eq, value = part.partition("=")
            if eq:
                fields[key.strip().strip("\"'")] = value.strip().strip("\"'")
        if fields:
            out.append(fields)
    return out


def _split_csv(text: str) -> list[str]:
    """Split on commas outside quotes and `${{ }}`."""
    parts: list[str] = []
    buf: list[str] = []
    depth, quote = 0, ""
    i = 0
    while i < len(text):
        c = text[i]
        if quote:
            quote = "" if c == quote else quote
        elif c in "\"'":
            quote = c
        elif text.startswith("${{", i):
            depth += 1
        elif text.startswith("}}", i) and depth:
            depth -= 1
        elif c == "," and not depth:
            parts.append("".join(buf))
            buf = []
            i += 1
            continue
        buf.append(c)
        i += 1
    parts.append("".join(buf))
    return [p for p in parts if p.strip()]


def _tag_colon(name: str) -> int | None:
    """Where the `:tag` of an image name starts (`quay.io/ascend/verl:tmp-a2`, `${{ env.REPO }}:tmp`), outside
    `${{ }}`; None without a tag (`localhost:5000/verl` has a port, not a tag)."""
    spans: list[tuple[int, int]] = [(m.start(), m.end()) for m in re.finditer(r"\$\{\{.*?\}\}", name)]

    def inside(i: int) -> bool:
        return any(a <= i < b for a, b in spans)

    slash = max((i for i, c in enumerate(name) if c == "/" and not inside(i)), default=-1)
    return next((i for i, c in enumerate(name) if i > slash and c == ":" and not inside(i)), None)


class BuildPushOutputMisconfigured(Rule):
    """`docker/build-push-action` is told to push by digest but also given a tag, or the step that exports the
    digest reads it from a step that does not produce one.

    Why: the multi-arch build pushes each architecture by digest (`outputs: type=image,name=IMAGE,
    push-by-digest=true`) and a merge job assembles the digests into one tagged manifest. A `name=` with a
    `:tag`, or `tags:` next to `push-by-digest=true`, contradicts that: buildx either refuses the name or pushes a
    tag per architecture that the next architecture overwrites (verl's #7305 wrote
    `name=${{ env.QUAY_REPO }}:temp-main-a2-${{ matrix.tag }}` and #7311 had to fix the upload). A digest
    export that reads `${{ steps.<id>.outputs.digest }}` of a step id that does not exist (or is not the
    build) writes an empty digest, and the merge creates a manifest from nothing.

    Bad:
        - id: build_main
          uses: docker/build-push-action@v6
          with:
            outputs: type=image,name=${{ env.QUAY_REPO }}:temp-a2-${{ matrix.tag }},push-by-digest=true,push=true
        - run: |
            digest="${{ steps.build.outputs.digest }}"      # the build step's id is build_main
            touch "/tmp/digests/${digest#sha256:}"

    Good:
        - id: build_main
          uses: docker/build-push-action@v6
          with:
            outputs: type=image,name=${{ env.QUAY_REPO }},push-by-digest=true,name-canonical=true,push=true
        - run: |
            digest="${{ steps.build_main.outputs.digest }}"
            touch "/tmp/digests/${digest#sha256:}"

    Fix: keep `name=` to the repository (no tag) and drop `tags:` when pushing by digest, or push a
    temporary tag with `tags:` and no `push-by-digest`; reference the id of the build step (a suggestion is
    attached when the job has exactly one build step with an id).
    """

    id = "NPU206"
    name = "build-push-output-misconfigured"
    severity = Severity.WARNING
    title = "build-push-action pushes by digest with a tag, or the digest comes from the wrong step"
    kinds = frozenset({ASCEND_WORKFLOW, WORKFLOW})

    needles = ("build-push-action", "outputs.digest")

    def check_job(self, job: Job, wf: Workflow, src: SourceFile, ctx: Context) -> Iterable[Hit]:
        if workflow_host(src.path) is None:
            return
        scopes = list(legs(wf, job))
        for step in job.steps:
            if _is_build(step):
                yield from self._build(src, step, scopes)
        yield from self._digest_refs(src, job)

    # -- push-by-digest with a tag ------------------------------------------------------------------------------
    def _build(self, src: SourceFile, step: Step, scopes: list[Scope]) -> Iterator[Hit]:
        outputs = step.with_.get("outputs")
        if outputs is None or not outputs.is_scalar or "push-by-digest" not in outputs.value:
            return
        by_digest = False
        for exporter in _outputs(outputs.value):
            if exporter.get("push-by-digest", "").lower() != "true":
                continue
            by_digest = True
            names = [exporter["name"]] if exporter.get("name") else []
            tagged = [n for n in names if _tag_colon(n) is not None]
            if tagged:
                line = _line_with(outputs, "name=")
                yield Hit(
                    src.path,
                    line,
                    f"`push-by-digest=true` with `name={tagged[0]}`: a digest push leaves the image untagged and "
                    "the merge job reads only its digest, so the `:tag` contradicts it (buildx may refuse or drop "
                    "it). Name only the repository here; the merge job tags the manifest.",
                    suggestion=_untag(src.line(line), tagged[0]),
                    cause="push-by-digest with a tagged name",
                )
        tags = step.with_.get("tags")
        # Repository names without a tag (`quay.io/ascend/cann`) are where the digest goes: docker's pattern for
        # pushing by digest to several registries (the exporter names none itself). Only a `:tag` (or a metadata
        # step's `tags` output) fights it.
        listed = [t.strip() for t in re.split(r"[\n,]", tags.value)] if tags is not None and tags.is_scalar else []
        if by_digest and any(t and (_tag_colon(t) is not None or ("${{" in t and "tags" in t)) for t in listed):
            assert tags is not None
            yield Hit(
                src.path,
                tags.line,
                "`tags:` together with `outputs: ...push-by-digest=true`: the digest push ignores or fights the "
                "tags (each architecture's build would move them). Drop `tags:` here and tag the merged manifest "
                "(`docker buildx imagetools create -t`), or push a temporary tag without `push-by-digest`.",
                cause="push-by-digest with tags",
            )

    # -- the digest comes from the build step -------------------------------------------------------------------
    def _digest_refs(self, src: SourceFile, job: Job) -> Iterator[Hit]:
        ids = {s.id: s for s in job.steps if s.id}
        builds = [s for s in job.steps if _is_build(s)]
        for step in job.steps:
            for _, node in step.node.walk():
                if not node.is_scalar or "outputs.digest" not in node.value:
                    continue
                for line, text in node.text_lines():
                    for m in _DIGEST_REF.finditer(text):
                        ref = m.group(1)
                        problem = self._problem(ref, step, ids)
                        if problem is None:
                            continue
                        before = [b for b in builds if b.index < step.index]
                        suggestion = None
                        if len(before) == 1 and before[0].id and before[0].id != ref:
                            full = src.line(line)
                            old = f"steps.{ref}.outputs.digest"
                            if full.count(old) == 1:
                                suggestion = full.replace(old, f"steps.{before[0].id}.outputs.digest")
                        hint = f" The build step here is `{before[0].id}`." if len(before) == 1 and before[0].id else ""
                        yield Hit(
                            src.path,
                            line,
                            f"`steps.{ref}.outputs.digest` {problem}: the expression is empty, so the exported "
                            f"digest is empty and the merge job has nothing to assemble.{hint}",
                            suggestion=suggestion,
                        )

    def _problem(self, ref: str, step: Step, ids: dict[str, Step]) -> str | None:
        target = ids.get(ref)
        if target is None:
            return f"names a step id `{ref}` that this job does not have"
        if target.index >= step.index:
            return f"reads step `{ref}`, which runs only after this step"
        if _is_build(target):
            return None
        if target.run is not None:
            if re.search(r"\bdigest\b\s*=", target.run.value) or (
                "digest" in target.run.value and "GITHUB_OUTPUT" in target.run.value
            ):
                return None
            return f"reads step `{ref}`, a `run:` step that sets no `digest` output"
        return None  # another action: its outputs are not known here


def _line_with(node: Node, needle: str) -> int:
    for line, text in node.text_lines():
        if needle in text:
            return line
    return node.line


def _untag(line: str, name: str) -> str | None:
    """The line with the `:tag` cut from `name=`, when that is one exact edit."""
    colon = _tag_colon(name)
    if colon is None or line.count(name) != 1:
        return None
    return line.replace(name, name[:colon])
