"""Capacity: reviews per minute with 1, 2 and 4 `npu-review worker` processes on one Redis, and one server alone.

    /work/venv/bin/python bench/capacity.py [--prs 60] [--workers 1 2 4] [--limits lifted|on|both] [--json FILE]

Against the fake GitHub (in this process, on loopback): a receiver (`npu-review serve` with
NPU_REVIEW_QUEUE=redis://...) takes one signed `opened` delivery per PR, all posted at once; N workers (4 reviews
at once each, the default) run them. Each PR is new (the 3-finding Dockerfile change of the App's tests plus a
launch script and a README in a 40-file repository, one installation). Reported per setup: wall time from the first
POST until every head has a completed check run, reviews per minute (PRs / wall), and content-creating calls
per review. Run twice: with the limits lifted (the windows set to a million), which measures the machine, and
with GitHub's limits as the App applies them (70 content-creating calls a minute per installation): then two
calls a review cap one installation at 35 reviews a minute, whatever the worker count: a burst of 60 PRs takes
the first minute's 70 calls at once and the rest a minute later. "one server" is `npu-review serve` with the
embedded SQLite queue, 4 reviews at once.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_note, table, write_json
from aiohttp import web

from tests.app_harness import free_port, settle, start_app, start_worker, wait_until
from tests.fakegithub import FakeGitHub, generate_key_pair
from tests.test_app_e2e import BASE, HEAD

APP_ID = 424242
INSTALLATION = 7001
SECRET = "bench-webhook-secret"
LIFTED = {"NPU_REVIEW_MUTATIONS_PER_MINUTE": "1000000", "NPU_REVIEW_MUTATIONS_PER_HOUR": "1000000"}
MUTATING = ("POST", "PATCH", "PUT", "DELETE")


def start_redis(workdir: str) -> tuple[subprocess.Popen[bytes], str]:
    binary = shutil.which("redis-server")
    if binary is None:
        sys.exit("bench/capacity.py: redis-server is not installed (apt-get install redis-server)")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    time.sleep(0.5)
    return proc, f"redis://127.0.0.1:{port}/0"


def content_creating(fake: FakeGitHub) -> int:
    n = 0
    for r in fake.requests:
        if r.method in MUTATING and not (
            r.path.endswith("/graphql") and not str((r.body or {}).get("query", "")).lstrip().startswith("mutation")
        ):
            n += 1
    return n


async def one_setup(
    key: Any, tmp: Path, prs: int, workers: int, limits: dict[str, str], redis_url: str | None
) -> dict[str, Any]:
    fake = FakeGitHub(APP_ID, key.public_pem)
    fake.add_installation(INSTALLATION, account="octo-org")
    runner = web.AppRunner(fake.app, access_log=None)
    await runner.setup()
    port = free_port()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    fake.base_url = f"http://127.0.0.1:{port}"
    extra = {f"src/part{i:02d}.py": f"x = {i}\n" for i in range(36)}
    repo = fake.add_repo(f"octo-org/bench-{uuid.uuid4().hex[:6]}", files={**BASE, **extra})
    pulls = [
        fake.add_pull(repo, head_files={**BASE, **extra, **HEAD, "scripts/run.sh": f"#!/bin/bash\necho {i}\n"})
        for i in range(prs)
    ]
    env = {**limits}
    if redis_url is not None:
        env.update({"NPU_REVIEW_QUEUE": redis_url, "NPU_REVIEW_REDIS_PREFIX": f"bench-{uuid.uuid4().hex[:8]}"})
    app = await start_app(fake, key.private_pem, APP_ID, SECRET, tmp, extra_env=env)
    pool = []
    try:
        if redis_url is not None:
            pool = list(
                await asyncio.gather(
                    *(
                        start_worker(fake, key.private_pem, APP_ID, SECRET, tmp, env, f"{workers}-{i}")
                        for i in range(workers)
                    )
                )
            )
        deliveries = [fake.delivery("pull_request", fake.pull_request_payload(p, "opened"), SECRET) for p in pulls]
        started = time.monotonic()
        statuses = await asyncio.gather(*(app.post(d) for d in deliveries))
        assert all(s == 202 for s, _ in statuses), statuses

        def done() -> bool:
            return all(
                any(r.status == "completed" for r in fake.check_runs_for(p.repo, p.head_sha, "npu-review"))
                for p in pulls
            )

        await wait_until(done, 600, "every head completed")
        wall = time.monotonic() - started
        await settle(app, timeout=60)
    finally:
        for w in pool:
            await w.stop()
        await app.session.close()
        await app.stop()
        await runner.cleanup()
    runs = sum(len(fake.check_runs_for(p.repo, p.head_sha, "npu-review")) for p in pulls)
    return {
        "setup": f"{workers} worker{'s' if workers > 1 else ''} + Redis" if redis_url else "one server (SQLite)",
        "limits": "lifted" if limits else "on (70/min)",
        "prs": prs,
        "wall_s": round(wall, 2),
        "reviews_per_min": round(prs / wall * 60, 1),
        "calls_per_review": round(content_creating(fake) / prs, 2),
        "check_runs": runs,
        "violations": len(fake.violations),
    }


async def main_async(args: argparse.Namespace) -> list[dict[str, Any]]:
    key = generate_key_pair()
    rows = []
    with tempfile.TemporaryDirectory(prefix="npu-review-capacity-") as tmpdir:
        tmp = Path(tmpdir)
        redis_proc, redis_url = start_redis(tmpdir)
        try:
            plan: list[tuple[int, dict[str, str], str | None]] = []
            if args.limits in ("lifted", "both"):
                plan += [(4, LIFTED, None)] + [(n, LIFTED, redis_url) for n in args.workers]
            if args.limits in ("on", "both"):
                plan += [(4, {}, None)] + [(n, {}, redis_url) for n in (min(args.workers), max(args.workers))]
            for workers, limits, url in plan:
                row = await one_setup(key, tmp, args.prs, workers, limits, url)
                print(row, flush=True)
                rows.append(row)
        finally:
            redis_proc.terminate()
            redis_proc.wait(timeout=10)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prs", type=int, default=60)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--limits", choices=("lifted", "on", "both"), default="both")
    parser.add_argument("--json")
    args = parser.parse_args()
    started = os.getloadavg()
    rows = asyncio.run(main_async(args))
    keys = ["setup", "limits", "prs", "wall_s", "reviews_per_min", "calls_per_review", "check_runs", "violations"]
    print(table(keys, [[r[k] for k in keys] for r in rows]))
    print(load_note(started))
    write_json(args.json, {"rows": rows}, started)


if __name__ == "__main__":
    main()
