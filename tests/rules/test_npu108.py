"""NPU108 invalid-cudagraph-mode: its fixture cases (tests/fixtures/NPU108/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.rules.support import (
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU108")


def test_npu108_suggests_the_exact_spelling() -> None:
    [(line, sev, message, suggestion)] = line_findings("NPU108/bad_misspelt_mode", "NPU108")
    assert (line, sev) == (9, Severity.ERROR)
    assert "write `FULL_DECODE_ONLY`" in message
    assert suggestion == (
        '    +actor_rollout_ref.rollout.engine_kwargs.vllm.compilation_config.cudagraph_mode="FULL_DECODE_ONLY" \\'
    )


def test_npu108_no_suggestion_when_not_exact() -> None:
    [(_line, _sev, message, suggestion)] = line_findings("NPU108/bad_unknown_mode_via_variable", "NPU108")
    assert "Did you mean `FULL_DECODE_ONLY`?" in message
    assert suggestion is None
    [(_l, _s, cp_message, cp_suggestion)] = line_findings("NPU108/bad_full_with_decode_context_parallel", "NPU108")
    assert "decode_context_parallel_size=2" in cp_message and cp_suggestion is None
