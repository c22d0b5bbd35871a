"""NPU101 graph-mode-with-task-queue-2: its fixture cases (tests/fixtures/NPU101/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.rules.support import (
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU101")


def test_npu101_names_the_other_script_and_reports_the_changed_line() -> None:
    [(line, sev, message, _s)] = line_findings("NPU101/bad_level_2_reaches_called_script", "NPU101")
    assert (line, sev) == (11, Severity.ERROR)
    assert "in examples/ascend_extras/r1/run_deepseek_grpo_megatron_npu.sh" in message
    [(line, _sev, message, _s)] = line_findings("NPU101/bad_change_flips_eager_under_level_2", "NPU101")
    assert line == 12 and "`TASK_QUEUE_ENABLE=2` (line 6)" in message
