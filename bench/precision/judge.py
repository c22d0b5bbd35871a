"""Precision of npu-review on a project's history: a seeded sample of the replay's findings, judged by hand,
and the table of verdicts.

    python bench/precision/judge.py sample REPLAY.json --run after > sample.yml   # the seeded sample to judge
    python bench/precision/judge.py table bench/precision/verl-judged.yml          # rule, findings, judged, ...
    python bench/precision/judge.py comments REPLAY.json                           # inline comments per PR
    python bench/precision/judge.py update JUDGED.yml REPLAY.json --run R          # re-sample, keep old verdicts
    python bench/precision/judge.py kept JUDGED.yml --replay NEW.json              # true findings still there?

The sample takes 8 error/warning findings per rule (all of them for a rule with 8 or fewer), seeded by the
rule id, so that the same replay gives the same sample (`--notices`: the notices instead). `--order hash`
(what `update` uses; `--every` takes all) ranks a rule's findings by a seeded hash of (commit, fingerprint)
and takes the first 8, so that a later replay samples the same findings again wherever they are unchanged and
`update` carries their verdicts over; only new findings (or changed ones: another line, another content) need
judging.
A REPLAY.json may also be the output of `check --all --format json`, with the tree's commit as `--sha`.
Verdicts (in <project>-judged.yml, our own judgement data: sha, rule, path, line, verdict, why, no file content
of the project beyond a short quoted name):
  true     the finding is right and asks for something worth doing;
  false    the finding is wrong (the claim or the suggested fix does not hold at that commit);
  noise    right but not worth an inline comment (a deliberate setting, harmless cruft, the same cause said again);
  unclear  cannot be decided from the files and the project's later history.
Inline comments are the error/warning findings (notices go to the check run only, see README).
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import json
import random
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

import yaml

PER_RULE = 8
ACTIONABLE = ("error", "warning")
VERDICTS = ("true", "false", "noise", "unclear")


def _findings(replay: Path, sha: str = "") -> list[dict[str, Any]]:
    """Every finding of a replay (commit-qualified), or of a `check --all` report (as commit `sha`)."""
    doc = json.loads(replay.read_text())
    out = []
    if "commits" not in doc:
        return [{"sha": sha, "subject": "", **f} for f in doc["findings"]]
    for commit in doc["commits"]:
        for f in commit["findings"]:
            # a corpus report (measure.py --replay-json) names each commit's repository
            where = {"repo": commit["repo"]} if commit.get("repo") else {}
            out.append({"sha": commit["sha"], "subject": commit["subject"], **where, **f})
    return out


def _wanted(f: dict[str, Any], notices: bool) -> bool:
    return (f["severity"] == "notice") if notices else (f["severity"] in ACTIONABLE)


def _rank(f: dict[str, Any]) -> str:
    return hashlib.sha256(f"prec-10-{f['rule']}-{f['sha']}-{f['fingerprint']}".encode()).hexdigest()


def sample(
    replay: Path,
    run: str,
    *,
    order: str = "random",
    notices: bool = False,
    sha: str = "",
    every: bool = False,
    seed: str = "prec-13",
    total: int = 0,
    repo: str = "",
    by_cause: bool = False,
    rules: frozenset[str] = frozenset(),
) -> list[dict[str, Any]]:
    """8 findings per rule (`total`: a seeded sample of that many over all rules instead). With `repo`, each
    entry also carries what a blind judge is given: the repository, severity, message, suggestion and an id."""
    by_rule: dict[str, list[dict[str, Any]]] = defaultdict(list)
    causes: dict[tuple[str, str], dict[str, Any]] = {}
    for f in _findings(replay, sha):
        if not _wanted(f, notices) or (rules and f["rule"] not in rules):
            continue
        if by_cause and f.get("cause"):
            first = causes.get((f["sha"], f["cause"]))
            if first is not None:  # one inline comment per cause: the others are its listed places
                first.setdefault("other_places", []).append(f"{f['path']}:{f['line']}")
                continue
            causes[(f["sha"], f["cause"])] = f = dict(f)
        by_rule[f["rule"]].append(f)
    chosen_all: list[dict[str, Any]] = []
    if total:
        pool = [f for rule in sorted(by_rule) for f in by_rule[rule]]
        chosen_all = pool if len(pool) <= total else random.Random(f"{seed}-all").sample(pool, total)
    for rule in sorted(by_rule) if not total else ():
        items = by_rule[rule]
        if every or len(items) <= PER_RULE:
            chosen_all.extend(items)
        elif order == "hash":
            chosen_all.extend(sorted(items, key=_rank)[:PER_RULE])
        else:
            chosen_all.extend(random.Random(f"{seed}-{rule}").sample(items, PER_RULE))
    picked = []
    for n, f in enumerate(chosen_all, start=1):
        entry: dict[str, Any] = {
            "run": run,
            "sha": f["sha"],
            "rule": "+".join(f.get("rules") or [f["rule"]]),
            "path": f["path"],
            "line": f["line"],
            "fingerprint": f["fingerprint"],
            "verdict": None,
            "why": "",
        }
        if repo:
            entry = {
                "id": f"{run}-{n}",
                "repo": f.get("repo") or repo,
                **entry,
                "end_line": f.get("end_line") or f["line"],
                "severity": f["severity"],
                "message": f["message"],
                "suggestion": f.get("suggestion"),
                "related": f.get("related") or [],
                "other_places_of_this_cause": f.get("other_places", []),
            }
            del entry["verdict"], entry["why"]
        picked.append(entry)
    return picked


def merge(sampled: Path, verdicts: Path) -> list[dict[str, Any]]:
    """A blind judge's verdicts (`id, verdict, why`) joined to the sample they judged (`sample --repo`): the
    entries of a `<project>-blind.yml` (no message text kept: sha, rule, path, line, fingerprint, verdict, why)."""
    given = {e["id"]: e for e in yaml.safe_load(sampled.read_text()) or []}
    out = []
    for v in yaml.safe_load(verdicts.read_text()) or []:
        e = given[v["id"]]
        verdict = str(v["verdict"]).lower()
        if verdict not in VERDICTS:
            raise SystemExit(f"{v['id']}: unknown verdict {v['verdict']!r}")
        out.append(
            {
                "run": e["run"],
                **({"repo": e["repo"]} if e.get("repo") else {}),
                "sha": e["sha"],
                "rule": e["rule"],
                "path": e["path"],
                "line": e["line"],
                "fingerprint": e["fingerprint"],
                "verdict": verdict,
                "why": v.get("why", ""),
            }
        )
    return out


def _key(e: dict[str, Any]) -> tuple[str, str]:
    return (e["sha"], e["fingerprint"])


def update(
    judged: Path, replay: Path, run: str, *, notices: bool = False, sha: str = "", every: bool = False
) -> tuple[list[dict[str, Any]], Counter[str]]:
    """The judged entries with run `run` replaced by a fresh hash-ordered sample of `replay`; a sampled finding
    with the same commit and fingerprint as an entry judged before (in any run) keeps that verdict."""
    old = (yaml.safe_load(judged.read_text()) if judged.exists() else None) or []
    known: dict[tuple[str, str], dict[str, Any]] = {}
    for e in old:
        if e.get("verdict") in VERDICTS:
            known.setdefault(_key(e), e)
    fresh = sample(replay, run, order="hash", notices=notices, sha=sha, every=every)
    stats: Counter[str] = Counter()
    for e in fresh:
        prev = known.get(_key(e))
        if prev is not None:
            e["verdict"], e["why"] = prev["verdict"], prev["why"]
            stats["reused"] += 1
        else:
            stats["to judge"] += 1
    at = next((i for i, e in enumerate(old) if e["run"] == run), len(old))
    before = [e for e in old[:at] if e["run"] != run]
    after = [e for e in old[at:] if e["run"] != run]
    stats["dropped"] = sum(1 for e in old if e["run"] == run) - stats["reused"]
    return before + fresh + after, stats


def kept(judged: Path, replay: Path, runs: set[str], sha: str = "") -> list[tuple[dict[str, Any], str]]:
    """Entries judged true (in `runs`) that `replay` no longer reports at the same commit, rule (alone or merged
    with others, its `rules` list), path and line as an error or warning, each with where it went: "gone",
    "now a notice" (check run only, no inline comment), or "inside lines A-B" when a finding of that rule now spans
    that line from the line above (one finding for the same mistake)."""
    have = set()
    notices = set()
    spans: dict[tuple[str, str, str], list[tuple[int, int]]] = defaultdict(list)
    for f in _findings(replay, sha):
        for rule in f.get("rules") or [f["rule"]]:
            (have if f["severity"] in ACTIONABLE else notices).add((f["sha"], rule, f["path"], f["line"]))
            spans[(f["sha"], rule, f["path"])].append((f["line"], f.get("end_line") or f["line"]))
    entries = yaml.safe_load(judged.read_text()) or []
    lost = []
    for e in entries:
        wanted = e["run"] in runs and e["verdict"] == "true" and (sha or e["sha"]) == e["sha"]
        rules = e["rule"].split("+")
        if not wanted or any((e["sha"], r, e["path"], e["line"]) in have for r in rules):
            continue
        if any((e["sha"], r, e["path"], e["line"]) in notices for r in rules):
            lost.append((e, "now a notice"))
            continue
        inside = [(a, b) for r in rules for a, b in spans[(e["sha"], r, e["path"])] if a <= e["line"] <= b]
        lost.append((e, f"inside lines {inside[0][0]}-{inside[0][1]}" if inside else "gone"))
    return lost


def markdown_table(judged: Path, run: str, replay: Path, *, notices: bool = False, sha: str = "") -> str:
    """Per rule: findings, judged, TP (true), FP (false), noise, unclear, FP% (false of judged)."""
    entries = [e for e in (yaml.safe_load(judged.read_text()) or []) if e["run"] == run]
    counts: Counter[str] = Counter()
    severities: dict[str, set[str]] = defaultdict(set)
    for f in _findings(replay, sha):
        if _wanted(f, notices):
            counts[f["rule"]] += 1
            severities[f["rule"]].add(f["severity"])
    verdicts: dict[str, Counter[str]] = defaultdict(Counter)
    for e in entries:
        verdicts[e["rule"].split("+")[0]][str(e["verdict"])] += 1
    rows = [
        "| rule | severity | findings | judged | TP | FP | noise | unclear | FP% |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    total: Counter[str] = Counter()
    for rule in sorted(set(counts) | set(verdicts)):
        v = verdicts[rule]
        n = sum(v[k] for k in VERDICTS)
        total.update({"findings": counts[rule], "judged": n, **v})
        pct = f"{v['false'] / n:.0%}" if n else "—"
        sev = "/".join(sorted(severities[rule])) or "—"
        rows.append(
            f"| {rule} | {sev} | {counts[rule]} | {n} | {v['true']} | {v['false']} | {v['noise']} | {v['unclear']} "
            f"| {pct} |"
        )
    n = total["judged"]
    rows.append(
        f"| all | | {total['findings']} | {n} | {total['true']} | {total['false']} | {total['noise']} "
        f"| {total['unclear']} | {total['false'] / n:.0%} |"
        if n
        else f"| all | | {total['findings']} | 0 | 0 | 0 | 0 | 0 | — |"
    )
    return "\n".join(rows)


def table(judged: Path, replays: dict[str, Path]) -> str:
    entries = yaml.safe_load(judged.read_text())
    rows = []
    for run, replay in replays.items():
        counts: Counter[str] = Counter()
        for f in _findings(replay):
            if f["severity"] in ACTIONABLE:
                counts[f["rule"]] += 1
        verdicts: dict[str, Counter[str]] = defaultdict(Counter)
        for e in entries:
            if e["run"] == run:
                verdicts[e["rule"].split("+")[0]][e["verdict"]] += 1
        rows.append(f"\n{run}: rule | findings | judged | true | false | noise")
        total: Counter[str] = Counter()
        for rule in sorted(set(counts) | set(verdicts)):
            v = verdicts[rule]
            judged_n = sum(v.values())
            total.update({"findings": counts[rule], "judged": judged_n, **v})
            rows.append(f"{rule} | {counts[rule]} | {judged_n} | {v['true']} | {v['false']} | {v['noise']}")
        share = (total["false"] + total["noise"]) / max(total["judged"], 1)
        rows.append(
            f"all | {total['findings']} | {total['judged']} | {total['true']} | {total['false']} | {total['noise']}"
            f"  (false+noise {share:.1%})"
        )
    return "\n".join(rows)


def comments(replay: Path) -> str:
    """Inline comments per PR: the causes among the error/warning findings of each commit (one comment per cause,
    checks.causes; a finding without a cause id counts alone), its subject carrying the PR number."""
    doc = json.loads(replay.read_text())
    out = []
    for commit in doc["commits"]:
        actionable = [f for f in commit["findings"] if f["severity"] in ACTIONABLE]
        n = len({f.get("cause") or f"{f['path']}:{f['line']}:{f['rule']}" for f in actionable})
        if n:
            m = re.search(r"\(#(\d+)\)\s*$", commit["subject"])
            out.append((n, f"#{m.group(1)}" if m else commit["sha"][:10], commit["subject"]))
    return "\n".join(f"{pr} | {n}" for n, pr, _ in sorted(out, key=lambda r: (-r[0], r[1])))


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("sample")
    s.add_argument("replay", type=Path)
    s.add_argument("--run", required=True)
    t = sub.add_parser("table")
    t.add_argument("judged", type=Path)
    t.add_argument("--replay", action="append", default=[], help="RUN=REPLAY.json")
    s.add_argument("--order", choices=("random", "hash"), default="random")
    s.add_argument("--seed", default="prec-13", help="the sample's seed (record it with the verdicts)")
    s.add_argument("--total", type=int, default=0, help="a seeded sample of N over all rules (`check --all`)")
    s.add_argument("--by-cause", action="store_true", help="one finding per cause (what gets an inline comment)")
    s.add_argument("--repo", default="", help="owner/name: add what a blind judge is given (message, id, ...)")
    s.add_argument("--rules", default="", help="comma-separated rule ids: sample only these")
    m = sub.add_parser("merge", help="join a blind judge's verdicts (id, verdict, why) to the sample they judged")
    m.add_argument("sampled", type=Path)
    m.add_argument("verdicts", type=Path)
    s.add_argument("--notices", action="store_true", help="sample the notices instead of errors and warnings")
    s.add_argument("--sha", default="", help="the commit of a `check --all` report")
    t.add_argument("--markdown", metavar="RUN=REPLAY.json", help="one run as a markdown table with FP%%")
    t.add_argument("--notices", action="store_true")
    t.add_argument("--sha", default="")
    c = sub.add_parser("comments")
    c.add_argument("replay", type=Path)
    u = sub.add_parser("update", help="re-sample a run of JUDGED from a new replay, keeping known verdicts")
    u.add_argument("judged", type=Path)
    u.add_argument("replay", type=Path)
    u.add_argument("--run", required=True)
    u.add_argument("--notices", action="store_true")
    u.add_argument("--sha", default="")
    u.add_argument("--every", action="store_true", help="every finding, no sample (a `check --all` report)")
    k = sub.add_parser("kept", help="list the findings judged true that a new replay no longer reports")
    k.add_argument("judged", type=Path)
    k.add_argument("--replay", type=Path, required=True)
    k.add_argument("--runs", default="before,after", help="comma-separated runs of JUDGED to check")
    k.add_argument("--sha", default="", help="for a `check --all` report: only entries of this commit")
    args = ap.parse_args(argv)
    if args.cmd == "sample":
        picked = sample(
            args.replay,
            args.run,
            order=args.order,
            notices=args.notices,
            sha=args.sha,
            seed=args.seed,
            total=args.total,
            repo=args.repo,
            by_cause=args.by_cause,
            rules=frozenset(r for r in args.rules.split(",") if r),
        )
        yaml.safe_dump(picked, sys.stdout, sort_keys=False, allow_unicode=True, width=200)
    elif args.cmd == "merge":
        yaml.safe_dump(merge(args.sampled, args.verdicts), sys.stdout, sort_keys=False, allow_unicode=True, width=200)
    elif args.cmd == "table" and args.markdown:
        run, replay = args.markdown.split("=", 1)
        print(markdown_table(args.judged, run, Path(replay), notices=args.notices, sha=args.sha))
    elif args.cmd == "table":
        print(table(args.judged, {k: Path(v) for k, v in (r.split("=", 1) for r in args.replay)}))
    elif args.cmd == "update":
        entries, stats = update(
            args.judged, args.replay, args.run, notices=args.notices, sha=args.sha, every=args.every
        )
        old = args.judged.read_text().splitlines(keepends=True) if args.judged.exists() else []
        header = "".join(line for line in itertools.takewhile(lambda x: x.startswith("#"), old))
        body = yaml.safe_dump(entries, sort_keys=False, allow_unicode=True, width=200) if entries else "[]\n"
        args.judged.write_text(header + body)
        print(", ".join(f"{k}: {v}" for k, v in sorted(stats.items())), file=sys.stderr)
    elif args.cmd == "kept":
        lost = kept(args.judged, args.replay, set(args.runs.split(",")), args.sha)
        for e, where in lost:
            print(f"{where}: {e['run']} {e['sha'][:10]} {e['rule']} {e['path']}:{e['line']} ({e['why']})")
        gone = sum(1 for _, where in lost if where == "gone")
        notice = sum(1 for _, where in lost if where == "now a notice")
        print(
            f"{gone} finding(s) judged true are gone, {notice} now a notice, {len(lost) - gone - notice} inside a "
            "longer finding",
            file=sys.stderr,
        )
        return 1 if gone else 0
    else:
        print(comments(args.replay))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
