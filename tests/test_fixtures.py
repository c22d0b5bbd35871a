"""Every fixture case: the findings equal its expected.txt (rule, path, line, severity, message prefix)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixture_support import (
    FIXTURES,
    all_cases,
    compare,
    load_case,
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
        assert case.expected == {(e.rule, e.path, e.line) for e in case.findings}


def test_every_rule_has_bad_and_good_fixtures() -> None:
    from checks.rule import all_rules

    for rid in all_rules():
        cases = [load_case(p) for p in CASES if p.relative_to(FIXTURES).parts[0] == rid]
        assert any(any(e.rule == rid for e in c.findings) for c in cases), f"{rid} has no bad fixture"
        assert any(not any(e.rule == rid for e in c.findings) for c in cases), f"{rid} has no good fixture"


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
