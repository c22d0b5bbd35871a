"""Every fixture case: the exact set of (rule, path, line) the engine reports equals the markers."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fixture_support import FIXTURES, actual, all_cases, load_case, run_case


@pytest.mark.parametrize("folder", all_cases(), ids=lambda p: p.relative_to(FIXTURES).as_posix())
def test_fixture_case(folder: Path) -> None:
    case = load_case(folder)
    report = run_case(case)
    assert report.errors == []
    got = actual(report)
    missing = sorted(case.expected - got)
    unexpected = sorted(got - case.expected)
    detail = {(f.rule, f.path, f.line): f.message for f in report.findings}
    assert not missing and not unexpected, f"missing: {missing}\nunexpected: {[(u, detail[u]) for u in unexpected]}"


def test_every_rule_has_bad_and_good_fixtures() -> None:
    from checks.rule import all_rules

    for rid in all_rules():
        cases = [load_case(p) for p in all_cases() if p.relative_to(FIXTURES).parts[0] == rid]
        assert any(any(e[0] == rid for e in c.expected) for c in cases), f"{rid} has no bad fixture"
        assert any(not any(e[0] == rid for e in c.expected) for c in cases), f"{rid} has no good fixture"
