"""Engine throughput: `npu-review check --all` over a generated 10,000-file tree shaped like verl's Ascend side,
and over verl's HEAD when its clone is here. Reports files per second and the CLI process's peak RSS.

    /work/venv/bin/python bench/engine.py [--files 10000] [--runs 3] [--profile] [--json bench/out/engine.json]
    /work/venv/bin/python bench/engine.py --base-code DIR [--runs 7] [--no-synthetic]   # DIR's code vs this one
    /work/venv/bin/python bench/engine.py --floor [--runs 5]          # npu-review --all vs bench/floor.py, in turn
    /work/venv/bin/python bench/engine.py --change 2500,40000 [--runs 5]  # one 3-file change on two tree sizes

Targets: >= 2,000 files/s, peak RSS < 200 MB. Each run is a fresh `python -m npu_review check --repo DIR --all
--format json` subprocess, so the wall time includes interpreter start-up, rule import, git reads and output.

With `--base-code DIR` (another checkout of npu-review, e.g. a `git worktree` at an older commit), each tree is
checked by DIR's code and by this checkout's in turn, run after run (so that load on a shared machine falls on
both alike), with the default jobs and with `--jobs 1`; the table gives the median, fastest and slowest wall and
CPU time of each, and current / base. DIR's code runs as `python -m npu_review` with DIR on PYTHONPATH, under this
interpreter, byte-compiled first like this checkout. These runs sample no memory, so that the sampler takes no
CPU from them.

With `--floor`, each tree's `check --all` (default jobs) alternates with bench/floor.py on the same tree (one `git
cat-file --batch` over every blob, the C YAML loader on every YAML file, `ast.parse` on every Python file: what any
tool reading those files pays, in one process): the medians of both and npu-review / floor, wall and CPU.

With `--change N,M`, a generated tree of each size gets the same 3-file Ascend change (treegen.change: an Ascend
workflow that pulls an image, an Ascend Dockerfile, an NPU launch script), and `check --base HEAD~1` runs on the
trees in turn, run after run: the medians, the larger tree's / the smaller's (the change should cost what it
touches, not what the tree holds), and each tree's `check --all` peak RSS (sampled, one run each).
"""

from __future__ import annotations

import argparse
import compileall
import hashlib
import io
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import ROOT, VERL, load_note, table, write_json
from treegen import change, commit, generate

TARGET_FILES_PER_S = 2000.0
TARGET_PEAK_MB = 200.0


def cli_command(repo: Path, jobs: int = 0) -> list[str]:
    cmd = [sys.executable, "-m", "npu_review", "check", "--repo", str(repo), "--all", "--format", "json"]
    return cmd + ["--fail-on", "never"] + (["--jobs", str(jobs)] if jobs else [])


def _status_kb(pid: int, fields: tuple[str, ...]) -> dict[str, int]:
    out = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        name = line.split(":", 1)[0]
        if name in fields:
            out[name] = int(line.split()[1])
    return out


def _tree(pid: int) -> list[int]:
    """The process and all its descendants now."""
    found, todo = [], [pid]
    while todo:
        p = todo.pop()
        found.append(p)
        try:
            for task in Path(f"/proc/{p}/task").iterdir():
                todo.extend(int(c) for c in (task / "children").read_text().split())
        except (OSError, ValueError):
            continue  # gone meanwhile
    return found


def _pss_kb(pid: int) -> int:
    """Proportional set size (pages a forked worker still shares with its parent counted once, split between
    them), else the RSS."""
    try:
        for line in Path(f"/proc/{pid}/smaps_rollup").read_text().splitlines():
            if line.startswith("Pss:"):
                return int(line.split()[1])
    except OSError:
        pass
    return _status_kb(pid, ("VmRSS",)).get("VmRSS", 0)


