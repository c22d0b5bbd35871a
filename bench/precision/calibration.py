"""The per-rule calibration table of docs/calibration.md, from the blind verdicts and the corpus measurement.

    python bench/precision/calibration.py --measure m.json [--measure held-out.json] \\
        --blind bench/precision/verl-blind.yml --blind bench/precision/vllm-ascend-blind.yml \\
        --blind bench/precision/others-blind.yml --replay-runs replay --all-runs r3-all,r2-all-

Columns: the blind replay verdicts (runs whose name starts with one of --replay-runs), the blind `--all` verdicts
(the latest round: runs starting with one of --all-runs), and the labeled mistakes each rule catches (a label
counts for every rule whose error or warning caught it). Verdicts are `true / noise / false`.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter, defaultdict
from pathlib import Path

import yaml


def verdicts(files: list[Path], prefixes: tuple[str, ...]) -> dict[str, Counter[str]]:
    out: dict[str, Counter[str]] = defaultdict(Counter)
    for f in files:
        for e in yaml.safe_load(f.read_text()) or []:
            if e["run"].startswith(prefixes):
                for rule in e["rule"].split("+")[:1]:
                    out[rule][str(e["verdict"]).lower()] += 1
    return out


def caught(measures: list[Path]) -> dict[str, int]:
    out: Counter[str] = Counter()
    for m in measures:
        for project in json.loads(m.read_text()):
            for mistake in project["mistakes"]:
                for rule in sorted({c.split()[0] for c in mistake.get("caught_by") or []}):
                    out[rule] += 1
    return dict(out)


def cell(c: Counter[str] | None) -> str:
    if not c:
        return "—"
    return f"{c['true']} / {c['noise']} / {c['false']}"


def table(replay: dict[str, Counter[str]], audit: dict[str, Counter[str]], labels: dict[str, int]) -> str:
    rows = [
        "| rule | blind replays: true / noise / false | blind `--all`: true / noise / false "
        "| labeled mistakes caught |",
        "|---|---|---|---|",
    ]
    for rule in sorted(set(replay) | set(audit) | set(labels)):
        rows.append(f"| {rule} | {cell(replay.get(rule))} | {cell(audit.get(rule))} | {labels.get(rule, '—')} |")
    return "\n".join(rows)


def main(argv: list[str]) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--measure", type=Path, action="append", default=[])
    ap.add_argument("--blind", type=Path, action="append", default=[])
    ap.add_argument("--replay-runs", default="replay")
    ap.add_argument("--all-runs", default="r3-all")
    args = ap.parse_args(argv)
    replay = verdicts(args.blind, tuple(args.replay_runs.split(",")))
    audit = verdicts(args.blind, tuple(args.all_runs.split(",")))
    print(table(replay, audit, caught(args.measure)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
