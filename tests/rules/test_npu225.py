"""NPU225 paths-filter-on-schedule: its fixture cases (tests/fixtures/NPU225/) and messages."""

from __future__ import annotations

from tests.rules.support import file_findings, fixture_tests

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU225")


def test_a_trigger_added_by_the_change_is_where_the_comment_goes_and_names_the_step() -> None:
    found = file_findings("NPU225/bad_schedule_trigger_added", "NPU225")
    assert sorted(found) == [("e2e_npu.yaml", 3)]
    message = found[("e2e_npu.yaml", 3)][2]
    assert message.startswith("Job `test` runs `dorny/paths-filter@v3` (line 16) without `base:`")
