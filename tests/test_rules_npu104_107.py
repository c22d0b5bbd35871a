"""Launch-script rules NPU104-NPU107 (and NPU103's deleted-line case): messages, severities, suggestions, and
the generated-config reader they share."""

from __future__ import annotations

import textwrap
from pathlib import Path

from checks.config import DEFAULT_CONFIG
from checks.engine import needed_paths
from checks.facts import default_facts
from checks.model import ChangeStatus, FileChange, Severity
from checks.parsers import hydra_config
from checks.parsers.shell import Invocation, npu_view, parse
from tests.fixture_support import FIXTURES, load_case, run_case

LAUNCHERS = default_facts().launchers  # verl's, the first profile

CFG = FIXTURES / "NPU105" / "bad_plus_and_bare_fsdp" / "head" / "verl" / "trainer" / "config"


def _findings(case: str, rule: str) -> list[tuple[int, Severity, str, str | None]]:
    report = run_case(load_case(FIXTURES / case))
    assert report.errors == []
    return [(f.line, f.severity, f.message, f.suggestion) for f in report.findings if f.rule == rule]


def _schema(name: str) -> hydra_config.Schema:
    schema = hydra_config.load(name, (CFG / name).read_text())
    assert schema is not None
    return schema


def _invocation(text: str) -> Invocation:
    view = npu_view(parse(textwrap.dedent(text).lstrip("\n")), {"shell", "npu_script"}, "trainer.device", LAUNCHERS)
    assert view is not None
    [inv] = view.invocations
    return inv


# -- the generated-config reader --------------------------------------------------------------------------------


def test_schema_status_and_defaults() -> None:
    fsdp = _schema("_generated_ppo_trainer.yaml")
    assert fsdp.status("actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes") == "exists"
    assert fsdp.status("actor_rollout_ref.model.override_config.attn_implementation") == "missing"
    assert fsdp.status("actor_rollout_ref.actor.optim.override_optimizer_config.x") == "unknown"  # below a null
    assert fsdp.status("hydra.run.dir") == "unknown"  # top-level names the file leaves out
    default = fsdp.default("actor_rollout_ref.rollout.checkpoint_engine.backend")
    assert default is not None and default.value == "naive"
    mega = _schema("_generated_ppo_megatron_trainer.yaml")
    assert mega.redirect("actor_rollout_ref.ref.megatron.use_mbridge") == (
        "actor_rollout_ref.actor.megatron.use_mbridge",
        hydra_config.Default("False", mega.node("actor_rollout_ref.ref.megatron.use_mbridge")[1].line, ""),  # type: ignore[union-attr]
    )
    ref_mbridge = mega.default("actor_rollout_ref.ref.megatron.use_mbridge")
    assert ref_mbridge is not None and ref_mbridge.value == "true"  # followed to the actor's literal
    redirected = mega.redirect("actor_rollout_ref.ref.megatron.override_transformer_config.context_parallel_size")
    assert redirected is not None
    assert redirected[0] == "actor_rollout_ref.actor.megatron.override_transformer_config.context_parallel_size"


def test_schema_refuses_broken_yaml() -> None:
    assert hydra_config.load("x.yaml", "a: [1,\n") is None
    assert hydra_config.load("x.yaml", "- a\n- b\n") is None


def test_config_choice_by_entry_point_name_and_engine() -> None:
    facts = default_facts().hydra_schema
    plain = _invocation("python3 -m verl.trainer.main_ppo a.b=1\n")
    assert hydra_config.config_file_for(plain, facts).file == "verl/trainer/config/_generated_ppo_trainer.yaml"
    named = _invocation(
        "python3 -m verl.trainer.main_ppo --config-path=config --config-name='ppo_megatron_trainer.yaml' a.b=1\n"
    )
    assert hydra_config.config_file_for(named, facts).file == "verl/trainer/config/_generated_ppo_megatron_trainer.yaml"
    engine = _invocation(
        """
        EXTRA=(model_engine=megatron)
        python3 -m verl.trainer.main_ppo a.b=1 "${EXTRA[@]}"
        """
    )
    assert engine.args[-1] == "model_engine=megatron"
    assert (
        hydra_config.config_file_for(engine, facts).file == "verl/trainer/config/_generated_ppo_megatron_trainer.yaml"
    )
    for text in (
        "python3 -m recipe.dapo.main_dapo a.b=1\n",
        "python3 -m verl.trainer.main_ppo --config-name=$CFG a.b=1\n",
        "python3 -m verl.trainer.main_ppo --config-path=/opt/cfg --config-name=x a.b=1\n",
        "python3 -m verl.trainer.main_ppo data=my_data a.b=1\n",
        "python3 -m verl.trainer.main_ppo --config-name=sft_trainer a.b=1\n",
    ):
        choice = hydra_config.config_file_for(_invocation(text), facts)
        assert choice.file is None and choice.reason, text


