"""Fixture cases: a folder with `head/` (and optionally `base/`) trees and an `expected.txt` of the findings.

Layout: tests/fixtures/<RULE>/<case>/head/<repo path>, optional base/<repo path>, optional case.yml (`title:` the
PR title, `config:` a repo config's text), and expected.txt. With a base/ tree the case is reviewed as the change
base..head, else as an audit (--all).

expected.txt (as actionlint's `.out` files): one line per finding the whole run reports, across all rules,

    docker/Dockerfile:12: NPU301 warning: `curl -k` downloads without checking

that is `path:line: RULE severity: message`, where the message may be cut short: a finding matches a line when
path, line, rule and severity are equal and its message starts with the line's text. Blank lines and lines
starting with `#` are comments. No file: the case expects no finding at all. `python -m tests.fixture_support
write NPU301/bad_x` writes the file from what the engine reports today (read it before you commit it).

A marker `# expect: NPU301` (or `expect: NPU301, NPU306`, any comment syntax) on a line is cut from it before the
engine reads the file. Markers are optional; when a case has any, they must name exactly the (rule, path, line)
of expected.txt, so that a reader sees the finding at its line.
"""

from __future__ import annotations

import argparse
import dataclasses
import re
import sys
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

import yaml

from npu_review.checks.config import DEFAULT_CONFIG, Config, RuleSetting, parse_config
from npu_review.checks.diffing import changes_between
from npu_review.checks.engine import UNKNOWN_SUPPRESSION, Report, known_rule_ids, named_paths, needed_paths, run
from npu_review.checks.model import ChangeSet, ChangeStatus, FileChange, Finding, MemoryTree, Tree
from npu_review.checks.rule import RULE_ID

FIXTURES = Path(__file__).parent / "fixtures"
EXPECTED_FILE = "expected.txt"
_MARK = re.compile(r"[ \t]*(?:#|<!--|//)?[ \t]*expect:[ \t]*(NPU\d{3}(?:[ \t]*,[ \t]*NPU\d{3})*)[ \t]*(?:-->)?[ \t]*$")
_EXPECTED_LINE = re.compile(
    r"(?P<path>\S.*?):(?P<line>\d+): (?P<rule>NPU\d{3}(?:\+NPU\d{3})*) (?P<severity>error|warning|notice): "
    r"(?P<message>.+)"
)

Expected = set[tuple[str, str, int]]


@dataclass(frozen=True)
class ExpectedFinding:
    """One line of expected.txt."""

    path: str
    line: int
    rule: str  # `NPU201+NPU202` for a finding that merges same-cause findings of several rules
    severity: str
    message: str  # a prefix of the finding's message

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self.rule.split("+"))

    def matches(self, f: Finding) -> bool:
        return (f.path, f.line, "+".join(f.rule_ids), f.severity.label) == (
            self.path,
            self.line,
            self.rule,
            self.severity,
        ) and f.message.startswith(self.message)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.rule} {self.severity}: {self.message}"


def expected_line(f: Finding) -> str:
    """A finding as a line of expected.txt (its whole message)."""
    return str(ExpectedFinding(f.path, f.line, "+".join(f.rule_ids), f.severity.label, f.message))


def parse_expected(text: str, where: str = EXPECTED_FILE) -> list[ExpectedFinding]:
    out = []
    for n, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.startswith("#"):
            continue
        m = _EXPECTED_LINE.fullmatch(raw.rstrip())
        if m is None:
            raise ValueError(f"{where}:{n}: expected `path:line: NPUxxx severity: message`, got {raw!r}")
        out.append(ExpectedFinding(m["path"], int(m["line"]), m["rule"], m["severity"], m["message"]))
    return out


def compare(expected: Iterable[ExpectedFinding], findings: Iterable[Finding]) -> list[str]:
    """What differs between expected.txt and a run, one line each (`missing:`/`unexpected:`); [] when they match.
    Each finding matches one expected line, the longest prefix first."""
    left = list(findings)
    missing = []
    for e in sorted(expected, key=lambda e: -len(e.message)):
        hit = next((f for f in left if e.matches(f)), None)
        if hit is None:
            missing.append(f"missing: {e}")
        else:
            left.remove(hit)
    return sorted(missing) + [f"unexpected: {expected_line(f)}" for f in sorted(left, key=Finding.sort_key)]


@dataclass
class Case:
    name: str
    folder: Path
    base: dict[str, str | None] | None
    head: dict[str, str | None]
    expected: Expected  # from the markers
    findings: list[ExpectedFinding]  # from expected.txt
    title: str
    config_text: str | None
    when: str = ""  # the day the change is reviewed as of (case.yml `when:`); "" for today

    @property
    def rule(self) -> str | None:
        """The rule the case is filed under (tests/fixtures/NPU301/...), if any."""
        top = self.name.split("/", 1)[0]
        return top if RULE_ID.match(top) else None


def _read_tree(root: Path, collect: Expected | None) -> dict[str, str | None]:
    files: dict[str, str | None] = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(root).as_posix()
        data = p.read_bytes()
        if b"\0" in data:
            files[rel] = None
            continue
        text = data.decode("utf-8")
        out_lines = []
        for n, line in enumerate(text.split("\n"), start=1):
            m = _MARK.search(line)
            if m and collect is not None:
                for rid in re.split(r"[ \t]*,[ \t]*", m.group(1)):
                    collect.add((rid, rel, n))
                line = line[: m.start()]
            out_lines.append(line)
        files[rel] = "\n".join(out_lines)
    return files


