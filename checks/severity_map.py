"""The one table from severity to GitHub annotation level, SARIF level, Actions command and check conclusion."""

from __future__ import annotations

from collections.abc import Iterable

from npu_review.checks.model import Finding, Severity

ANNOTATION_LEVEL = {Severity.ERROR: "failure", Severity.WARNING: "warning", Severity.NOTICE: "notice"}
SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "note"}
ACTIONS_COMMAND = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.NOTICE: "notice"}


def conclusion(findings: Iterable[Finding]) -> str:
    """Check-run conclusion: failure on any error, neutral on warnings or notices only, success on none."""
    worst = max((f.severity for f in findings), default=None)
    if worst is None:
        return "success"
    return "failure" if worst >= Severity.ERROR else "neutral"
