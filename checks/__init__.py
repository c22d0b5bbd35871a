"""npu-review's pure rule engine: a ChangeSet and a Config in, Findings out."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npu_review.checks.config import Config, ConfigError, parse_config
    from npu_review.checks.engine import Report, run
    from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, Finding, MemoryTree, Severity

# Each name and the module it comes from, imported on first use: importing any module of the package (a parser, the
# model) must not load the engine, the config and the facts with it.
_EXPORTS = {
    "ChangeSet": "model",
    "ChangeStatus": "model",
    "Config": "config",
    "ConfigError": "config",
    "FileChange": "model",
    "Finding": "model",
    "MemoryTree": "model",
    "Report": "engine",
    "Severity": "model",
    "parse_config": "config",
    "run": "engine",
}

__all__ = [
    "ChangeSet",
    "ChangeStatus",
    "Config",
    "ConfigError",
    "FileChange",
    "Finding",
    "MemoryTree",
    "Report",
    "Severity",
    "parse_config",
    "run",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