class TreeRss(threading.Thread):
    """Samples a process tree every 50 ms: the sum of its PSS (with worker processes, the memory the run takes
    is the sum over them) and each process's VmHWM (its own peak RSS since exec; ru_maxrss from wait4 would
    include this benchmark's own size at fork). Reading smaps_rollup costs the kernel a page-table walk,
    hence the coarse period."""

    def __init__(self, pid: int) -> None:
        super().__init__(daemon=True)
        self.pid, self.peak_kb, self.hwm_kb, self.stop = pid, 0, 0, threading.Event()

    def run(self) -> None:
        while not self.stop.wait(0.05):
            total = 0
            for p in _tree(self.pid):
                try:
                    total += _pss_kb(p)
                    self.hwm_kb = max(self.hwm_kb, _status_kb(p, ("VmHWM",)).get("VmHWM", 0))
                except (OSError, ValueError):
                    continue
            self.peak_kb = max(self.peak_kb, total)


def _timed(cmd: list[str], cwd: Path | None = None, env: dict[str, str] | None = None) -> dict[str, float]:
    """One whole-process run: wall time and the CPU of the process and what it reaped (wait4), output dropped."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, cwd=cwd, env=env)
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - start
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):
        raise RuntimeError(f"{' '.join(cmd[:4])} exited {code}: {err.decode(errors='replace')[-2000:]}")
    return {"wall_s": wall, "cpu_s": usage.ru_utime + usage.ru_stime}


def _medians(runs: list[dict[str, float]]) -> dict[str, float]:
    return {k: statistics.median(r[k] for r in runs) for k in ("wall_s", "cpu_s")}


def floor_ratio(name: str, repo: Path, runs: int) -> dict[str, Any]:
    """`check --all` and bench/floor.py on `repo`, alternating; medians and their ratio."""
    floor_cmd = [sys.executable, str(Path(__file__).resolve().parent / "floor.py"), str(repo)]
    ours, floors = [], []
    for _ in range(runs):
        ours.append(_timed(cli_command(repo)))
        floors.append(_timed(floor_cmd))
    a, b = _medians(ours), _medians(floors)
    return {
        "name": name,
        "runs": runs,
        "npu_review": a,
        "floor": b,
        "ratio_wall": a["wall_s"] / b["wall_s"],
        "ratio_cpu": a["cpu_s"] / b["cpu_s"],
    }


def change_cost(sizes: list[int], runs: int, seed: int, tmp: Path) -> dict[str, Any]:
    """The same 3-file change reviewed on a generated tree of each size, the trees in turn run after run."""
    trees: list[tuple[int, Path, list[str]]] = []
    for n in sizes:
        root = tmp / f"change-{n}"
        root.mkdir()
        generate(root, n, seed)
        commit(root)
        trees.append((n, root, change(root)))
        print(f"generated the {n:,}-file tree and its change", file=sys.stderr)
    timings: dict[int, list[dict[str, float]]] = {n: [] for n in sizes}
    for _ in range(runs):
        for n, root, _paths in trees:
            cmd = [sys.executable, "-m", "npu_review", "check", "--repo", str(root), "--base", "HEAD~1"]
            timings[n].append(_timed([*cmd, "--format", "json", "--fail-on", "never"]))
    rows = []
    for n, root, paths in trees:
        peak = run_cli(root)["peak_rss_mb"]  # the audit's largest process, for the memory target
        rows.append({"files": n, "changed": paths, "runs": runs, **_medians(timings[n]), "all_peak_rss_mb": peak})
    small, large = rows[0], rows[-1]
    return {
        "trees": rows,
        "ratio_wall": large["wall_s"] / small["wall_s"],
        "ratio_cpu": large["cpu_s"] / small["cpu_s"],
    }


def main_extra(args: argparse.Namespace) -> int:
    """--floor and --change."""
    started = os.getloadavg()
    for package in ("checks", "npu_review"):
        compileall.compile_dir(str(ROOT / package), quiet=1)
    out: dict[str, Any] = {"benchmark": "engine-floor-change"}
    with tempfile.TemporaryDirectory(prefix="npu-review-bench-") as tmp:
        if args.floor:
            rows = []
            if not args.no_synthetic:
                synth = Path(tmp, "synthetic")
                synth.mkdir()
                generate(synth, args.files, args.seed)
                commit(synth)
                rows.append(floor_ratio(f"synthetic ({args.files:,} files)", synth, args.runs))
            if not args.no_verl and args.verl.exists():
                rows.append(floor_ratio("verl HEAD", args.verl, args.runs))
            out["floor"] = rows
            print(
                table(
                    [
                        "tree",
                        "runs",
                        "npu-review wall s",
                        "floor wall s",
                        "wall ratio",
                        "npu-review cpu s",
                        "floor cpu s",
                        "cpu ratio",
                    ],
                    [
                        [
                            r["name"],
                            r["runs"],
                            r["npu_review"]["wall_s"],
                            r["floor"]["wall_s"],
                            round(r["ratio_wall"], 2),
                            r["npu_review"]["cpu_s"],
                            r["floor"]["cpu_s"],
                            round(r["ratio_cpu"], 2),
                        ]
                        for r in rows
                    ],
                )
            )
            print("check --all (default jobs) and bench/floor.py alternate; medians; ratio = npu-review / floor")
        if args.change:
            sizes = sorted(int(n) for n in args.change.split(","))
            result = change_cost(sizes, args.runs, args.seed, Path(tmp))
            out["change"] = result
            print(
                table(
                    ["tree files", "wall s", "cpu s", "--all peak RSS MB", "changed"],
                    [
                        [r["files"], r["wall_s"], r["cpu_s"], round(r["all_peak_rss_mb"], 1), ", ".join(r["changed"])]
                        for r in result["trees"]
                    ],
                )
            )
            print(
                f"check --base HEAD~1 on each tree in turn, median of {args.runs} runs; largest / smallest tree: "
                f"wall {result['ratio_wall']:.2f}, cpu {result['ratio_cpu']:.2f}"
            )
    print(load_note(started))
    write_json(args.json, out, started)
    return 0


def run_cli(repo: Path, jobs: int = 0, code: Path | None = None, sample: bool = True) -> dict[str, Any]:
    """One CLI run as a child process; wall time, its own rusage (wait4: this child and what it reaped), summary.
    With `code`, that checkout's npu-review runs instead of this one. Without `sample`, no memory is sampled
    (the sampler's /proc walks take CPU from the run it measures: on 2 cores, ~0.1-0.3 s of a 1 s run)."""
    env = None if code is None else {**os.environ, "PYTHONPATH": str(code)}
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        start = time.perf_counter()
        proc = subprocess.Popen(cli_command(repo, jobs), stdout=out, stderr=err, cwd=code, env=env)
        sampler = TreeRss(proc.pid)
        if sample:
            sampler.start()
        _, status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        if sample:
            sampler.stop.set()
            sampler.join()
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        raw, errors = out.read(), err.read().decode(errors="replace")
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"npu-review exited {proc.returncode}: {errors.strip()[-2000:]}")
    summary = json.loads(raw)["summary"]
    return {
        "wall_s": wall,
        "cpu_s": usage.ru_utime + usage.ru_stime,
        "peak_rss_mb": sampler.hwm_kb / 1024,  # the largest single process (VmHWM, sampled)
        "peak_tree_rss_mb": sampler.peak_kb / 1024,  # all processes together, sampled
        "files_checked": summary["files_checked"],
        "findings": {k: v for k, v in summary.items() if k != "files_checked"},
        "warnings": [line for line in errors.splitlines() if line.strip()],
        "output": raw,
    }


