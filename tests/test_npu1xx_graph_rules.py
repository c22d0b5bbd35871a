"""Severities, messages and suggestions of the launch-script graph-mode rules (NPU101-103, NPU108)."""

from __future__ import annotations

from dataclasses import replace

from checks.engine import run
from checks.model import ChangeSet, MemoryTree, Severity
from tests.fixture_support import FIXTURES, load_case, run_case


def _findings(case: str, rule: str) -> list[tuple[int, Severity, str, str | None]]:
    report = run_case(load_case(FIXTURES / case))
    assert report.errors == []
    return [(f.line, f.severity, f.message, f.suggestion) for f in report.findings if f.rule == rule]


def test_verl_incident_is_one_warning_for_the_command() -> None:
    found = _findings("NPU103/bad_verl_incident", "NPU103")
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
    found = _findings("NPU103/bad_cfg_pr_notice", "NPU103")
    assert [(line, sev) for line, sev, _m, _s in found] == [(10, Severity.NOTICE)]
    assert "TASK_QUEUE_ENABLE=1 on line 4" in found[0][2]


def test_full_with_context_parallel_is_a_warning() -> None:
    found = _findings("NPU103/bad_full_with_context_parallel", "NPU103")
    assert [(line, sev) for line, sev, _m, _s in found] == [(10, Severity.WARNING)]
    assert "FULL graphs are combined with context parallel" in found[0][2]
    assert "`actor.megatron.context_parallel_size=2` (line 11)" in found[0][2]


def test_invalid_mode_is_npu108s_error_and_npu103_stays_a_notice() -> None:
    assert [(ln, sev) for ln, sev, _m, _s in _findings("NPU103/bad_invalid_mode_not_escalated", "NPU103")] == [
        (9, Severity.NOTICE)
    ]
    npu108 = _findings("NPU103/bad_invalid_mode_not_escalated", "NPU108")
    assert [(ln, sev) for ln, sev, _m, _s in npu108] == [(9, Severity.ERROR)]


def test_npu103_escalates_an_invalid_mode_when_npu108_is_off() -> None:
    case = replace(load_case(FIXTURES / "NPU103/bad_invalid_mode_not_escalated"), config_text="rules:\n  NPU108: off\n")
    report = run_case(case)
    [finding] = [f for f in report.findings if f.rule == "NPU103"]
    assert finding.severity == Severity.WARNING
    assert "is not a vLLM CUDAGraphMode" in finding.message
    assert not [f for f in report.findings if f.rule == "NPU108"]


def test_npu108_suggests_the_exact_spelling() -> None:
    [(line, sev, message, suggestion)] = _findings("NPU108/bad_misspelt_mode", "NPU108")
    assert (line, sev) == (9, Severity.ERROR)
    assert "write `FULL_DECODE_ONLY`" in message
    assert suggestion == (
        '    +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode="FULL_DECODE_ONLY" \\'
    )


def test_npu108_no_suggestion_when_not_exact() -> None:
    [(_line, _sev, message, suggestion)] = _findings("NPU108/bad_unknown_mode_via_variable", "NPU108")
    assert "Did you mean `FULL_DECODE_ONLY`?" in message
    assert suggestion is None
    [(_l, _s, cp_message, cp_suggestion)] = _findings("NPU108/bad_full_with_decode_context_parallel", "NPU108")
    assert "decode_context_parallel_size=2" in cp_message and cp_suggestion is None


def test_npu101_names_the_other_script_and_reports_the_changed_line() -> None:
    [(line, sev, message, _s)] = _findings("NPU101/bad_level_2_reaches_called_script", "NPU101")
    assert (line, sev) == (11, Severity.ERROR)
    assert "in examples/ascend_extras/r1/run_deepseek_grpo_megatron_npu.sh" in message
    [(line, _sev, message, _s)] = _findings("NPU101/bad_change_flips_eager_under_level_2", "NPU101")
    assert line == 12 and "`TASK_QUEUE_ENABLE=2` (line 6)" in message


def test_npu102_names_the_eager_line() -> None:
    found = _findings("NPU102/bad_last_override_is_eager", "NPU102")
    # One enforce_eager=True, one finding for both dead graph settings.
    assert [(ln, sev) for ln, sev, _m, _s in found] == [(21, Severity.WARNING)]
    assert "(line 21) and `cudagraph_mode=FULL_DECODE_ONLY` (line 22) have no effect" in found[0][2]
    assert "`enforce_eager=True` on line 24" in found[0][2]
