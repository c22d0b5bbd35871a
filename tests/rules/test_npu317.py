"""NPU317: its fixture cases (tests/fixtures/NPU317/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU317")


from tests.rules.support import file_findings  # noqa: E402


def test_a_python_caller_is_a_warning_a_workflow_an_error() -> None:
    python = file_findings("NPU317/bad_run_with_sh_by_setup", "NPU317")[("generate_code.sh", 4)]
    assert python[0] == "warning"
    assert "setup.py:6 runs this script with `subprocess` with `sh`" in python[2]
    workflow = file_findings("NPU317/bad_workflow_runs_sh", "NPU317")[("run_npu_ut.sh", 3)]
    assert workflow[0] == "error"