def tree_size(repo: Path) -> int:
    out = subprocess.run(
        ["git", "-C", str(repo), "ls-tree", "-r", "--name-only", "-z", "HEAD"], capture_output=True, check=True
    ).stdout
    return out.count(b"\0")


def measure(name: str, repo: Path, runs: int, jobs: int = 0) -> dict[str, Any]:
    results = [run_cli(repo, jobs) for _ in range(runs)]
    if len({r["output"] for r in results}) != 1:
        raise RuntimeError(f"{name}: the runs disagree")
    total = tree_size(repo)
    wall = statistics.median(r["wall_s"] for r in results)
    checked = results[0]["files_checked"]
    return {
        "name": name,
        "jobs": jobs or "cores",
        "files_total": total,
        "files_checked": checked,
        "runs": runs,
        "wall_s_median": wall,
        "wall_s_best": min(r["wall_s"] for r in results),
        "wall_s_all": [round(r["wall_s"], 3) for r in results],
        "cpu_s_median": statistics.median(r["cpu_s"] for r in results),
        "checked_per_s": checked / wall,
        "total_per_s": total / wall,
        "peak_rss_mb": max(r["peak_rss_mb"] for r in results),
        "peak_tree_rss_mb": max(r["peak_tree_rss_mb"] for r in results),
        "findings": results[0]["findings"],
        "engine_warnings": results[0]["warnings"][:5],
        "output_sha256": hashlib.sha256(results[0]["output"]).hexdigest()[:16],
    }


