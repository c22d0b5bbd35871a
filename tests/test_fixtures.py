"""Every fixture case: the findings equal its expected.txt (rule, path, line, severity, message prefix), and its
rule alone sees the same through the App's file selection as through the whole tree (CLI = App)."""

from __future__ import annotations

from pathlib import Path

import pytest

from checks.engine import run
from tests.fixture_support import (
    FIXTURES,
    actual,
    all_cases,
    app_changeset,
    case_config,
    compare,
    load_case,
    only_rule,
    run_case,
)

CASES = all_cases()


def _id(p: Path) -> str:
    return p.relative_to(FIXTURES).as_posix()


@pytest.mark.parametrize("folder", CASES, ids=_id)
def test_fixture_case(folder: Path) -> None:
    case = load_case(folder)
    report = run_case(case)
    assert report.errors == []
    diff = compare(case.findings, report.findings)
    assert diff == [], "\n".join(diff)
    if case.expected:  # markers, when the case has them, sit on the lines expected.txt names
        assert case.expected == {(rid, e.path, e.line) for e in case.findings for rid in e.ids}


@pytest.mark.parametrize("folder", CASES, ids=_id)
def test_fixture_case_through_the_app_file_selection(folder: Path) -> None:
    """The case's rule alone: the whole tree (CLI) gives the lines expected.txt names for that rule (a message may
    differ: NPU103 says more with NPU108 off); the files the App fetches (App) give exactly the CLI's findings;
    and reading any file the App would not fetch fails the run (strict)."""
    case = load_case(folder)
    assert case.rule is not None, f"{case.name}: cases are filed under a rule id"
    config = only_rule(case_config(case), case.rule)
    want = [e for e in case.findings if case.rule in e.ids]
    cli = run_case(case, config)
    assert cli.errors == []
    assert actual(cli) == {(case.rule, e.path, e.line) for e in want}
    app = run(app_changeset(case, config), config)
    assert [f.__dict__ for f in app.findings] == [f.__dict__ for f in cli.findings]
    strict = run(app_changeset(case, config, strict=True), config)
    assert strict.errors == []


def test_every_rule_has_bad_and_good_fixtures() -> None:
    from checks.rule import all_rules

    for rid in all_rules():
        cases = [load_case(p) for p in CASES if p.relative_to(FIXTURES).parts[0] == rid]
        assert any(any(rid in e.ids for e in c.findings) for c in cases), f"{rid} has no bad fixture"
        assert any(not any(rid in e.ids for e in c.findings) for c in cases), f"{rid} has no good fixture"


def test_expected_files_are_checked_line_by_line() -> None:
    """The matching itself: prefix, severity and line all count; a finding matches one line only."""
    from checks.model import Finding, Severity
    from tests.fixture_support import parse_expected

    def finding(line: int, message: str, severity: Severity = Severity.WARNING) -> Finding:
        return Finding("NPU301", "tls-verification-disabled", severity, "Dockerfile", line, line, message)

    exp = parse_expected("# comment\n\nDockerfile:2: NPU301 warning: `curl -k`\nDockerfile:2: NPU301 warning: `curl\n")
    assert compare(exp, [finding(2, "`curl -k` skips"), finding(2, "`curl -fk` skips")]) == []
    assert compare(exp, [finding(2, "`curl -k` skips")]) == ["missing: Dockerfile:2: NPU301 warning: `curl"]
    assert compare(exp[:1], [finding(2, "`curl -k` x", Severity.ERROR)]) == [
        "missing: Dockerfile:2: NPU301 warning: `curl -k`",
        "unexpected: Dockerfile:2: NPU301 error: `curl -k` x",
    ]
    with pytest.raises(ValueError, match=r"x/expected.txt:1: expected `path:line: NPUxxx severity: message`"):
        parse_expected("Dockerfile:2: NPU301 loud: x\n", "x/expected.txt")
