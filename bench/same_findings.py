"""Do two versions of npu-review give the same findings? The before/after check of a refactor.

    python bench/same_findings.py snapshot --out DIR [--code DIR]   # record findings of the code in DIR
    python bench/same_findings.py compare BEFORE AFTER               # compare two snapshots, exit 1 on a difference

A snapshot holds, for the code under test (default: this checkout), run as `python -m npu_review` with the rules'
time budget lifted (it counts wall time, which a loaded machine stretches):
- `check --all --format json` on each repository given with --repo NAME=PATH (default: the verl and vllm-ascend
  mirrors under /work/.mirror, where they exist);
- `replay --format json` over verl's Ascend history (the first-parent commits that touch Ascend Dockerfiles,
  workflows, NPU scripts or the Ascend tutorial), since the first Ascend Dockerfile or workflow.

`compare` drops what is not a finding (timings) and prints every finding only one side has, grouped by rule.
No config file is used in any run. Nothing is sent anywhere.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
MIRRORS = Path("/work/.mirror")
DEFAULT_REPOS = {
    "verl": MIRRORS / "verl-project+verl" / "repo",
    "vllm-ascend": MIRRORS / "vllm-project+vllm-ascend" / "repo",
}
# verl's Ascend material: what its Ascend history is made of.
ASCEND_PATHS = (
    "docker/ascend/**",
    ".github/workflows/*ascend*",
    ".github/workflows/*npu*",
    "**/*npu*",
    "**/*ascend*",
    "docs/ascend_tutorial/**",
)


# `python -m npu_review` with the rules' time budget lifted: the budget counts wall time, so on a loaded machine a
# rule stopped in one snapshot and not in the other would show as findings gone or new (and an error).
_UNBUDGETED = """
import inspect, sys
import npu_review.checks.engine as engine
names = list(inspect.signature(engine.run).parameters)
if "rule_budget_s" in names and engine.run.__defaults__:
    defaults = list(engine.run.__defaults__)
    defaults[names.index("rule_budget_s") - (len(names) - len(defaults))] = float("inf")
    engine.run.__defaults__ = tuple(defaults)
from npu_review.cli import main
sys.exit(main(sys.argv[1:]))
"""


def _run(code: Path, args: list[str], out: Path) -> None:
    env = dict(os.environ, PYTHONPATH=str(code))
    with out.open("w") as fh:
        proc = subprocess.run(
            [sys.executable, "-c", _UNBUDGETED, *args], cwd=code, env=env, stdout=fh, stderr=subprocess.PIPE, text=True
        )
    if proc.returncode not in (0, 1):
        raise SystemExit(f"{' '.join(args[:1])} failed ({proc.returncode}): {proc.stderr.strip()[-500:]}")


def snapshot(code: Path, out: Path, repos: dict[str, Path], replay: bool) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for name, repo in repos.items():
        if not repo.exists():
            print(f"skip {name}: {repo} not found", file=sys.stderr)
            continue
        _run(
            code,
            ["check", "--repo", str(repo), "--all", "--format", "json", "--fail-on", "never"],
            out / f"{name}-all.json",
        )
        print(f"{name}: check --all done", file=sys.stderr)
    verl = repos.get("verl")
    if replay and verl is not None and verl.exists():
        first = subprocess.run(
            [
                "git",
                "-C",
                str(verl),
                "log",
                "--first-parent",
                "--format=%H",
                "--",
                "docker/ascend/**",
                ".github/workflows/*ascend*",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.split()[-1]
        _run(
            code,
            ["replay", "--repo", str(verl), "--since", f"{first}~1", "--paths", *ASCEND_PATHS, "--format", "json"],
            out / "verl-replay.json",
        )
        print("verl: replay done", file=sys.stderr)


def _findings(path: Path) -> Counter[str]:
    """Every finding of a snapshot file as one canonical JSON line (commit-qualified for a replay)."""
    doc: dict[str, Any] = json.loads(path.read_text())
    lines: Counter[str] = Counter()
    if "commits" in doc:
        for commit in doc["commits"]:
            for f in commit["findings"]:
                lines[json.dumps({"commit": commit["sha"], **f}, sort_keys=True)] += 1
            for e in commit.get("errors") or []:
                lines[
                    json.dumps(
                        {
                            "commit": commit["sha"],
                            "rule": "(error)",
                            "path": "",
                            "line": 0,
                            "severity": "",
                            "message": str(e),
                        },
                        sort_keys=True,
                    )
                ] += 1
    else:
        for f in doc["findings"]:
            lines[json.dumps(f, sort_keys=True)] += 1
    return lines


def compare(before: Path, after: Path) -> int:
    differ = 0
    for b in sorted(before.glob("*.json")):
        a = after / b.name
        if not a.exists():
            print(f"{b.name}: missing in {after}")
            differ += 1
            continue
        old, new = _findings(b), _findings(a)
        gone, added = old - new, new - old
        print(
            f"{b.name}: {sum(old.values())} before, {sum(new.values())} after, {sum(gone.values())} gone, "
            f"{sum(added.values())} new"
        )
        for sign, diff in (("-", gone), ("+", added)):
            for line in sorted(diff):
                f = json.loads(line)
                where = f"{f.get('commit', '')[:10]} " if "commit" in f else ""
                print(f"  {sign} {where}{f['rule']} {f['path']}:{f['line']} {f['severity']}: {f['message'][:140]}")
        differ += sum(gone.values()) + sum(added.values())
    return 1 if differ else 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    s = sub.add_parser("snapshot")
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--code", type=Path, default=ROOT, help="the npu-review checkout to run (default: this one)")
    s.add_argument("--repo", action="append", default=[], metavar="NAME=PATH")
    s.add_argument("--no-replay", action="store_true")
    c = sub.add_parser("compare")
    c.add_argument("before", type=Path)
    c.add_argument("after", type=Path)
    args = p.parse_args(argv)
    if args.cmd == "snapshot":
        repos = dict(DEFAULT_REPOS)
        if args.repo:
            repos = {k: Path(v) for k, v in (r.split("=", 1) for r in args.repo)}
        snapshot(args.code.resolve(), args.out, repos, not args.no_replay)
        return 0
    return compare(args.before, args.after)


if __name__ == "__main__":
    sys.exit(main())
