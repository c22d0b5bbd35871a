"""NPU105 hydra-plus-mismatch: its fixture cases (tests/fixtures/NPU105/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.config import DEFAULT_CONFIG
from npu_review.checks.engine import needed_paths
from npu_review.checks.model import ChangeStatus, FileChange
from tests.rules.support import (
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU105")


def test_npu105_messages_and_exact_respelling() -> None:
    found = {line: (msg, sug) for line, _sev, msg, sug in line_findings("NPU105/bad_plus_and_bare_fsdp", "NPU105")}
    msg, sug = found[11]
    assert "Key 'attn_implementation' is not in struct" in msg and "`actor_rollout_ref.model.override_config`" in msg
    assert sug == "    +actor_rollout_ref.model.override_config.attn_implementation=eager \\"
    msg, sug = found[14]
    assert "Could not append to config" in msg and "_generated_ppo_trainer.yaml" in msg
    assert sug == "    actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=4096 \\"
    megatron = line_findings("NPU105/bad_megatron_by_config_name", "NPU105")
    assert all("_generated_ppo_megatron_trainer.yaml" in m for _l, _s, m, _g in megatron)


def test_npu105_declares_the_config_as_context() -> None:
    change = FileChange("tests/special_npu/run_qwen3_06b_ppo.sh", ChangeStatus.MODIFIED, added_lines=frozenset({3}))
    head, _base = needed_paths(
        ["tests/special_npu/run_qwen3_06b_ppo.sh", "verl/trainer/config/_generated_ppo_trainer.yaml", "README.md"],
        {change.path: change},
        DEFAULT_CONFIG,
    )
    assert "verl/trainer/config/_generated_ppo_trainer.yaml" in head
