"""Recall on the labeled corpus: review each labeled introducing commit as its pull request would be reviewed,
and each clean commit, and say which mistakes an error or warning catches.

    python bench/corpus/measure.py bench/corpus/<owner>+<name>.yml [--repo DIR] [--json OUT] [--misses]
    python bench/corpus/measure.py bench/corpus/*.yml --table          # the per-project and per-kind table
    python bench/corpus/measure.py LABELS --replay-json OUT.json       # every finding of every review, as a
                                                                       # replay report (for judge.py sample)

The repository defaults to the fetched mirror (/work/.mirror/<owner>+<name>/repo), reviewed under the label file's
`repo:` name, as the App knows it from the webhook (`--anonymous`: as a tree of unknown name, which is how every
figure before 2026-12-06 15:00 UTC was measured, a fetched mirror having no remote). No config file is used: the
default configuration, as a new user gets it (a `.github/npu-review.yml` in the project at the commit's parent
would be read, as `npu-review check` reads it; none of the corpus projects has one). A mistake is caught when an
error or warning lies on its path with its line among the finding's lines, or names that place among the
finding's related places, for the label's own place or any place under `also:` (README.md of this folder).
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from npu_review.checks.config import CONFIG_PATH, parse_config  # noqa: E402
from npu_review.checks.engine import known_rule_ids, run  # noqa: E402
from npu_review.checks.model import Finding  # noqa: E402
from npu_review.gitsource import EMPTY_TREE_SHA, Git, GitError, changeset_from_git  # noqa: E402

MIRRORS = Path("/work/.mirror")
ACTIONABLE = ("error", "warning")


@dataclass
class Outcome:
    label: dict[str, Any]
    caught_by: list[str] = field(default_factory=list)  # "NPU301 path:line"
    findings: int = 0  # errors and warnings of the review
    error: str = ""


def places(label: dict[str, Any]) -> list[tuple[str, int, int]]:
    out = [(label["path"], int(label["line"]), int(label.get("end_line") or label["line"]))]
    for extra in label.get("also") or ():
        out.append((extra["path"], int(extra["line"]), int(extra.get("end_line") or extra["line"])))
    return out


def catches(f: Finding, where: list[tuple[str, int, int]]) -> bool:
    for path, first, last in where:
        if f.path == path and f.line <= last and first <= f.end_line:
            return True
        if any(r.path == path and first <= r.line <= last for r in f.related):
            return True
    return False


def review(git: Git, repo: str, sha: str, name: str = "") -> list[Finding]:
    """The commit reviewed as its pull request. With `name` (owner/name), the review knows which repository it
    is, as the App does from the webhook's payload and the CLI from a clone's remote (a fetched mirror has no
    remote); without, as an anonymous tree."""
    parent = git._run(["rev-parse", "--verify", "--quiet", f"{sha}^"], check=False)
    base = parent.decode().strip() if parent else EMPTY_TREE_SHA
    cs, _ = changeset_from_git(repo, base, sha, git=git)
    if name and not cs.repository:
        cs = dataclasses.replace(cs, repository=name)
    config = parse_config(cs.base.read(CONFIG_PATH), known_rule_ids())
    return run(cs, config, clock=time.monotonic).findings


def measure(
    label_file: Path, repo: str | None, commits: list[dict[str, Any]] | None = None, anonymous: bool = False
) -> dict[str, Any]:
    doc = yaml.safe_load(label_file.read_text())
    name = doc["repo"]
    repo = repo or str(MIRRORS / name.replace("/", "+") / "repo")
    git = Git(repo)
    outcomes: list[Outcome] = []
    reviews: dict[str, list[Finding]] = {}

    def reviewed(sha: str) -> list[Finding]:
        if sha not in reviews:
            reviews[sha] = review(git, repo, sha, "" if anonymous else name)
            if commits is not None:
                subject = git._run(["log", "-1", "--format=%s", sha], check=False).decode().strip()
                commits.append(
                    {"sha": sha, "subject": subject, "repo": name, "findings": [f.to_json() for f in reviews[sha]]}
                )
        return reviews[sha]

    for label in doc.get("mistakes") or ():
        out = Outcome(label)
        intro = str(label.get("intro") or "")
        if not intro or intro == "unknown":
            out.error = "intro unknown"
            outcomes.append(out)
            continue
        try:
            reviewed(intro)
        except Exception as exc:  # a commit the mirror lacks, a broken history: say so, go on
            out.error = f"{type(exc).__name__}: {exc}"
            outcomes.append(out)
            continue
        actionable = [f for f in reviews[intro] if f.severity.label in ACTIONABLE]
        out.findings = len(actionable)
        where = places(label)
        out.caught_by = [f"{f.rule} {f.path}:{f.line}" for f in actionable if catches(f, where)]
        outcomes.append(out)
    clean: list[dict[str, Any]] = []
    for sha in doc.get("clean") or ():
        try:
            found = [f for f in reviewed(str(sha)) if f.severity.label in ACTIONABLE]
        except Exception as exc:
            clean.append({"sha": sha, "error": f"{type(exc).__name__}: {exc}", "findings": []})
            continue
        clean.append({"sha": sha, "findings": [f"{f.rule} {f.severity.label} {f.path}:{f.line}" for f in found]})
    return {
        "repo": name,
        "mistakes": [
            {
                "id": o.label["id"],
                "kind": str(o.label.get("kind", "other")).split(":")[0],
                "intro": o.label.get("intro"),
                "path": o.label["path"],
                "line": o.label["line"],
                "caught_by": o.caught_by,
                "findings": o.findings,
                "error": o.error,
                "reason": o.label.get("reason", ""),
            }
            for o in outcomes
        ],
        "clean": clean,
    }


def summary(result: dict[str, Any]) -> tuple[int, int, int, int]:
    """(caught, labeled with a known intro, clean commits, clean commits with an error or warning)."""
    counted = [m for m in result["mistakes"] if not m["error"]]
    caught = sum(1 for m in counted if m["caught_by"])
    noisy = sum(1 for c in result["clean"] if c["findings"])
    return caught, len(counted), len(result["clean"]), noisy


def table(results: list[dict[str, Any]]) -> str:
    rows = ["| project | caught / labeled | recall | clean commits with an error or warning |", "|---|---|---|---|"]
    kinds: dict[str, Counter[str]] = defaultdict(Counter)
    for r in results:
        caught, counted, clean, noisy = summary(r)
        pct = f"{100 * caught / counted:.0f}%" if counted else "-"
        rows.append(f"| {r['repo']} | {caught} / {counted} | {pct} | {noisy} of {clean} |")
        for m in r["mistakes"]:
            if not m["error"]:
                kinds[m["kind"]]["labeled"] += 1
                kinds[m["kind"]]["caught"] += bool(m["caught_by"])
    rows += ["", "| kind | caught / labeled |", "|---|---|"]
    for kind, c in sorted(kinds.items(), key=lambda kv: -kv[1]["labeled"]):
        rows.append(f"| {kind} | {c['caught']} / {c['labeled']} |")
    return "\n".join(rows)


def misses(result: dict[str, Any]) -> str:
    lines = []
    for m in result["mistakes"]:
        if m["error"]:
            lines.append(f"  ? {m['id']} {m['kind']} {m['path']}:{m['line']}: {m['error']}")
        elif not m["caught_by"]:
            lines.append(f"  - {m['id']} {m['kind']} {m['path']}:{m['line']} ({m['findings']} other): {m['reason']}")
    for c in result["clean"]:
        if c["findings"] or c.get("error"):
            lines.append(f"  ! clean {str(c['sha'])[:10]}: {c.get('error') or '; '.join(c['findings'])}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("labels", nargs="+", type=Path)
    ap.add_argument("--repo", help="the repository (one label file only); default: the fetched mirror")
    ap.add_argument("--json", type=Path, help="write the results as JSON")
    ap.add_argument("--misses", action="store_true", help="list every miss and every noisy clean commit")
    ap.add_argument("--table", action="store_true", help="print the per-project and per-kind table")
    ap.add_argument("--replay-json", type=Path, help="write every finding of every review as a replay report")
    ap.add_argument(
        "--anonymous",
        action="store_true",
        help="review without the repository's name (as measured before 2026-12-06 15:00: a mirror has no remote)",
    )
    args = ap.parse_args(argv)
    if args.repo and len(args.labels) > 1:
        ap.error("--repo goes with one label file")
    results = []
    commits: list[dict[str, Any]] | None = [] if args.replay_json else None
    skipped = []
    for path in args.labels:
        try:
            r = measure(path, args.repo, commits, anonymous=args.anonymous)
        except GitError as exc:  # a mirror not fetched here: say so, measure the others
            print(f"{path}: skipped: {exc}", file=sys.stderr)
            skipped.append(str(path))
            continue
        results.append(r)
        caught, counted, clean, noisy = summary(r)
        print(f"{r['repo']}: {caught}/{counted} caught, {noisy} of {clean} clean commits with an error or warning")
        if args.misses:
            print(misses(r))
    if args.table:
        print(table(results))
    if args.json:
        args.json.write_text(json.dumps(results, indent=1))
    if args.replay_json:
        args.replay_json.write_text(json.dumps({"version": 1, "commits": commits}, indent=1))
    if skipped:
        print(f"{len(skipped)} label file(s) skipped (no repository): {', '.join(skipped)}", file=sys.stderr)
    return 1 if skipped else 0


if __name__ == "__main__":
    sys.exit(main())
