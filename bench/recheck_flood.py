"""`/recheck` floods and push storms: what they start, and how long another repository's review waits meanwhile.

    python bench/recheck_flood.py [--rechecks 100] [--storm 60] [--json bench/out/recheck_flood.json]

The App runs as `python -m npu_review serve` (whole process, embedded queue, GitHub's limits as the App applies
them: 70 content-creating calls a minute per installation), against a fake GitHub in this process; one
installation with two repositories. Scenarios:
- `/recheck` by the PR's author (CONTRIBUTOR) `--rechecks` times on an unchanged, reviewed head, as fast as one
  sender posts them: reviews started (check runs made), reactions, content-creating calls.
- the same flood 3x as large while a PR opens in the other repository: that review's delay, delivery to completed
  check run, against the same PR alone.
- a push storm: `--storm` PRs opened at once in one repository (each review 2 content-creating calls, more than the
  minute's window holds), then a PR in the other repository: its delay.
Everything stays on 127.0.0.1.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import load_note, table, write_json

from tests.app_harness import AppProcess, settle, start_app, wait_until
from tests.fakegithub import FakeGitHub, generate_key_pair
from tests.fakegithub.state import Pull
from tests.test_app_e2e import BASE, HEAD

APP_ID = 424242
INSTALLATION = 7001
SECRET = "bench-webhook-secret"
MUTATING = ("POST", "PATCH", "PUT", "DELETE")


def writes(fake: FakeGitHub) -> int:
    return sum(
        1
        for r in fake.requests
        if r.method in MUTATING
        and not (
            r.path.endswith("/graphql") and not str((r.body or {}).get("query", "")).lstrip().startswith("mutation")
        )
        and not r.path.endswith("/access_tokens")
    )


def runs(fake: FakeGitHub, pull: Pull) -> list[Any]:
    return fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")


async def open_and_time(fake: FakeGitHub, app: AppProcess, pull: Pull, timeout: float = 180) -> float:
    t0 = time.monotonic()
    status, _ = await app.post(fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), SECRET))
    assert status == 202, status
    await wait_until(lambda: any(r.status == "completed" for r in runs(fake, pull)), timeout, "the review")
    return time.monotonic() - t0


async def recheck_flood(fake: FakeGitHub, app: AppProcess, pull: Pull, n: int) -> list[int]:
    statuses = []
    for _ in range(n):
        c = fake.add_issue_comment(pull, "/recheck", user=pull.user.login, author_association="CONTRIBUTOR")
        status, _ = await app.post(fake.delivery("issue_comment", fake.issue_comment_payload(c), SECRET))
        statuses.append(status)
    return statuses


async def scenario(args: argparse.Namespace, name: str) -> dict[str, Any]:
    keys = generate_key_pair()
    fake = FakeGitHub(APP_ID, keys.public_pem)
    fake.add_installation(INSTALLATION, account="octo-org")
    await fake.start()
    busy = fake.add_repo("octo-org/verl", files=BASE)
    other = fake.add_repo("octo-org/other", files=BASE)
    out: dict[str, Any] = {"scenario": name}
    with tempfile.TemporaryDirectory() as tmp:
        app = await start_app(fake, keys.private_pem, APP_ID, SECRET, Path(tmp), {"NPU_REVIEW_PROCESSES": ""})
        try:
            if name == "recheck":
                pull = fake.add_pull(busy, head_files=HEAD)
                await open_and_time(fake, app, pull)
                await settle(app, 60)
                before_runs, before_writes = len(runs(fake, pull)), writes(fake)
                t0 = time.monotonic()
                statuses = await recheck_flood(fake, app, pull, args.rechecks)
                out["posting_s"] = time.monotonic() - t0
                await settle(app, 120)
                out["comments"] = args.rechecks
                out["statuses"] = {s: statuses.count(s) for s in set(statuses)}
                out["reviews_started"] = len(runs(fake, pull)) - before_runs
                out["reactions"] = len(fake.reactions)
                out["writes"] = writes(fake) - before_writes
            elif name == "recheck+other":
                pull = fake.add_pull(busy, head_files=HEAD)
                await open_and_time(fake, app, pull)
                await settle(app, 60)
                alone = fake.add_pull(other, head_files={**HEAD, "README.md": "# alone\n"})
                out["other_alone_s"] = await open_and_time(fake, app, alone)
                await settle(app, 60)
                during = fake.add_pull(other, head_files={**HEAD, "README.md": "# during\n"})
                flood = asyncio.ensure_future(recheck_flood(fake, app, pull, 3 * args.rechecks))
                await asyncio.sleep(1.0)
                out["other_during_flood_s"] = await open_and_time(fake, app, during)
                statuses = await flood
                await settle(app, 120)
                out["comments"] = 3 * args.rechecks
                out["statuses"] = {s: statuses.count(s) for s in set(statuses)}
                out["reviews_started_by_flood"] = len(runs(fake, pull)) - 1
            else:  # storm
                alone = fake.add_pull(other, head_files={**HEAD, "README.md": "# alone\n"})
                out["other_alone_s"] = await open_and_time(fake, app, alone)
                await settle(app, 60)
                storm = [fake.add_pull(busy, head_files={**HEAD, "README.md": f"# {i}\n"}) for i in range(args.storm)]
                t0 = time.monotonic()
                for p in storm:
                    payload = fake.pull_request_payload(p, "opened")
                    status, _ = await app.post(fake.delivery("pull_request", payload, SECRET))
                    assert status == 202
                await asyncio.sleep(1.0)
                during = fake.add_pull(other, head_files={**HEAD, "README.md": "# during\n"})
                out["other_during_storm_s"] = await open_and_time(fake, app, during)
                await wait_until(lambda: all(runs(fake, p) for p in storm), 300, "the storm's reviews")
                await settle(app, 300)
                out["storm_prs"] = args.storm
                out["storm_done_s"] = time.monotonic() - t0
                out["writes"] = writes(fake)
            out["violations"] = len(fake.violations)
        finally:
            await app.session.close()
            await app.stop()
    await fake.close()
    return out


async def bench(args: argparse.Namespace) -> dict[str, Any]:
    results = [await scenario(args, name) for name in args.scenarios]
    return {"benchmark": "recheck_flood", "results": results}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rechecks", type=int, default=100)
    ap.add_argument("--storm", type=int, default=60)
    ap.add_argument("--scenarios", nargs="+", default=["recheck", "recheck+other", "storm"])
    ap.add_argument("--json", metavar="FILE")
    args = ap.parse_args(argv)
    started = os.getloadavg()
    result = asyncio.run(bench(args))
    print(
        table(
            ["scenario", "result"],
            [[r["scenario"], {k: v for k, v in r.items() if k != "scenario"}] for r in result["results"]],
        )
    )
    print(load_note(started))
    write_json(args.json, result, started)
    return 0


if __name__ == "__main__":
    sys.exit(main())
