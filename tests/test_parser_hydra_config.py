"""The generated Hydra config reader NPU105 and NPU106 share: keys, defaults, redirects, and which config a
launch command uses."""

from __future__ import annotations

import textwrap

from npu_review.checks.facts import default_facts
from npu_review.checks.parsers import hydra_config
from npu_review.checks.parsers.shell import Invocation, npu_view, parse
from tests.fixture_support import FIXTURES

LAUNCHERS = default_facts().launchers  # verl's, the first profile


CFG = FIXTURES / "NPU105" / "bad_plus_and_bare_fsdp" / "head" / "verl" / "trainer" / "config"


def _schema(name: str) -> hydra_config.Schema:
    schema = hydra_config.load(name, (CFG / name).read_text())
    assert schema is not None
    return schema


def _invocation(text: str) -> Invocation:
    view = npu_view(parse(textwrap.dedent(text).lstrip("\n")), {"shell", "npu_script"}, "trainer.device", LAUNCHERS)
    assert view is not None
    [inv] = view.invocations
    return inv


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
