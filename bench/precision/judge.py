"""Precision of npu-review on verl's Ascend history: a seeded sample of the replay's error/warning findings,
judged by hand, and the table of verdicts.

    python bench/precision/judge.py sample REPLAY.json --run after > sample.yml   # the seeded sample to judge
    python bench/precision/judge.py table bench/precision/verl-judged.yml          # rule, findings, judged, ...
    python bench/precision/judge.py comments REPLAY.json                           # inline comments per PR

The sample takes 8 error/warning findings per rule (all of them for a rule with 8 or fewer), seeded by the
rule id, so that the same replay gives the same sample. Verdicts (in verl-judged.yml, our own judgement data:
sha, rule, path, line, verdict, why, no verl file content beyond a short quoted line):
  true   the finding is right and asks for something worth doing;
  false  the finding is wrong (the claim or the suggested fix does not hold at that commit);
  noise  right but not worth an inline comment (a deliberate setting, harmless cruft, the same cause said again).
Inline comments are the error/warning findings (notices go to the check run only, see README).
"""

from __future__ import annotations

import argparse
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


def _findings(replay: Path) -> list[dict[str, Any]]:
    doc = json.loads(replay.read_text())
    out = []
    for commit in doc["commits"]:
        for f in commit["findings"]:
            out.append({"sha": commit["sha"], "subject": commit["subject"], **f})
    return out


def sample(replay: Path, run: str) -> list[dict[str, Any]]:
    by_rule: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for f in _findings(replay):
        if f["severity"] in ACTIONABLE:
            by_rule[f["rule"]].append(f)
    picked = []
    for rule in sorted(by_rule):
        items = by_rule[rule]
        chosen = items if len(items) <= PER_RULE else random.Random(f"prec-13-{rule}").sample(items, PER_RULE)
        for f in chosen:
            picked.append(
                {
                    "run": run,
                    "sha": f["sha"],
                    "rule": "+".join(f.get("rules") or [f["rule"]]),
                    "path": f["path"],
                    "line": f["line"],
                    "fingerprint": f["fingerprint"],
                    "verdict": None,
                    "why": "",
                }
            )
    return picked


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
    """Inline comments per PR: error/warning findings of each commit (its subject carries the PR number)."""
    doc = json.loads(replay.read_text())
    out = []
    for commit in doc["commits"]:
        n = sum(1 for f in commit["findings"] if f["severity"] in ACTIONABLE)
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
    c = sub.add_parser("comments")
    c.add_argument("replay", type=Path)
    args = ap.parse_args(argv)
    if args.cmd == "sample":
        yaml.safe_dump(sample(args.replay, args.run), sys.stdout, sort_keys=False, allow_unicode=True, width=200)
    elif args.cmd == "table":
        print(table(args.judged, {k: Path(v) for k, v in (r.split("=", 1) for r in args.replay)}))
    else:
        print(comments(args.replay))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
