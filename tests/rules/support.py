"""What the per-rule modules (tests/rules/test_npuXXX.py) share: a rule's fixture cases as two parametrized tests,
and small ways to run a case or a tree and keep what a test looks at."""

from __future__ import annotations

import textwrap
from collections.abc import Callable
from pathlib import Path

import pytest

from npu_review.checks import engine
from npu_review.checks.config import DEFAULT_CONFIG, parse_config
from npu_review.checks.diffing import changes_between
from npu_review.checks.engine import Report, run
from npu_review.checks.model import ChangeSet, FileChange, Finding, MemoryTree, Severity
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

# The rules whose module called fixture_tests (tests/test_fixtures.py checks that every rule's cases are run).
FIXTURE_RULES: set[str] = set()


def fixture_tests(rule: str) -> tuple[Callable[[Path], None], Callable[[Path], None]]:
    """The two tests every case of tests/fixtures/<rule>/ runs, parametrized over those cases:
    `test_fixture_case, test_fixture_case_through_the_app_file_selection = fixture_tests("NPU301")`."""
    FIXTURE_RULES.add(rule)
    cases = [p for p in all_cases() if p.parent.name == rule]
    parametrize = pytest.mark.parametrize("folder", cases, ids=lambda p: p.name)

    @parametrize
    def test_fixture_case(folder: Path) -> None:
        """The case's findings (all rules) equal its expected.txt; markers, when it has any, sit on those lines."""
        case = load_case(folder)
        report = run_case(case)
        assert report.errors == []
        diff = compare(case.findings, report.findings)
        assert diff == [], "\n".join(diff)
        if case.expected:
            assert case.expected == {(rid, e.path, e.line) for e in case.findings for rid in e.ids}

    @parametrize
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

    return test_fixture_case, test_fixture_case_through_the_app_file_selection


# -- a fixture case, run as its case.yml says --------------------------------------------------------------------


def line_findings(case: str, rule: str) -> list[tuple[int, Severity, str, str | None]]:
    """`rule`'s findings of the case `case` ("NPU103/bad_x") as (line, severity, message, suggestion)."""
    report = run_case(load_case(FIXTURES / case))
    assert report.errors == []
    return [(f.line, f.severity, f.message, f.suggestion) for f in report.findings if f.rule == rule]


def file_findings(case: str, rule: str) -> dict[tuple[str, int], tuple[str, str | None, str]]:
    """`rule`'s findings of the case by (file name, line): (severity label, suggestion, message)."""
    report = run_case(load_case(FIXTURES / case))
    assert report.errors == []
    return {
        (f.path.rsplit("/", 1)[-1], f.line): (f.severity.label, f.suggestion, f.message)
        for f in report.findings
        if f.rule == rule
    }


def rule_findings(case: str) -> dict[tuple[str, int], tuple[str, str | None]]:
    """Every finding of the case by (rule, line): (severity label, suggestion)."""
    report = run_case(load_case(FIXTURES / case))
    assert report.errors == []
    return {(f.rule, f.line): (f.severity.label, f.suggestion) for f in report.findings}


def case_findings(name: str) -> list[Finding]:
    """An audit case's findings."""
    case = load_case(FIXTURES / name)
    assert case.base is None
    return engine.run(ChangeSet(head=MemoryTree(case.head), audit=True)).findings


def case_findings_change(name: str) -> list[Finding]:
    """The case's findings, a change when it has a base/ tree."""
    return run_case(load_case(FIXTURES / name)).findings


# -- a small tree ----------------------------------------------------------------------------------------------

# The trees of the workflow rules' tests are fragments of verl's layout, too small to be detected as verl: the
# profile is named.
VERL = parse_config("profile: verl\n", engine.known_rule_ids())


def tree_findings(
    files: dict[str, str], base: dict[str, str] | None = None, changes: dict[str, FileChange] | None = None
) -> list[Finding]:
    """An audit of `files` (dedented), or the change base..head with the given changes, under verl's profile."""
    head = {k: textwrap.dedent(v).lstrip("\n") for k, v in files.items()}
    if base is None:
        cs = ChangeSet(head=MemoryTree(head), audit=True)
    else:
        cs = ChangeSet(
            head=MemoryTree(head),
            base=MemoryTree({k: textwrap.dedent(v).lstrip("\n") for k, v in base.items()}),
            changes=changes or {},
        )
    return engine.run(cs, VERL).findings


def locations(report: Report, rule: str) -> list[tuple[str, int]]:
    """`rule`'s findings of a report as sorted (path, line)."""
    return sorted((f.path, f.line) for f in report.findings if f.rule == rule)


# -- a change between two small trees, with no config ---------------------------------------------------------


def change(base: dict[str, str | None], head: dict[str, str | None]) -> Report:
    """Review base..head as a pull request with no config."""
    return run(
        ChangeSet(head=MemoryTree(head), base=MemoryTree(base), changes=changes_between(base, head)), DEFAULT_CONFIG
    )


def got(report: Report, rule: str) -> list[tuple[str, int, str, str]]:
    """`rule`'s findings of a report as (path, line, severity, message); the run must have had no errors."""
    assert report.errors == []
    return [(f.path, f.line, f.severity.label, f.message) for f in report.findings if f.rule == rule]
