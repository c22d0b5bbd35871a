"""NPU114: its fixture cases (tests/fixtures/NPU114/)."""

from __future__ import annotations

from tests.rules.support import fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU114")


from tests.rules.support import case_findings  # noqa: E402


def test_the_child_script_finding_names_its_caller() -> None:
    found = [f for f in case_findings("NPU114/bad_exports_in_child_script") if f.rule == "NPU114"]
    assert [(f.path, f.line, f.severity.label) for f in found] == [("scripts/prepare_deepep_npu.sh", 4, "warning")]
    assert [(r.path, r.line) for r in found[0].related] == [(".github/workflows/pr-test-npu.yml", 10)]
    assert "runs it as a child process (`bash scripts/prepare_deepep_npu.sh`)" in found[0].message


def test_a_bashrc_export_nothing_needs_is_not_reported() -> None:
    found = [f for f in case_findings("NPU114/bad_bashrc_export") if f.rule == "NPU114"]
    assert [f.line for f in found] == [4]  # ARCH (line 2) is computed again by the RUN that uses it
