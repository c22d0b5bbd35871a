"""NPU116: its fixture cases (tests/fixtures/NPU116/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU116")


from tests.rules.support import file_findings  # noqa: E402


def test_the_split_override_is_joined_by_the_suggestion() -> None:
    severity, suggestion, message = file_findings("NPU116/bad_hydra_script", "NPU116")[("test_grpo_fsdp_A2.sh", 6)]
    assert severity == "error"
    assert suggestion == "    data.train_files=${TRAIN_FILE} \\"
    assert message.startswith("`data.train_files= ${TRAIN_FILE}`: the blank after `=` splits this in two")


def test_a_setting_emptied_through_an_option_is_meant() -> None:
    """vllm-ascend/main2main_flow 457f282c (rs-r29, judged false, and its suggestion would name a helper `push`):
    `git -c credential.helper= push` clears the global credential helper for this push. The same empty value as
    a launcher's override is still a split."""
    from tests.rules.support import change

    script = (
        "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\n"
        "git -c credential.helper= push --force-with-lease origin npu-ci\n"
        "python3 -m verl.trainer.main_ppo trainer.device=npu data.train_files= ${TRAIN_FILE}\n"
    )
    found = [(f.path, f.line) for f in change({}, {"scripts/run_npu.sh": script}).findings if f.rule == "NPU116"]
    assert found == [("scripts/run_npu.sh", 4)]
