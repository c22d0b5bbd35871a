"""Unverified bodies: RSS of the App before, during and after a flood of large bodies with a bad signature.

    python bench/body_flood.py [--bodies 16] [--mb 24] [--rounds 3] [--json bench/out/body_flood.json]

The App runs as `python -m npu_review serve` (whole process, embedded queue) against a fake GitHub in this
process; `--bodies` connections each POST a `--mb` MB body signed with the wrong secret, all at once, `--rounds`
times. Reported: the App's RSS (VmRSS) at rest, its peak while the flood runs (sampled every 10 ms), and 2 s after
each round; the answers (503 with Retry-After once the unverified-bytes budget is held, 401 for the bodies read);
and /healthz latency during the flood. Everything stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_note, percentile, table, write_json

from tests.app_harness import start_app
from tests.fakegithub import FakeGitHub, generate_key_pair, sign

APP_ID = 424242
SECRET = "bench-webhook-secret"


def rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


async def flood(url: str, bodies: int, size: int) -> dict[str, int]:
    body = b'{"zen": "' + b"x" * (size - 12) + b'"}'
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "pull_request",
        "X-Hub-Signature-256": sign(body, "not-the-secret"),
    }
    answers: dict[str, int] = {}
    timeout = aiohttp.ClientTimeout(total=120)
    async with aiohttp.ClientSession(timeout=timeout) as session:

        async def one(i: int) -> None:
            try:
                async with session.post(url, data=body, headers={**headers, "X-GitHub-Delivery": f"f-{i}"}) as r:
                    await r.read()
                    key = str(r.status) + (" Retry-After" if "Retry-After" in r.headers else "")
            except aiohttp.ClientError as exc:  # a 503 sent before the body was read closes the connection
                key = f"closed ({type(exc).__name__})"
            answers[key] = answers.get(key, 0) + 1

        await asyncio.gather(*(one(i) for i in range(bodies)))
    return answers


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    keys = generate_key_pair()
    fake = FakeGitHub(APP_ID, keys.public_pem)
    await fake.start()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        app = await start_app(fake, keys.private_pem, APP_ID, SECRET, Path(tmp), {"NPU_REVIEW_PROCESSES": "1"})
        pid = app.proc.pid
        try:
            await asyncio.sleep(2)
            baseline = rss_mb(pid)
            for n in range(args.rounds):
                peak = 0.0
                health: list[float] = []
                done = asyncio.Event()

                async def sample(done: asyncio.Event = done) -> None:
                    nonlocal peak
                    while not done.is_set():
                        peak = max(peak, rss_mb(pid))
                        await asyncio.sleep(0.01)

                def probe(done: asyncio.Event = done, health: list[float] = health) -> None:
                    # a thread of its own: the flood's sender keeps this loop busy
                    while not done.is_set():
                        t = time.perf_counter()
                        with urllib.request.urlopen(app.url + "/healthz", timeout=30) as r:
                            r.read()
                        health.append((time.perf_counter() - t) * 1000)
                        time.sleep(0.05)

                tasks = [asyncio.ensure_future(sample()), asyncio.ensure_future(asyncio.to_thread(probe))]
                t0 = time.perf_counter()
                answers = await flood(app.url + "/webhook", args.bodies, args.mb * 1_000_000)
                wall = time.perf_counter() - t0
                done.set()
                await asyncio.gather(*tasks)
                await asyncio.sleep(2)
                rows.append(
                    {
                        "round": n + 1,
                        "baseline_mb": baseline,
                        "peak_mb": peak,
                        "after_2s_mb": rss_mb(pid),
                        "answers": answers,
                        "wall_s": wall,
                        "healthz_ms": {"p50": percentile(health, 50), "max": max(health)} if health else None,
                    }
                )
        finally:
            await app.session.close()
            await app.stop()
    await fake.close()
    return {"benchmark": "body_flood", "bodies": args.bodies, "mb": args.mb, "results": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bodies", type=int, default=16)
    ap.add_argument("--mb", type=int, default=24)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    started = os.getloadavg()
    result = asyncio.run(bench(args))
    print(
        table(
            ["round", "RSS at rest MB", "peak MB", "2 s after MB", "/healthz p50 ms", "max ms", "answers"],
            [
                [
                    r["round"],
                    r["baseline_mb"],
                    r["peak_mb"],
                    r["after_2s_mb"],
                    r["healthz_ms"]["p50"] if r["healthz_ms"] else "-",
                    r["healthz_ms"]["max"] if r["healthz_ms"] else "-",
                    ", ".join(f"{k}: {v}" for k, v in sorted(r["answers"].items())),
                ]
                for r in result["results"]
            ],
        )
    )
    print(load_note(started))
    write_json(args.json, result, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
