"""Fixture cases: a folder with `head/` (and optionally `base/`) trees whose lines carry `expect: NPUxxx` markers.

Layout: tests/fixtures/<RULE or topic>/<case>/head/<repo path>, optional base/<repo path>, optional case.yml
(`title:` the PR title). With a base/ tree the case is reviewed as the change base..head, else as an audit (--all).
A marker `# expect: NPU301` (or `expect: NPU301, NPU306`, any comment syntax) is cut from its line before the
engine reads the file, and says that exactly this rule reports on exactly that line. Cases compare the whole set
of (rule, path, line) across all rules: a finding no marker predicts fails the case too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import yaml

from checks.config import DEFAULT_CONFIG, parse_config
from checks.diffing import changes_between
from checks.engine import Report, known_rule_ids, run
from checks.model import ChangeSet, MemoryTree

FIXTURES = Path(__file__).parent / "fixtures"
_MARK = re.compile(r"[ \t]*(?:#|<!--|//)?[ \t]*expect:[ \t]*(NPU\d{3}(?:[ \t]*,[ \t]*NPU\d{3})*)[ \t]*(?:-->)?[ \t]*$")

Expected = set[tuple[str, str, int]]


@dataclass
class Case:
    name: str
    base: dict[str, str | None] | None
    head: dict[str, str | None]
    expected: Expected
    title: str
    config_text: str | None


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
    return Case(
        name=folder.relative_to(FIXTURES).as_posix(),
        base=base,
        head=head,
        expected=expected,
        title=str(meta.get("title", "")),
        config_text=meta.get("config"),
    )


def all_cases() -> list[Path]:
    return sorted(p.parent for p in FIXTURES.glob("*/*/head"))


def run_case(case: Case) -> Report:
    config = parse_config(case.config_text, known_rule_ids()) if case.config_text else DEFAULT_CONFIG
    if case.base is None:
        cs = ChangeSet(head=MemoryTree(case.head), audit=True, title=case.title)
    else:
        cs = ChangeSet(
            head=MemoryTree(case.head),
            base=MemoryTree(case.base),
            changes=changes_between(case.base, case.head),
            title=case.title,
        )
    return run(cs, config)


def actual(report: Report) -> Expected:
    return {(f.rule, f.path, f.line) for f in report.findings}


def audit(files: dict[str, str | None], config_text: str | None = None) -> Report:
    """An audit (`check --all`) of a small tree given as {path: text}."""
    config = parse_config(config_text, known_rule_ids()) if config_text else DEFAULT_CONFIG
    return run(ChangeSet(head=MemoryTree(files), audit=True), config)