def versus(name: str, repo: Path, runs: int, jobs: int, base: Path) -> dict[str, Any]:
    """`runs` runs of the base code and of this checkout on `repo`, alternating; each side's runs must agree."""
    sides: dict[str, list[dict[str, Any]]] = {"base": [], "current": []}
    for _ in range(runs):
        sides["base"].append(run_cli(repo, jobs, base, sample=False))
        sides["current"].append(run_cli(repo, jobs, sample=False))
    row: dict[str, Any] = {"name": name, "jobs": jobs or "cores", "runs": runs}
    for side, results in sides.items():
        if len({r["output"] for r in results}) != 1:
            raise RuntimeError(f"{name}: the {side} runs disagree")
        for metric in ("wall_s", "cpu_s"):
            values = [r[metric] for r in results]
            row[f"{side}_{metric}"] = {
                "median": statistics.median(values),
                "min": min(values),
                "max": max(values),
                "all": [round(v, 3) for v in values],
            }
        row[f"{side}_findings"] = results[0]["findings"]
    for metric in ("wall_s", "cpu_s"):
        row[f"ratio_{metric}"] = row[f"current_{metric}"]["median"] / row[f"base_{metric}"]["median"]
    return row


def versus_table(rows: list[dict[str, Any]]) -> str:
    def spread(d: dict[str, float]) -> str:
        return f"{d['median']:.2f} ({d['min']:.2f}-{d['max']:.2f})"

    return table(
        [
            "tree",
            "jobs",
            "runs",
            "base wall s",
            "current wall s",
            "wall cur/base",
            "base cpu s",
            "current cpu s",
            "cpu cur/base",
        ],
        [
            [
                r["name"],
                r["jobs"],
                r["runs"],
                spread(r["base_wall_s"]),
                spread(r["current_wall_s"]),
                f"{r['ratio_wall_s']:.2f}",
                spread(r["base_cpu_s"]),
                spread(r["current_cpu_s"]),
                f"{r['ratio_cpu_s']:.2f}",
            ]
            for r in rows
        ],
    )


