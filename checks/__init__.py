"""npu-review's pure rule engine: a ChangeSet and a Config in, Findings out."""

from npu_review.checks.config import Config, ConfigError, parse_config
from npu_review.checks.engine import Report, run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, Finding, MemoryTree, Severity

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
