"""Text helpers for finding messages."""

from __future__ import annotations

from collections.abc import Iterable

MAX_LISTED = 8  # places named in one message; the rest is counted


def places(items: Iterable[str], limit: int = MAX_LISTED) -> str:
    """`a:1, b:2 and 3 more` for a message."""
    uniq = list(dict.fromkeys(items))
    shown = ", ".join(uniq[:limit])
    rest = len(uniq) - limit
    return f"{shown} and {rest} more" if rest > 0 else shown


def short_key(key: str, prefix: str) -> str:
    """A Hydra key as messages name it: the project's role prefix (the facts' `ascend_values.message_prefix`,
    "" for none) left out."""
    return key.removeprefix(prefix) if prefix else key


def shorten(text: str, limit: int, mark: str = "...") -> str:
    """`text` cut to `limit` characters for a message, `mark` ending the cut."""
    return text if len(text) <= limit else text[: limit - len(mark)] + mark
