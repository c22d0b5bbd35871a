"""NPU106 ascend-invalid-values: its fixture cases (tests/fixtures/NPU106/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.rules.support import (
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU106")


def test_npu106_severities_and_suggestions() -> None:
    found = {line: (sev, msg, sug) for line, sev, msg, sug in line_findings("NPU106/bad_hccl_backend", "NPU106")}
    sev, msg, sug = found[9]
    assert sev == Severity.ERROR and "registers as `nccl` (since #5473)" in msg
    assert sug == "    actor_rollout_ref.rollout.checkpoint_engine.backend='nccl' \\"
    sev, msg, sug = found[11]
    assert sev == Severity.ERROR and sug == "    trainer.device=npu \\"

    found = {
        line: (sev, msg, sug) for line, sev, msg, sug in line_findings("NPU106/bad_megatron_vpp_cp_flash", "NPU106")
    }
    assert (
        found[13][0] == Severity.ERROR
        and "the config's default" in found[13][1]
        and "use_mbridge=False" in found[13][1]
    )
    assert (
        found[15][0] == Severity.ERROR
        and "+actor.megatron.override_transformer_config.context_parallel_size=2" in (found[15][1])
    )
    assert found[16][0] == Severity.WARNING
    assert found[16][2] == "    +actor_rollout_ref.actor.megatron.override_transformer_config.use_flash_attn=True \\"

    found = {
        line: (sev, msg, sug) for line, sev, msg, sug in line_findings("NPU106/bad_cuda_visible_devices", "NPU106")
    }
    assert found[4][0] == Severity.WARNING and "ASCEND_RT_VISIBLE_DEVICES" in found[4][1]
    assert found[10][0] == Severity.NOTICE  # a habit of the NPU scripts, not a documented breakage
    assert found[10][2] == "    actor_rollout_ref.actor.use_torch_compile=False \\"

    found = {
        line: (sev, msg, sug)
        for line, sev, msg, sug in line_findings("NPU106/bad_sglang_without_ascend_attention", "NPU106")
    }
    assert found[6][0] == Severity.WARNING and "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES" in found[6][1]
    assert found[9][0] == Severity.ERROR and "attention_backend=ascend" in found[9][1] and found[9][2] is None
