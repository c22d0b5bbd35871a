"""NPU103 graph-mode-switch: its fixture cases (tests/fixtures/NPU103/), and what they cannot say."""

from __future__ import annotations

from dataclasses import replace

from npu_review.checks import run
from npu_review.checks.model import ChangeSet, MemoryTree, Severity
from tests.fixture_support import FIXTURES, load_case, run_case
from tests.rules.support import (
    case_findings_change,
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU103")


def test_verl_incident_is_one_warning_for_the_command() -> None:
    found = line_findings("NPU103/bad_verl_incident", "NPU103")
    assert [(line, sev) for line, sev, _m, _s in found] == [(18, Severity.WARNING)]  # the eager flip and the mode
    message = found[0][2]
    assert "`enforce_eager` goes from True to False" in message
    assert "TASK_QUEUE_ENABLE" in message and "context parallel" in message and "vLLM-Ascend" in message
    assert ">= 0.9.1" in message and "cudagraph_mode=FULL_DECODE_ONLY" in message
    assert 'the title "[ci] test: update ascend ci docker tag"' in message
    assert "FULL_DECODE_ONLY (was not set)" in message


def test_incident_head_audited_gives_no_graph_findings() -> None:
    case = load_case(FIXTURES / "NPU103/bad_verl_incident")
    report = run(ChangeSet(head=MemoryTree(case.head), audit=True, title=case.title))
    assert [f for f in report.findings if f.rule.startswith("NPU10")] == []


def test_a_pr_that_says_so_gets_a_notice() -> None:
    found = line_findings("NPU103/bad_cfg_pr_notice", "NPU103")
    assert [(line, sev) for line, sev, _m, _s in found] == [(10, Severity.NOTICE)]
    assert "TASK_QUEUE_ENABLE=1 on line 4" in found[0][2]


def test_full_with_context_parallel_is_a_warning() -> None:
    found = line_findings("NPU103/bad_full_with_context_parallel", "NPU103")
    assert [(line, sev) for line, sev, _m, _s in found] == [(10, Severity.WARNING)]
    assert "FULL graphs are combined with context parallel" in found[0][2]
    assert "`actor.megatron.context_parallel_size=2` (line 11)" in found[0][2]


def test_invalid_mode_is_npu108s_error_and_npu103_stays_a_notice() -> None:
    assert [(ln, sev) for ln, sev, _m, _s in line_findings("NPU103/bad_invalid_mode_not_escalated", "NPU103")] == [
        (9, Severity.NOTICE)
    ]
    npu108 = line_findings("NPU103/bad_invalid_mode_not_escalated", "NPU108")
    assert [(ln, sev) for ln, sev, _m, _s in npu108] == [(9, Severity.ERROR)]


def test_npu103_escalates_an_invalid_mode_when_npu108_is_off() -> None:
    case = replace(load_case(FIXTURES / "NPU103/bad_invalid_mode_not_escalated"), config_text="rules:\n  NPU108: off\n")
    report = run_case(case)
    [finding] = [f for f in report.findings if f.rule == "NPU103"]
    assert finding.severity == Severity.WARNING
    assert "is not a vLLM CUDAGraphMode" in finding.message
    assert not [f for f in report.findings if f.rule == "NPU108"]


def test_npu103_deleted_eager_line_is_kept_on_the_command() -> None:
    [(line, sev, message, _s)] = line_findings("NPU103/bad_eager_line_deleted", "NPU103")
    assert (line, sev) == (17, Severity.WARNING)
    assert "`enforce_eager=True` is removed" in message


def test_headline_7035_one_finding_says_what_changed_and_the_conditions() -> None:
    """verl #7035: a CI image-tag PR switched an NPU script from eager to graph mode."""
    (f,) = [f for f in case_findings_change("NPU103/bad_verl_incident") if f.rule == "NPU103"]
    assert (f.line, f.severity) == (18, Severity.WARNING)
    assert "`enforce_eager` goes from True to False (graph mode) and `cudagraph_mode` is now FULL_DECODE_ONLY" in (
        f.message
    )
    for condition in ("TASK_QUEUE_ENABLE is not exported here", "no context parallel is set", "ACL Graph (>= 0.9.1)"):
        assert condition in f.message
    assert "Graph mode is supported on Ascend" in f.message and "unsupported" not in f.message