def load_case(folder: Path) -> Case:
    expected: Expected = set()
    head = _read_tree(folder / "head", expected)
    base = _read_tree(folder / "base", None) if (folder / "base").is_dir() else None
    meta = {}
    if (folder / "case.yml").is_file():
        meta = yaml.safe_load((folder / "case.yml").read_text()) or {}
    exp_file = folder / EXPECTED_FILE
    name = folder.relative_to(FIXTURES).as_posix()
    findings = parse_expected(exp_file.read_text(), f"{name}/{EXPECTED_FILE}") if exp_file.is_file() else []
    return Case(
        name=name,
        folder=folder,
        base=base,
        head=head,
        expected=expected,
        findings=findings,
        title=str(meta.get("title", "")),
        config_text=meta.get("config"),
        when=str(meta.get("when", "")),
    )


def all_cases() -> list[Path]:
    return sorted(p.parent for p in FIXTURES.glob("*/*/head"))


def case_config(case: Case) -> Config:
    return parse_config(case.config_text, known_rule_ids()) if case.config_text else DEFAULT_CONFIG


def _changeset(case: Case, head: Tree | None = None, base: Tree | None = None) -> ChangeSet:
    if case.base is None:
        return ChangeSet(head=head or MemoryTree(case.head), audit=True, title=case.title, when=case.when)
    return ChangeSet(
        head=head or MemoryTree(case.head),
        base=base or MemoryTree(case.base),
        changes=changes_between(case.base, case.head),
        title=case.title,
        when=case.when,
    )


def run_case(case: Case, config: Config | None = None) -> Report:
    return run(_changeset(case), config or case_config(case))


def actual(report: Report) -> Expected:
    return {(rid, f.path, f.line) for f in report.findings for rid in f.rule_ids}


def only_rule(config: Config, rule: str) -> Config:
    """`config` with every other rule (and NPU001, the engine's own) switched off and `rule` on."""
    rules = {rid: RuleSetting(enabled=False) for rid in known_rule_ids()}
    rules[UNKNOWN_SUPPRESSION[0]] = RuleSetting(enabled=False)
    rules[rule] = dataclasses.replace(config.rules.get(rule, RuleSetting()), enabled=True)
    return dataclasses.replace(config, rules=rules)


class UndeclaredReadError(Exception):
    """A read of a file the App would not have fetched: no rule's declaration covers it."""


class SelectedTree:
    """A revision as the App holds it: every path listed, only the selected files' text. Reading another file
    that exists gives None, as in the App, or raises UndeclaredReadError when `strict`."""

    def __init__(self, files: dict[str, str | None], selected: set[str], rev: str, strict: bool) -> None:
        self._tree = MemoryTree({p: t for p, t in files.items() if p in selected}, files)
        self._all = files
        self.rev = rev
        self.strict = strict

    def paths(self) -> Iterable[str]:
        return self._tree.paths()

    def exists(self, path: str) -> bool:
        return self._tree.exists(path)

    def read(self, path: str) -> str | None:
        text = self._tree.read(path)
        if text is None and self.strict and self._all.get(path) is not None:
            raise UndeclaredReadError(
                f"{path} at {self.rev} is read, but no rule declares it (kinds, context_kinds, "
                "context_paths): the App would not have fetched it"
            )
        return text


def app_changeset(case: Case, config: Config, strict: bool = False) -> ChangeSet:
    """The case's change with only the files the App fetches for `config` (checks.engine.needed_paths). An audit
    case is taken as a pull request that adds every file."""
    if case.base is None:
        changes = {p: FileChange(p, ChangeStatus.ADDED) for p in case.head}
    else:
        changes = dict(changes_between(case.base, case.head))
    want_head, want_base = needed_paths(case.head.keys(), changes, config)
    # The App's second fetch: the files the changed files name (checks.engine.named_paths).
    texts = {p: case.head.get(p) for p in changes if p in want_head}
    want_head |= named_paths(case.head.keys(), texts, changes, config)
    head = SelectedTree(case.head, want_head, "head", strict)
    base = SelectedTree(case.base, want_base, "base", strict) if case.base is not None else None
    return _changeset(case, head, base)


def write_expected(case: Case) -> Path:
    """Write the case's expected.txt from today's findings (or remove it when there are none)."""
    report = run_case(case)
    if report.errors:
        raise SystemExit(f"{case.name}: the run had errors: {report.errors}")
    target = case.folder / EXPECTED_FILE
    lines = [expected_line(f) for f in report.findings]
    if lines:
        target.write_text("\n".join(lines) + "\n")
    elif target.exists():
        target.unlink()
    return target


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m tests.fixture_support", description="Write fixture cases' expected.txt from today's output."
    )
    sub = parser.add_subparsers(dest="command", required=True)
    w = sub.add_parser("write", help="(re)write expected.txt of the named cases (RULE/case, or RULE for all)")
    w.add_argument("cases", nargs="+")
    args = parser.parse_args(argv)
    for name in args.cases:
        folders = (
            [FIXTURES / name]
            if (FIXTURES / name / "head").is_dir()
            else sorted(p.parent for p in (FIXTURES / name).glob("*/head"))
        )
        if not folders:
            print(f"no fixture case {name!r} under {FIXTURES}", file=sys.stderr)
            return 2
        for folder in folders:
            print(write_expected(load_case(folder)).relative_to(FIXTURES))
    return 0


def audit(files: dict[str, str | None], config_text: str | None = None) -> Report:
    """An audit (`check --all`) of a small tree given as {path: text}."""
    config = parse_config(config_text, known_rule_ids()) if config_text else DEFAULT_CONFIG
    return run(ChangeSet(head=MemoryTree(files), audit=True), config)


if __name__ == "__main__":
    raise SystemExit(main())
