"""Reading a verified webhook payload: a field the App needs that is missing or of the wrong type is the sender's
mistake (400 with the field's path), never a 500; a delivery that is not for a GitHub App is ignored (202)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class PayloadError(ValueError):
    """A payload without a field the App needs: answered 400, naming the field."""


class NotForTheApp(Exception):
    """A well-formed delivery the App has nothing to do with (e.g. a repository webhook's: no installation)."""


def field(data: Any, path: str, kind: type[T]) -> T:
    """data["a"]["b"] for path "a.b", checked to be a `kind` (bool is no int)."""
    node = data
    for name in path.split("."):
        if not isinstance(node, Mapping) or name not in node:
            raise PayloadError(f"the payload has no `{path}`")
        node = node[name]
    if not isinstance(node, kind) or (kind is int and isinstance(node, bool)):
        raise PayloadError(f"`{path}` in the payload is not a {kind.__name__}")
    return node


def installation_id(data: Mapping[str, Any], event: str) -> int:
    """The installation a repository event is for; a payload without one is no App delivery."""
    if not isinstance(data.get("installation"), Mapping):
        raise NotForTheApp(f"{event} without `installation`: not a GitHub App delivery (a repository webhook?)")
    return field(data, "installation.id", int)
