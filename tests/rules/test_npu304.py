"""NPU304 empty-continuation-line: its fixture cases (tests/fixtures/NPU304/), and what they cannot say."""

from __future__ import annotations

from tests.rules.support import (
    fixture_tests,
    rule_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU304")


def test_npu304_blank_line_notice_and_swallowed_instruction_error() -> None:
    got = rule_findings("NPU304/bad_blank_lines")
    assert got == {("NPU304", 8): ("notice", ""), ("NPU304", 10): ("notice", ""), ("NPU304", 17): ("error", None)}
