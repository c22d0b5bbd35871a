"""NPU119: its fixture cases (tests/fixtures/NPU119/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU119")


from tests.rules.support import change, file_findings  # noqa: E402


def test_a_renamed_variable_names_the_set_one() -> None:
    severity, _s, message = file_findings("NPU119/bad_renamed_launcher", "NPU119")[("grpo_qwen3_A2.sh", 4)]
    assert severity == "error"
    assert "Was `DEFAULT_SH` meant (the name this script does set)?" in message


def test_an_unquoted_numeric_test_says_the_branch_never_runs() -> None:
    message = file_findings("NPU119/bad_install_gate", "NPU119")[("install_sglang_npu.sh", 5)][2]
    assert "the test fails with an error and the branch it guards never runs" in message


def test_a_value_passed_on_is_not_set_by_the_script() -> None:
    """Ascend/msmodelslim (sweep-r17, judged false): about 70 test scripts read `$PROJECT_PATH`, which the test
    runner gives; one passes it into a container (`docker exec ... bash -c "PROJECT_PATH='$PROJECT_PATH' ..."`),
    which sets nothing. Once a script does set it, the others' unset use is reported."""
    reader = (
        "#!/bin/bash\nsource /usr/local/Ascend/ascend-toolkit/set_env.sh\nexport ASCEND_RT_VISIBLE_DEVICES=0\n"
        "python3 $PROJECT_PATH/resource/squant/run_squant.py --device npu\n"
    )
    passer = (
        "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\n"
        "docker exec -i smoke bash -c \"CANN_PATH='$CANN_PATH' PROJECT_PATH='$PROJECT_PATH' "
        '$PROJECT_PATH/test-case/quant.sh"\n'
    )
    head = {"test/ST/squant/run.sh": reader, "test/ST/flux/run.sh": passer}
    assert [f for f in change({}, head).findings if f.rule == "NPU119"] == []
    head["test/ST/setup/run.sh"] = "#!/bin/bash\nexport ASCEND_RT_VISIBLE_DEVICES=0\nPROJECT_PATH=/opt/msmodelslim\n"
    found = [(f.path, f.line) for f in change({}, head).findings if f.rule == "NPU119"]
    assert ("test/ST/squant/run.sh", 4) in found


def test_a_line_anywhere_that_runs_the_script_with_the_name_set_is_a_caller() -> None:
    """atomrun39/verl_scripts keeps a copy of verl under `verl-release-v0.7.0/`; its workflow (not the repository's,
    so no CI step the call graph places) runs `USE_DUMMY_MODEL=True ... bash tests/special_npu/run_dapo.sh`, and
    the rule said nothing sets `USE_DUMMY_MODEL` (rs-r49, judged false). Without that line it is reported."""
    script = (
        "#!/usr/bin/env bash\nset -xeuo pipefail\nexport VLLM_ASCEND_ENABLE_NZ=0\n"
        'if [[ "$USE_DUMMY_MODEL" == "True" ]]; then\n    echo dummy\nfi\n'
    )
    other = (
        "#!/usr/bin/env bash\nUSE_DUMMY_MODEL=${USE_DUMMY_MODEL:-False}\n"
        'if [ "$USE_DUMMY_MODEL" = "True" ]; then\n  echo d\nfi\n'
    )
    workflow = (
        "name: e2e_ascend\non: [push]\njobs:\n  dapo:\n    runs-on: linux-aarch64-a2-8\n    steps:\n"
        "      - run: |\n          USE_DUMMY_MODEL=True bash tests/special_npu/run_dapo.sh\n"
    )
    head = {"copy/tests/special_npu/run_dapo.sh": script, "copy/tests/special_e2e/run_ppo.sh": other}
    found = [(f.path, f.line) for f in change({}, head).findings if f.rule == "NPU119"]
    assert found == [("copy/tests/special_npu/run_dapo.sh", 4)]
    head["copy/.github/workflows/e2e_ascend.yml"] = workflow
    assert [f for f in change({}, head).findings if f.rule == "NPU119"] == []
