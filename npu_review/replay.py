"""`npu-review replay`: review each first-parent commit of a history as its own change, to measure precision."""

from __future__ import annotations

import gc
import sys
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TextIO

from npu_review.checks.config import CONFIG_PATH, Config, parse_config
from npu_review.checks.engine import known_rule_ids, run
from npu_review.checks.model import Finding
from npu_review.checks.output import json_text
from npu_review.gitsource import EMPTY_TREE_SHA, Git, GitError, changeset_from_git


@dataclass
class CommitResult:
    sha: str
    date: str
    subject: str
    findings: list[Finding] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)


# Commits reviewed between two passes of the cyclic garbage collector (see replay()).
COLLECT_EVERY = 8


def commits(git: Git, since: str, until: str, paths: Sequence[str]) -> list[tuple[str, str, str, str | None]]:
    """(sha, date, subject, first parent) of the first-parent commits since..until touching `paths`, oldest first."""
    args = ["log", "--first-parent", "--reverse", "--format=%H%x00%ad%x00%s%x00%P", "--date=short"]
    args.append(f"{git.resolve(since)}..{git.resolve(until)}")
    if paths:
        args += ["--", *(f":(glob){p}" for p in paths)]
    out = git._run(args)
    assert out is not None
    rows = []
    for line in out.decode("utf-8", "replace").splitlines():
        sha, date, subject, parents = [*line.split("\0"), "", "", ""][:4]
        rows.append((sha, date, subject, parents.split()[0] if parents.split() else None))
    return rows


def _progress(stream: TextIO, done: int, total: int, started: float) -> None:
    width = 30
    filled = width * done // max(total, 1)
    rate = done / max(time.monotonic() - started, 1e-9)
    stream.write(f"\r[{'#' * filled}{'.' * (width - filled)}] {done}/{total} commits, {rate:.1f}/s")
    stream.flush()


def replay(
    repo: str,
    since: str,
    until: str = "HEAD",
    paths: Sequence[str] = (),
    config: Config | None = None,
    progress: TextIO | None = None,
) -> tuple[list[CommitResult], float]:
    git = Git(repo)
    started = time.monotonic()
    results: list[CommitResult] = []
    try:
        rows = commits(git, since, until, paths)
        for i, (sha, date, subject, parent) in enumerate(rows, start=1):
            try:
                cs, _ = changeset_from_git(repo, parent or EMPTY_TREE_SHA, sha, subject, git=git)
            except GitError as e:
                # One commit git cannot diff (an object missing from a partial mirror) is that commit's
                # problem, said in its entry; the replay goes on with the others.
                results.append(CommitResult(sha, date, subject, [], [f"not reviewed: {e}"]))
                if progress is not None:
                    _progress(progress, i, len(rows), started)
                continue
            cfg = config
            if cfg is None:
                try:
                    cfg = parse_config(cs.base.read(CONFIG_PATH), known_rule_ids())
                except ValueError:
                    cfg = parse_config(None, known_rule_ids())
            report = run(cs, cfg, clock=time.monotonic)
            results.append(CommitResult(sha, date, subject, report.findings, report.errors))
            del cs, report
            if i % COLLECT_EVERY == 0:
                # A change's review leaves reference cycles (its context's memos, parse trees): the CLI turns the
                # cyclic collector off for a run, so without this a replay of verl's 413 Ascend commits grew to
                # 5.6 GB. Every few commits keeps it to a few of them, for a small share of the CPU.
                gc.collect()
            if progress is not None:
                _progress(progress, i, len(rows), started)
    finally:
        git.close()
        if progress is not None:
            progress.write("\n")
    return results, time.monotonic() - started


def per_rule(results: Sequence[CommitResult]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = {}
    for r in results:
        for f in r.findings:
            out.setdefault(f.rule, Counter())[f.severity.label] += 1
    return dict(sorted(out.items()))


def render_text(results: Sequence[CommitResult], seconds: float) -> str:
    lines = []
    for r in results:
        c = Counter(f.severity.label for f in r.findings)
        mark = "" if not r.findings else "  " + " ".join(sorted({f.rule for f in r.findings}))
        lines.append(f"{r.sha[:10]} {r.date} E{c['error']} W{c['warning']} N{c['notice']} {r.subject[:70]}{mark}")
        lines.extend(f"    {f.path}:{f.line}: {f.severity.label} {f.rule}: {f.message[:140]}" for f in r.findings)
        lines.extend(f"    npu-review: {e}" for e in r.errors)
    lines.append("")
    lines.append("rule     error  warning  notice  commits")
    for rule, counts in per_rule(results).items():
        n_commits = sum(1 for r in results if any(f.rule == rule for f in r.findings))
        lines.append(f"{rule}   {counts['error']:5}  {counts['warning']:7}  {counts['notice']:6}  {n_commits:7}")
    with_findings = sum(1 for r in results if r.findings)
    noun = "commit" if len(results) == 1 else "commits"
    lines.append(f"{len(results)} {noun} replayed in {seconds:.1f} s; {with_findings} with findings")
    return "\n".join(lines) + "\n"


def render_json(results: Sequence[CommitResult], seconds: float) -> str:
    doc = {
        "version": 1,
        "seconds": round(seconds, 3),
        "commits": [
            {
                "sha": r.sha,
                "date": r.date,
                "subject": r.subject,
                "findings": [f.to_json() for f in r.findings],
                "errors": r.errors,
            }
            for r in results
        ],
        "rules": {rule: dict(c) for rule, c in per_rule(results).items()},
    }
    return json_text(doc)


def progress_stream() -> TextIO | None:
    return sys.stderr if sys.stderr.isatty() else None
