"""Outages: the longest GitHub outage an accepted review survives, and what it costs.

    python bench/outage.py [--hours 1 3 5.5 7] [--queue sqlite|redis] [--json bench/out/outage.json]

The whole path in one process: the fake GitHub and the App (create_app, served on loopback, embedded SQLite
queue or Redis with --redis-url), a signed `opened` delivery, then GitHub down for every call (503) for the given
hours, with a restart of the App halfway, then up again. The hours pass on an injected clock (the App's job
backoff, its due dates and restarts), stepped from one retry to the next; each try does its real HTTP calls. A
review survives when its head ends with exactly one completed check run carrying its findings and one review
with one comment per finding. Reported per outage: tries, outcome, real seconds.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
import uuid
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_note, table, write_json

from npu_review.bot.reporters import parse_marker
from tests.app_harness import ride_out, start_live_app
from tests.fakeclock import FakeClock
from tests.fakegithub import FakeGitHub, generate_key_pair
from tests.test_app_e2e import BASE, HEAD

APP_ID = 424242
SECRET = "bench-webhook-secret"


async def one(hours: float, queue: dict[str, str], keys: Any) -> dict[str, Any]:
    fake = FakeGitHub(APP_ID, keys.public_pem)
    fake.add_installation(7001, account="octo-org")
    await fake.start()
    clock = FakeClock()
    pull = fake.add_pull(fake.add_repo("octo-org/verl", files=BASE), head_files=HEAD)
    t0 = time.monotonic()
    tries = 0
    app = await start_live_app(fake, keys.private_pem, APP_ID, SECRET, clock, **queue)
    try:
        fake.outage()
        payload = fake.pull_request_payload(pull, "opened")
        status, _ = await app.post(fake.delivery("pull_request", payload, SECRET))
        assert status == 202
        await ride_out(app, clock, hours * 1800, timeout=600)
        await app.close()
        app = await start_live_app(fake, keys.private_pem, APP_ID, SECRET, clock, **queue)  # a deploy meanwhile
        await ride_out(app, clock, hours * 1800, timeout=600)
        waiting = await app.services.jobs.waiting_on_github()
        tries = waiting[0].retries if waiting else tries
        fake.end_outage()

        def done() -> bool:
            return any(r.status == "completed" for r in fake.check_runs_for(pull.repo, pull.head_sha))

        await ride_out(app, clock, 900, done=done, timeout=120)
        await asyncio.sleep(0.2)
    finally:
        await app.close()
        await fake.close()
    runs = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
    comments = [parse_marker(c.body) for c in fake.review_comments.values() if c.user.type == "Bot"]
    survived = (
        len(runs) == 1
        and runs[0].status == "completed"
        and runs[0].conclusion == "failure"
        and len(runs[0].annotations) == 3
        and len(fake.reviews) == 1
        and len(comments) == 3 == len(set(comments))
    )
    return {
        "outage_h": hours,
        "tries_while_down": tries,
        "check_runs": [(r.status, r.conclusion, len(r.annotations)) for r in runs],
        "reviews": len(fake.reviews),
        "comments": len(comments),
        "survived": survived,
        "real_s": time.monotonic() - t0,
        "violations": len(fake.violations),
    }


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    keys = generate_key_pair()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for hours in args.hours:
            if args.redis_url:
                queue = {"queue_url": args.redis_url, "redis_prefix": f"bench-{uuid.uuid4().hex[:8]}"}
            else:
                queue = {"queue_url": f"sqlite:///{tmp}/queue-{hours}.sqlite3"}
            rows.append(await one(hours, queue, keys))
    return {"benchmark": "outage", "queue": "redis" if args.redis_url else "sqlite", "results": rows}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--hours", type=float, nargs="+", default=[1.0, 3.0, 5.5, 7.0])
    ap.add_argument("--redis-url", default="", help="Redis for the queue (default: the embedded SQLite queue)")
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    started = os.getloadavg()
    result = asyncio.run(bench(args))
    print(
        table(
            [
                "outage h",
                "tries while down",
                "check runs (status, conclusion, annotations)",
                "review",
                "survived",
                "real s",
            ],
            [
                [r["outage_h"], r["tries_while_down"], r["check_runs"], r["reviews"], r["survived"], r["real_s"]]
                for r in result["results"]
            ],
        )
    )
    print(load_note(started))
    write_json(args.json, result, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
