"""NPU210: a workflow's `paths:` filter names a file that does not exist (a typo, or a file the change removes)."""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Iterator

from rapidfuzz.distance import Levenshtein

from npu_review.checks.analysis.workflows import workflow, workflow_paths
from npu_review.checks.context import Context
from npu_review.checks.globs import match
from npu_review.checks.kinds import ASCEND_WORKFLOW, workflow_folder_host
from npu_review.checks.model import ChangeStatus, Severity
from npu_review.checks.parsers.gha.workflow import Workflow, trigger_filters
from npu_review.checks.parsers.yamlmarks import Node
from npu_review.checks.rule import Hit, Rule

# GitHub's filter pattern characters; an entry without them names one path literally.
_GLOB_CHARS = set("*?[]+!")
MAX_SUGGEST_DISTANCE = 2


class PathsFilterMissingFile(Rule):
    """A workflow's `paths:` (or `paths-ignore:`) filter names a file that does not exist in the repository.

    Why: a literal entry matches only that exact path. When it is misspelled (`.github/workflows/e2e_ascend.ym`,
    a typo of the workflow's own name is the common one) or the file was renamed or deleted, a PR that edits
    the real file no longer triggers the workflow: the Ascend CI silently stops testing changes to the workflow
    itself or to the script the entry meant. A change that deletes or renames a file still named in a filter
    gets the finding on the filter line, listed in the review summary.

    Only an entry that points next to a real file (a typo within two edits, the workflow's own name, also as
    it was before a rename that added or dropped a suffix, a file the change renames) is a warning. A dead
    entry that names nothing like an existing file (a file this or an earlier change deleted, an entry copied
    from another workflow, one a glob of the same list already covers) is harmless cruft: a notice.

    An entry that names another workflow of the folder where this workflow's own file belongs (a list copied from
    a sibling that lists itself, while this workflow neither lists itself nor calls the sibling) is a warning too:
    edits to this workflow do not trigger it (verl's `..._sglang_2_ascend.yml` listed `..._sglang_ascend.yml`).

    Not reported: glob entries (`verl/**`), directories, negated entries (`!verl/trainer/fsdp_sft_trainer.py`:
    excluding a file that no longer exists is harmless), and parked workflows in sub-folders such as
    `.github/workflows/.stash/` (GitHub does not run them).

    Bad:
        paths:
          - ".github/workflows/e2e_ascend.ym"
          - "tests/special_npu/run_qwen2_5_05b_grpo.sh"   # renamed long ago: a dead entry (notice)

    Good:
        paths:
          - ".github/workflows/e2e_ascend.yml"
          - "tests/special_npu/**"

    Fix: correct the path (a suggestion is attached when one existing file is within two edits, or when the
    change renamed the file), or use a glob for a folder.
    """

    id = "NPU210"
    name = "paths-filter-missing-file"
    severity = Severity.WARNING
    title = "Workflow paths filter names a file that does not exist"
    kinds = frozenset({ASCEND_WORKFLOW})  # GPU workflows are not this App's business

    def check_project(self, ctx: Context) -> Iterable[Hit]:
        head = ctx.changeset.head
        removed = self._removed(ctx)
        dirs: set[str] | None = None
        paths = workflow_paths(ctx, "head")
        # On a change, an untouched workflow has no added entry: only one naming a file the change removes can be
        # reported, and its text names that path (the others are not parsed).
        naming = None if ctx.audit else set(ctx.paths_mentioning(removed, [p for p in paths if not ctx.touched(p)]))
        for path in paths:
            if naming is not None and not ctx.touched(path) and path not in naming:
                continue
            if not ctx.has_kind(path, ASCEND_WORKFLOW):
                continue  # GPU workflows are not this App's business
            wf = workflow(ctx, path)
            if wf is None:
                continue
            src = ctx.source(path)
            entries = list(self._entries(wf))
            # Only a `paths:` list says which edits run the workflow; `paths-ignore:` names what does not (another
            # workflow's file there is the point of the list).
            filters = list(trigger_filters(wf, "paths"))
            selecting = {id(n) for _, n in filters}
            for event, node in entries:
                entry = node.value.strip()
                if entry and head.exists(entry) and ctx.is_added_line(path, node.line) and id(node) in selecting:
                    sibling = _sibling_instead_of_own(ctx, wf, path, event, entry, filters)
                    if sibling is not None:
                        yield sibling
                        continue
                if not entry or _GLOB_CHARS & set(entry) or head.exists(entry):
                    continue
                if dirs is None:
                    dirs = _directories(ctx.head_paths())
                if entry.rstrip("/") in dirs:
                    continue
                added = ctx.is_added_line(path, node.line)
                if not added and entry not in removed:
                    continue
                cause = removed.get(entry)
                text = src.line(node.line) if src is not None else ""
                siblings = [n.value.strip() for e, n in entries if e == event and n is not node]
                covered = next(
                    (g for g in siblings if _GLOB_CHARS & set(g) and not g.startswith("!") and match(entry, g)), None
                )
                yield self._hit(
                    ctx, path, node.line, entry, text, cause, caused=not added and entry in removed, covered=covered
                )

    def _entries(self, wf: Workflow) -> Iterator[tuple[str, Node]]:
        for key in ("paths", "paths-ignore"):
            yield from trigger_filters(wf, key)

    def _removed(self, ctx: Context) -> dict[str, str | None]:
        """Paths this change deletes (-> None) or renames (-> the new path)."""
        if ctx.audit:
            return {}
        out: dict[str, str | None] = {}
        for change in ctx.changeset.changes.values():
            if change.status == ChangeStatus.DELETED:
                out[change.path] = None
            elif change.old_path and change.old_path != change.path:
                out[change.old_path] = change.path
        return out

    def _hit(
        self,
        ctx: Context,
        path: str,
        line: int,
        entry: str,
        text: str,
        cause: str | None,
        caused: bool,
        covered: str | None = None,
    ) -> Hit:
        target: str | None = cause
        if caused and cause is not None:
            message = (
                f"This change renames `{entry}` to `{cause}`, but this `paths:` filter still names the old path: "
                "PRs that edit the file will no longer trigger the workflow."
            )
        elif caused:
            message = (
                f"This change deletes `{entry}`, which this `paths:` filter still names: a dead entry, harmless; "
                "drop it, or point it at the file that replaces it."
            )
        else:
            typo = ""
            if Levenshtein.distance(entry, path, score_cutoff=MAX_SUGGEST_DISTANCE) <= MAX_SUGGEST_DISTANCE or path in (
                entry + ".yml",
                entry + ".yaml",
            ):
                target, typo = path, " (a typo of this workflow's own file name)"
            elif _older_own_name(entry, path):
                target, typo = path, " (this workflow's own file under an older name)"
            else:
                # Only paths whose length is within the cap can be that close (the distance stops early anyway).
                by_length = _paths_by_length(ctx)
                lengths = range(len(entry) - MAX_SUGGEST_DISTANCE, len(entry) + MAX_SUGGEST_DISTANCE + 1)
                near = [
                    p
                    for n in lengths
                    for p in by_length.get(n, ())
                    if Levenshtein.distance(entry, p, score_cutoff=MAX_SUGGEST_DISTANCE) <= MAX_SUGGEST_DISTANCE
                ]
                target = near[0] if len(near) == 1 else None  # the one close path, whatever the order
            if target:
                message = (
                    f"`{entry}` does not exist in the repository{typo}; a PR that changes the file it meant will "
                    f"not trigger this workflow. Did you mean `{target}`?"
                )
            else:
                why = f" (and `{covered}` in the same list already covers that path)" if covered else ""
                message = (
                    f"`{entry}` does not exist in the repository and no file is named like it: a dead entry{why}, "
                    "harmless; drop it."
                )
        suggestion = text.replace(entry, target) if target and text.count(entry) == 1 else None
        # Only an entry that has a real file to point at (a typo, a rename) asks the author to act.
        severity = None if target else Severity.NOTICE
        return Hit(path, line, message, suggestion=suggestion, caused_by_change=caused, severity=severity)