# -- NPU104 -------------------------------------------------------------------------------------------------------


def test_npu104_names_the_variable_and_the_fix() -> None:
    found = _findings("NPU104/bad_typo_and_missing_variable", "NPU104")
    assert [(line, sev) for line, sev, _m, _s in found] == [(13, Severity.ERROR), (16, Severity.ERROR)]
    message = found[1][2]
    assert "`$MODLE_PATH`" in message and "(an empty value)" in message
    assert "`${MODLE_PATH:?set MODLE_PATH}`" in message
    assert all(s is None for _l, _v, _m, s in found)


# -- NPU105 -------------------------------------------------------------------------------------------------------


def test_npu105_messages_and_exact_respelling() -> None:
    found = {line: (msg, sug) for line, _sev, msg, sug in _findings("NPU105/bad_plus_and_bare_fsdp", "NPU105")}
    msg, sug = found[11]
    assert "Key 'attn_implementation' is not in struct" in msg and "`actor_rollout_ref.model.override_config`" in msg
    assert sug == "    +actor_rollout_ref.model.override_config.attn_implementation=eager \\"
    msg, sug = found[14]
    assert "Could not append to config" in msg and "_generated_ppo_trainer.yaml" in msg
    assert sug == "    actor_rollout_ref.rollout.checkpoint_engine.update_weights_bucket_megabytes=4096 \\"
    megatron = _findings("NPU105/bad_megatron_by_config_name", "NPU105")
    assert all("_generated_ppo_megatron_trainer.yaml" in m for _l, _s, m, _g in megatron)


def test_npu105_declares_the_config_as_context() -> None:
    change = FileChange("tests/special_npu/run_qwen3_06b_ppo.sh", ChangeStatus.MODIFIED, added_lines=frozenset({3}))
    head, _base = needed_paths(
        ["tests/special_npu/run_qwen3_06b_ppo.sh", "verl/trainer/config/_generated_ppo_trainer.yaml", "README.md"],
        {change.path: change},
        DEFAULT_CONFIG,
    )
    assert "verl/trainer/config/_generated_ppo_trainer.yaml" in head


# -- NPU106 -------------------------------------------------------------------------------------------------------


def test_npu106_severities_and_suggestions() -> None:
    found = {line: (sev, msg, sug) for line, sev, msg, sug in _findings("NPU106/bad_hccl_backend", "NPU106")}
    sev, msg, sug = found[9]
    assert sev == Severity.ERROR and "registers as `nccl` (since #5473)" in msg
    assert sug == "    actor_rollout_ref.rollout.checkpoint_engine.backend='nccl' \\"
    sev, msg, sug = found[11]
    assert sev == Severity.ERROR and sug == "    trainer.device=npu \\"

    found = {line: (sev, msg, sug) for line, sev, msg, sug in _findings("NPU106/bad_megatron_vpp_cp_flash", "NPU106")}
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

    found = {line: (sev, msg, sug) for line, sev, msg, sug in _findings("NPU106/bad_cuda_visible_devices", "NPU106")}
    assert found[4][0] == Severity.WARNING and "ASCEND_RT_VISIBLE_DEVICES" in found[4][1]
    assert found[10][0] == Severity.WARNING
    assert found[10][2] == "    actor_rollout_ref.actor.use_torch_compile=False \\"

    found = {
        line: (sev, msg, sug)
        for line, sev, msg, sug in _findings("NPU106/bad_sglang_without_ascend_attention", "NPU106")
    }
    assert found[6][0] == Severity.WARNING and "RAY_EXPERIMENTAL_NOSET_ASCEND_RT_VISIBLE_DEVICES" in found[6][1]
    assert found[9][0] == Severity.ERROR and "attention_backend=ascend" in found[9][1] and found[9][2] is None


# -- NPU107 -------------------------------------------------------------------------------------------------------


def test_npu107_lists_the_unpinned_npu_megatron_scripts() -> None:
    [(line, sev, message, sug)] = _findings("NPU107/bad_vanilla_mbridge_flip", "NPU107")
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


# -- NPU103: a deletion with no added line left ---------------------------------------------------------------------


def test_npu103_deleted_eager_line_is_kept_on_the_command() -> None:
    [(line, sev, message, _s)] = _findings("NPU103/bad_eager_line_deleted", "NPU103")
    assert (line, sev) == (17, Severity.WARNING)
    assert "`enforce_eager=True` is removed" in message


def test_fixture_configs_are_hand_written() -> None:
    # The fixtures' generated configs are small stand-ins, not copies of verl's 1,000-line files.
    for path in Path(FIXTURES).glob("NPU10*/*/head/verl/trainer/config/_generated_*.yaml"):
        assert len(path.read_text().splitlines()) < 120, path
