"""npu-review's pure rule engine: a ChangeSet and a Config in, Findings out."""

from checks.config import Config, ConfigError, parse_config
from checks.engine import Report, run
from checks.model import ChangeSet, ChangeStatus, FileChange, Finding, MemoryTree, Severity

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
