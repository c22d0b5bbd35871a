"""Logging: delivery id, repository, PR and head on every record (a context variable), text or JSON lines."""

from __future__ import annotations

import contextvars
import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

_FIELDS = ("delivery", "repo", "pr", "head")
_context: contextvars.ContextVar[dict[str, Any]] = contextvars.ContextVar("npu_review_log_context", default={})  # noqa: B039


@contextmanager
def log_context(**fields: Any) -> Iterator[None]:
    """Adds fields to every record logged inside the block (and in tasks created inside it)."""
    token = _context.set({**_context.get(), **{k: v for k, v in fields.items() if v is not None}})
    try:
        yield
    finally:
        _context.reset(token)


def set_context(**fields: Any) -> None:
    """Adds fields for the rest of the current task (each task runs in its own copy of the context)."""
    _context.set({**_context.get(), **{k: v for k, v in fields.items() if v is not None}})


class ContextFilter(logging.Filter):
    def filter(self, record: logging.LogRecord) -> bool:
        ctx = _context.get()
        for name in _FIELDS:
            setattr(record, name, ctx.get(name, "-"))
        return True


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        doc: dict[str, Any] = {
            "time": self.formatTime(record, "%Y-%m-%dT%H:%M:%S"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "message": record.getMessage(),
        }
        for name in _FIELDS:
            doc[name] = getattr(record, name, "-")
        if record.exc_info:
            doc["exception"] = self.formatException(record.exc_info)
        return json.dumps(doc, ensure_ascii=False)


def setup(json_lines: bool = False, level: int = logging.INFO) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.addFilter(ContextFilter())
    if json_lines:
        handler.setFormatter(JsonFormatter())
    else:
        handler.setFormatter(
            logging.Formatter(
                "%(asctime)s %(levelname)s %(name)s [delivery=%(delivery)s repo=%(repo)s pr=%(pr)s head=%(head)s] "
                "%(message)s"
            )
        )
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(level)
