"""NPU119: its fixture cases (tests/fixtures/NPU119/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU119")


from tests.rules.support import file_findings  # noqa: E402


def test_a_renamed_variable_names_the_set_one() -> None:
    severity, _s, message = file_findings("NPU119/bad_renamed_launcher", "NPU119")[("grpo_qwen3_A2.sh", 4)]
    assert severity == "error"
    assert "Was `DEFAULT_SH` meant (the name this script does set)?" in message


def test_an_unquoted_numeric_test_says_the_branch_never_runs() -> None:
    message = file_findings("NPU119/bad_install_gate", "NPU119")[("install_sglang_npu.sh", 5)][2]
    assert "the test fails with an error and the branch it guards never runs" in message
