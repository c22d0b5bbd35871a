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
