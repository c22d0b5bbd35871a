"""NPU212 missing-fork-guard: its fixture cases (tests/fixtures/NPU212/), and what they cannot say."""

from __future__ import annotations

from checks.model import Severity
from checks.rules.npu212_missing_fork_guard import guard_owners
from tests.rules.support import (
    case_findings,
    fixture_tests,
)

test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU212")


def test_guard_owners() -> None:
    assert guard_owners("github.repository_owner == 'verl-project'") == ["verl-project"]
    assert guard_owners("${{ 'volcengine' == github.repository_owner && x }}") == ["volcengine"]
    assert guard_owners('github.repository == "verl-project/verl"') == ["verl-project"]
    assert guard_owners("github.repository_owner != 'verl-project'") == []


def test_npu212_suggests_the_owner_of_the_repository_at_that_revision() -> None:
    (f,) = case_findings("NPU212/trap_owner_from_project_url")
    assert (f.rule, f.line, f.severity) == ("NPU212", 10, Severity.ERROR)
    assert f.message.endswith("Add `if: github.repository_owner == 'volcengine'`.")
    assert f.suggestion is not None and "github.repository_owner == 'volcengine'" in f.suggestion
