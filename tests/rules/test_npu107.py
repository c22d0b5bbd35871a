"""NPU107 default-change-without-npu-sweep: its fixture cases (tests/fixtures/NPU107/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.fixture_support import FIXTURES, load_case, run_case
from tests.rules.support import (
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU107")


def test_npu107_lists_the_unpinned_npu_megatron_scripts() -> None:
    [(line, sev, message, sug)] = line_findings("NPU107/bad_vanilla_mbridge_flip", "NPU107")
    assert (line, sev, sug) == (10, Severity.NOTICE, None)
    assert "from True to False" in message
    assert "verl/trainer/config/ref/megatron_ref.yaml:3" in message  # the other place it changed
    assert "tests/special_npu/run_qwen3_06b_grpo_mindspeed.sh:6" in message
    assert "run_qwen3_30b_grpo_mindspeed.sh" not in message  # pins the old value
    assert "run_qwen3_8b_fsdp2_npu.sh" not in message  # FSDP: not concerned
    assert "run_qwen2_7b_megatron.sh" not in message  # GPU only


def test_npu107_is_silent_on_audits() -> None:
    case = load_case(FIXTURES / "NPU107/bad_vanilla_mbridge_flip")
    case.base = None
    assert not [f for f in run_case(case).findings if f.rule == "NPU107"]
