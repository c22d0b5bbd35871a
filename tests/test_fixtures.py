"""The fixture cases as a whole. Each case runs in its rule's module (tests/rules/test_npuXXX.py, through
`tests.rules.support.fixture_tests`): the findings equal its expected.txt (rule, path, line, severity, message
prefix), and its rule alone sees the same through the App's file selection as through the whole tree (CLI = App).
Here: every rule has that module and both kinds of cases, and the expected-file matching itself."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest

from tests.fixture_support import (
    FIXTURES,
    all_cases,
    compare,
    load_case,
)
from tests.rules.support import FIXTURE_RULES

CASES = all_cases()
RULE_TESTS = Path(__file__).parent / "rules"


def test_every_rule_has_a_module_that_runs_its_cases() -> None:
    """tests/rules/test_npuXXX.py for each rule in RULES: its fixture cases run there (`fixture_tests`), with what
    the cases cannot say; and no case sits under a folder that names no rule (it would never run)."""
    from npu_review.checks.rules import RULES

    rules = [cls.id for cls in RULES]
    missing = [rid for rid in rules if not (RULE_TESTS / f"test_{rid.lower()}.py").is_file()]
    assert missing == [], f"no tests/rules/test_npuXXX.py for {missing}"
    for rid in rules:
        importlib.import_module(f"tests.rules.test_{rid.lower()}")
    unrun = [rid for rid in rules if rid not in FIXTURE_RULES]
    assert unrun == [], f"these rules' modules do not call fixture_tests(rid): {unrun}"
    assert {p.relative_to(FIXTURES).parts[0] for p in CASES} <= set(rules)
    modules = {p.stem for p in RULE_TESTS.glob("test_npu*.py")}
    assert modules == {f"test_{rid.lower()}" for rid in rules}, "a module under tests/rules/ names no rule"


def test_every_rule_has_bad_and_good_fixtures() -> None:
    from npu_review.checks.rule import all_rules

    for rid in all_rules():
        cases = [load_case(p) for p in CASES if p.relative_to(FIXTURES).parts[0] == rid]
        assert any(any(rid in e.ids for e in c.findings) for c in cases), f"{rid} has no bad fixture"
        assert any(not any(rid in e.ids for e in c.findings) for c in cases), f"{rid} has no good fixture"


def test_expected_files_are_checked_line_by_line() -> None:
    """The matching itself: prefix, severity and line all count; a finding matches one line only."""
    from npu_review.checks.model import Finding, Severity
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


def test_fixture_configs_are_hand_written() -> None:
    # The fixtures' generated configs are small stand-ins, not copies of verl's 1,000-line files.
    for path in Path(FIXTURES).glob("NPU10*/*/head/verl/trainer/config/_generated_*.yaml"):
        assert len(path.read_text().splitlines()) < 120, path


def test_no_fixture_file_is_ignored_by_git() -> None:
    """A fixture file that .gitignore hides (a `build/` folder) exists here but not in a fresh clone, where its
    case then fails: every file under tests/fixtures must be one git keeps."""
    import shutil
    import subprocess

    root = Path(__file__).resolve().parent.parent
    if shutil.which("git") is None or not (root / ".git").exists():
        pytest.skip("not a git checkout")
    out = subprocess.run(
        ["git", "-C", str(root), "ls-files", "--others", "--ignored", "--exclude-standard", "tests/fixtures"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    assert [p for p in out.splitlines() if "__pycache__" not in p] == []