def main_versus(args: argparse.Namespace) -> int:
    base = args.base_code.resolve()
    if not (base / "npu_review" / "__main__.py").exists():
        raise SystemExit(f"--base-code {base}: not an npu-review checkout (no npu_review/__main__.py)")
    started = os.getloadavg()
    for code in (ROOT, base):
        for package in ("checks", "npu_review"):
            compileall.compile_dir(str(code / package), quiet=1)
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="npu-review-bench-") as tmp:
        trees: list[tuple[str, Path]] = []
        if not args.no_verl and args.verl.exists():
            head = subprocess.run(
                ["git", "-C", str(args.verl), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            trees.append((f"verl HEAD {head}", args.verl))
        if not args.no_synthetic:
            synth = Path(tmp, "synthetic")
            synth.mkdir()
            generate(synth, args.files, args.seed)
            commit(synth)
            trees.append((f"synthetic tree ({args.files:,} files, seed {args.seed})", synth))
        for name, repo in trees:
            for jobs in (0, 1):
                rows.append(versus(name, repo, args.runs, jobs, base))
                print(f"{name}, jobs {jobs or 'cores'}: done", file=sys.stderr)
    print(f"base code: {base}")
    print(versus_table(rows))
    print(
        "median (fastest-slowest) of the runs; base and current alternate run by run; cpu = user + system time of "
        "the CLI, its workers and git; cur/base = ratio of the medians"
    )
    print(load_note(started))
    write_json(args.json, {"benchmark": "engine-versus", "base_code": str(base), "results": rows}, started)
    return 0


def profile(repo: Path, top: int) -> str:
    """cProfile of one CLI run in its own process (so this process stays small and the RSS figures clean): the
    functions with the most own time, then the rules' cumulative time."""
    with tempfile.TemporaryDirectory(prefix="npu-review-prof-") as tmp:
        out = Path(tmp, "cli.prof")
        # The CLI's own --profile: it ends with os._exit, so `python -m cProfile` would write nothing.
        cmd = [*cli_command(repo, 1), "--profile", str(out)]
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        text = io.StringIO()
        stats = pstats.Stats(str(out), stream=text)
        stats.sort_stats("tottime").print_stats(top)
        stats.sort_stats("cumulative").print_stats(r"check_(file|project)", top)
    return text.getvalue()


# Run in a child: tracemalloc over one audit, a snapshot taken when the rules are done and every parse is still
# memoised (the engine's _finalise), grouped by the module that allocated.
_MEMORY_PROBE = """
import sys, tracemalloc, json
import npu_review.checks.engine as engine
from npu_review import cli
seen = {}
original = engine._finalise
def probe(*a, **k):
    snap = tracemalloc.take_snapshot()
    seen["by_file"] = [(str(s.traceback[0].filename), s.size) for s in snap.statistics("filename")[:12]]
    seen["total"] = sum(s.size for s in snap.statistics("filename"))
    return original(*a, **k)
engine._finalise = probe
tracemalloc.start(1)
import io, contextlib
with contextlib.redirect_stdout(io.StringIO()):
    cli.main(["check", "--repo", sys.argv[1], "--all", "--format", "json", "--jobs", "1"])
seen["peak"] = tracemalloc.get_traced_memory()[1]
print(json.dumps(seen))
"""


def memory(repo: Path) -> dict[str, Any]:
    out = subprocess.run(
        [sys.executable, "-c", _MEMORY_PROBE, str(repo)], capture_output=True, text=True, check=True
    ).stdout
    return dict(json.loads(out.strip().splitlines()[-1]))


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--files", type=int, default=10_000, help="files in the generated tree (default 10,000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--runs", type=int, default=3, help="CLI runs per tree; the median wall time is reported")
    ap.add_argument("--verl", type=Path, default=VERL, help="a verl clone (bare is fine); skipped when absent")
    ap.add_argument("--no-verl", action="store_true")
    ap.add_argument("--profile", action="store_true", help="also cProfile one in-process run per tree")
    ap.add_argument("--top", type=int, default=20, help="functions listed by --profile")
    ap.add_argument("--memory", action="store_true", help="also attribute Python allocations (tracemalloc, slow)")
    ap.add_argument("--json", metavar="FILE", help="write the results as JSON")
    ap.add_argument("--base-code", type=Path, metavar="DIR", help="compare with the npu-review checkout in DIR")
    ap.add_argument("--no-synthetic", action="store_true", help="with --base-code or --floor: verl's tree only")
    ap.add_argument("--floor", action="store_true", help="check --all against bench/floor.py on each tree, in turn")
    ap.add_argument("--change", metavar="N,M", help="a 3-file change reviewed on generated trees of these sizes")
    args = ap.parse_args(argv)
    if args.base_code is not None:
        return main_versus(args)
    if args.floor or args.change:
        return main_extra(args)
    started = os.getloadavg()
    # Byte-compile the package first, as pip does when it installs one: a machine that sets
    # PYTHONDONTWRITEBYTECODE (this one does) would otherwise compile every module at every start (~0.1 s).
    for package in ("checks", "npu_review"):
        compileall.compile_dir(str(ROOT / package), quiet=1)

    rows: list[dict[str, Any]] = []
    profiles: dict[str, str] = {}
    memories: dict[str, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="npu-review-bench-") as tmp:
        # Fixed cost: interpreter, imports, rule registry, git start-up, on a one-file repository.
        tiny = Path(tmp, "tiny")
        tiny.mkdir()
        (tiny / "README.md").write_text("# tiny\n")
        commit(tiny)
        rows.append(measure("one-file repo (fixed cost)", tiny, args.runs))

        synth = Path(tmp, "synthetic")
        synth.mkdir()
        t0 = time.perf_counter()
        made = generate(synth, args.files, args.seed)
        commit(synth)
        print(
            f"generated and committed {sum(made.values()):,} files in {time.perf_counter() - t0:.1f} s", file=sys.stderr
        )
        for jobs in (1, 0):
            rows.append(measure(f"synthetic Ascend-shaped tree (seed {args.seed})", synth, args.runs, jobs))
        if args.profile:
            profiles["synthetic"] = profile(synth, args.top)
        if args.memory:
            memories["synthetic"] = memory(synth)

        if not args.no_verl and args.verl.exists():
            head = subprocess.run(
                ["git", "-C", str(args.verl), "rev-parse", "--short=12", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            for jobs in (1, 0):
                rows.append(measure(f"verl HEAD {head}", args.verl, args.runs, jobs))
            if args.profile:
                profiles["verl"] = profile(args.verl, args.top)
            if args.memory:
                memories["verl"] = memory(args.verl)

    print(
        table(
            [
                "tree",
                "jobs",
                "files",
                "checked",
                "wall s",
                "best s",
                "cpu s",
                "checked/s",
                "total/s",
                "peak RSS MB",
                "all procs MB",
                "e/w/n",
            ],
            [
                [
                    r["name"],
                    r["jobs"],
                    r["files_total"],
                    r["files_checked"],
                    r["wall_s_median"],
                    r["wall_s_best"],
                    r["cpu_s_median"],
                    round(r["checked_per_s"]),
                    round(r["total_per_s"]),
                    round(r["peak_rss_mb"], 1),
                    round(r["peak_tree_rss_mb"], 1),
                    "/".join(str(v) for v in r["findings"].values()),
                ]
                for r in rows
            ],
        )
    )
    print(
        "checked/s = files the rules read (summary.files_checked) / wall; total/s = every file of the tree / wall; "
        "cpu s = user + system time of the CLI, its workers and git (what other load on the machine does not "
        "inflate); jobs 'cores' = the default, one process per core; peak RSS = the largest process (VmHWM), "
        "all procs = the sampled sum of PSS over the process tree (what the run takes, shared pages once); "
        "both sampled every 50 ms; "
        f"wall = median of {args.runs} runs; "
        f"targets: >= {TARGET_FILES_PER_S:,.0f} files/s, peak < {TARGET_PEAK_MB:.0f} MB"
    )
    for r in rows:
        for w in r["engine_warnings"]:
            print(f"  [{r['name']}] {w}")
    for name, mem in memories.items():
        print(f"\n--- Python allocations live when the rules are done: {name} ---")
        print(f"live {mem['total'] / 2**20:,.1f} MiB, tracemalloc peak {mem['peak'] / 2**20:,.1f} MiB; by module:")
        for where, size in mem["by_file"]:
            print(f"  {size / 2**20:8.1f} MiB  {where.replace(str(ROOT) + '/', '')}")
    for name, text in profiles.items():
        print(f"\n--- profile: {name} ---\n{text}")
    print(load_note(started))
    write_json(
        args.json,
        {
            "benchmark": "engine",
            "targets": {"files_per_s": TARGET_FILES_PER_S, "peak_rss_mb": TARGET_PEAK_MB},
            "generated_files": args.files,
            "seed": args.seed,
            "results": rows,
            "profiles": profiles,
            "memory": memories,
        },
        started,
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
