"""Markdown and reStructuredText documents parsed once per file and revision."""

from __future__ import annotations

from npu_review.checks.context import Context, SourceFile
from npu_review.checks.parsers.markdown import Document, flavor_of, parse


def document(ctx: Context, src: SourceFile, rev: str = "head") -> Document | None:
    """The parsed doc (memoised per file), or None when the file is neither Markdown nor reStructuredText."""
    flavor = flavor_of(src.path)
    if flavor is None:
        return None
    return ctx.parsed("markup", src, lambda text: parse(text, flavor), rev=rev)
