"""Workflow files and their models at head or base, parsed once per run and kept for it."""

from __future__ import annotations

from typing import TYPE_CHECKING

from npu_review.checks import kinds
from npu_review.checks.context import Context
from npu_review.checks.parsers import shell

if TYPE_CHECKING:
    from npu_review.checks.parsers.gha.workflow import Workflow
    from npu_review.checks.parsers.yamlmarks import YamlDoc


def workflow_doc(ctx: Context, path: str, rev: str = "head") -> YamlDoc | None:
    # Kept for the run (the Workflow model holds the document anyway): the image inventory and the project rules
    # ask for workflows the engine has already let go of; this saves reading and parsing them again. Keyed by the
    # revision of the blob, so the base of an untouched workflow is its head's parse.
    rev = ctx.effective_rev(path, rev)
    return ctx.memo(("workflow-doc", rev, path), lambda: _workflow_doc(ctx, path, rev))


def _workflow_doc(ctx: Context, path: str, rev: str) -> YamlDoc | None:
    src = ctx.source(path, rev)
    if src is None:
        return None
    return ctx.yaml(src, rev=rev)


def workflow(ctx: Context, path: str, rev: str = "head") -> Workflow | None:
    from npu_review.checks.parsers.gha.workflow import build

    rev = ctx.effective_rev(path, rev)
    doc = workflow_doc(ctx, path, rev)
    if doc is None:
        return None
    return ctx.memo(("workflow", rev, path), lambda: build(doc, path))


def run_script(ctx: Context, text: str) -> shell.ShellScript:
    """`shell.parse(text)` of a `run:` block's text, once per run for each distinct text: the same blocks recur
    in many jobs and workflows, and the parse depends on the text alone."""
    return ctx.memo(("run-script", "", text), lambda: shell.parse(text))


def workflow_at(ctx: Context, path: str, rev: str) -> Workflow | None:
    """The workflow model at `rev` (see Context.source_at); None when absent or broken."""
    return workflow(ctx, path, rev)


def workflow_paths(ctx: Context, rev: str) -> list[str]:
    """Workflow files a forge runs at `rev` (directly in a workflow folder: .github/workflows/, .gitcode/workflows/;
    kinds.WORKFLOW_HOSTS)."""

    def find() -> list[str]:  # a path of either kind is a candidate of ASCEND_WORKFLOW (its base kind admits it)
        candidates = ctx.candidate_paths(frozenset({kinds.ASCEND_WORKFLOW}), rev)
        return [p for p in candidates if kinds.workflow_host(p) is not None]

    return list(ctx.memo(("workflow-paths", rev, ""), find))  # a copy: the caller may change its list
