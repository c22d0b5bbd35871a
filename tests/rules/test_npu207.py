"""NPU207 registry-cleanup-command: its fixture cases (tests/fixtures/NPU207/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Severity
from npu_review.checks.rules.npu207_registry_cleanup_command import _is_remote
from npu_review.checks.rules.npu207_registry_cleanup_command import _suggest as suggest_207
from tests.rules.support import (
    case_findings_change,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU207")


def test_registry_cleanup_helpers() -> None:
    assert _is_remote("quay.io/ascend/verl:tmp-a2") and _is_remote("${{ env.QUAY_REPO }}:tmp")
    assert not _is_remote("verl:local") and not _is_remote("ubuntu")
    line = "  ./crane tag delete quay.io/ascend/verl:tmp-a3-amd64 || true"
    assert suggest_207(line, "quay.io/ascend/verl:tmp-a3-amd64", True) == (
        '  ./crane delete quay.io/ascend/verl:tmp-a3-amd64 || echo "::warning::could not delete '
        'quay.io/ascend/verl:tmp-a3-amd64"'
    )
    assert suggest_207("  ./crane tag delete X:t", "X:t", False) == "  ./crane delete X:t"


def test_npu207_one_finding_for_the_same_mistake_on_consecutive_lines() -> None:
    (f,) = [f for f in case_findings_change("NPU207/bad_same_mistake_per_tag") if f.rule == "NPU207"]
    assert (f.line, f.end_line, f.severity) == (67, 68, Severity.WARNING)
    assert f.message.endswith("The same goes for line 68 of this step.")
    assert f.suggestion is not None and f.suggestion.count("./crane delete ") == 2
