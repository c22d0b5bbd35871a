"""NPU224 runner-label-misspelled: its fixture cases (tests/fixtures/NPU224/) and the suggested label."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU224")


def test_the_suggestion_spells_the_label_right() -> None:
    found = file_findings("NPU224/bad_hosted_label_misspelled", "NPU224")
    severity, suggestion, message = found[("release.yml", 9)]
    assert severity == "error"
    assert suggestion == "    runs-on: ubuntu-22.04-arm"
    assert "did you mean `ubuntu-22.04-arm`?" in message


def test_a_matrix_label_is_reported_on_its_matrix_line() -> None:
    found = file_findings("NPU224/bad_project_label_misspelled_in_a_matrix", "NPU224")
    assert "did you mean `linux-amd64-cpu-8-hk`?" in found[("pr_test_npu.yml", 16)][2]
