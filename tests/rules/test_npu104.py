"""NPU104 undefined-variable-in-override: its fixture cases (tests/fixtures/NPU104/), and what they cannot say."""

from __future__ import annotations

from npu_review.checks.model import Severity
from tests.rules.support import (
    fixture_tests,
    line_findings,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU104")


def test_npu104_names_the_variable_and_the_fix() -> None:
    found = line_findings("NPU104/bad_typo_and_missing_variable", "NPU104")
    assert [(line, sev) for line, sev, _m, _s in found] == [(13, Severity.ERROR), (16, Severity.ERROR)]
    message = found[1][2]
    assert "`$MODLE_PATH`" in message and "(an empty value)" in message
    assert "`${MODLE_PATH:?set MODLE_PATH}`" in message
    assert all(s is None for _l, _v, _m, s in found)