def _sibling_instead_of_own(
    ctx: Context, wf: Workflow, path: str, event: str, entry: str, entries: list[tuple[str, Node]]
) -> Hit | None:
    """`entry` names another workflow of the same folder where this workflow's own file belongs: the list names
    no entry matching this workflow's path, this workflow does not call the other one, and the other lists its own
    file (the project's convention, copied along with the list)."""
    if entry == path or workflow_folder_host(entry) is None:
        return None
    if posixpath.dirname(entry) != posixpath.dirname(path):
        return None
    same = [n.value.strip() for e, n in entries if e == event]
    if any(g and not g.startswith("!") and (g == path or (_GLOB_CHARS & set(g) and match(path, g))) for g in same):
        return None  # this workflow's own file is in the list
    if any(f"./{entry}" in (job.node.scalar("uses") or "") for job in wf.jobs.values()):
        return None  # it calls that workflow: a change to it concerns this one
    other = workflow(ctx, entry)
    if other is None or not any(n.value.strip() == entry for _, n in trigger_filters(other, "paths")):
        return None
    node = next(n for e, n in entries if e == event and n.value.strip() == entry)
    src = ctx.source(path)
    text = src.line(node.line) if src is not None else ""
    return Hit(
        path,
        node.line,
        f"This `paths:` filter names `{entry}`, another workflow (which lists itself in its own filter), and not "
        f"this workflow's file `{path}`: a PR that edits this workflow does not trigger it. Copied from "
        f"`{posixpath.basename(entry)}`? Name this workflow's own file.",
        suggestion=text.replace(entry, path) if text.count(entry) == 1 else None,
    )


def _older_own_name(entry: str, own: str) -> bool:
    """`entry` is the workflow's own file before a rename that added or dropped a suffix
    (`labled_download_model.yaml` for `labled_download_model_dataset.yaml`): same folder, one stem starts with
    the other, and the shorter is most of the longer (so `e2e.yml` is not taken for `e2e_ascend.yml`)."""
    if posixpath.dirname(entry) != posixpath.dirname(own):
        return False
    a, b = (posixpath.splitext(posixpath.basename(p))[0] for p in (entry, own))
    short, long = sorted((a, b), key=len)
    return short != long and long.startswith(short) and len(short) >= 10 and len(short) >= 0.6 * len(long)


def _paths_by_length(ctx: Context) -> dict[int, list[str]]:
    """Every path at head by its length, built once per run."""

    def build() -> dict[int, list[str]]:
        out: dict[int, list[str]] = {}
        for p in ctx.head_paths():
            out.setdefault(len(p), []).append(p)
        return out

    return ctx.memo(("npu210-paths-by-length", "head", ""), build)


def _directories(paths: Iterable[str]) -> set[str]:
    out: set[str] = set()
    for p in paths:
        parts = p.split("/")
        for i in range(1, len(parts)):
            out.add("/".join(parts[:i]))
    return out
