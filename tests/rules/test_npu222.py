"""NPU222 matrix-value-unmatched: its fixture cases (tests/fixtures/NPU222/) and GitHub's comparison rules."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU222")


def test_the_message_lists_the_values_the_matrix_has() -> None:
    found = file_findings("NPU222/bad_step_if_value_no_leg_has", "NPU222")
    message = found[("vllm_ascend_test.yaml", 15)][2]
    assert "(its values: `linux-aarch64-a2b3-4`, `linux-aarch64-a3-16`), so the step never runs" in message
    assert "no leg of the job's matrix has a key `device`" in found[("vllm_ascend_test.yaml", 18)][2]


def test_not_equal_to_a_missing_value_is_always_true() -> None:
    found = file_findings("NPU222/trap_excluded_value_and_not_equal", "NPU222")
    assert "the condition is always true" in found[("build_and_release.yml", 19)][2]
    assert "its values: `910b`" in found[("build_and_release.yml", 16)][2]


def test_a_change_that_edits_the_matrix_is_the_cause_of_the_stale_condition() -> None:
    from tests.rules.support import FIXTURES, load_case, run_case

    report = run_case(load_case(FIXTURES / "NPU222/change_matrix_renamed_condition_stale"))
    [finding] = [f for f in report.findings if f.rule == "NPU222"]
    assert (finding.path, finding.line, finding.severity.label) == (".github/workflows/docker.yml", 17, "warning")
    assert [(r.path, r.line, r.note) for r in finding.related] == [
        (".github/workflows/docker.yml", 11, "the matrix this change edits")
    ]
