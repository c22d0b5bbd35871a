"""The single server through a crash (SIGKILL, restart on the same SQLite file), and a burst of deliveries."""

from __future__ import annotations

import asyncio
import dataclasses
import random
import signal
import time
import uuid
from pathlib import Path

import pytest

from npu_review.bot.reporters import parse_marker
from tests.app_harness import AS_DEPLOYED, settle, start_app, wait_completed, wait_until
from tests.conftest import FAKE_APP_ID, FAKE_WEBHOOK_SECRET
from tests.fakegithub import FakeGitHub, Fault, KeyPair
from tests.test_app_e2e import BASE, EXPECTED_ANNOTATIONS, HEAD, bot_comments

MUTATING = ("POST", "PATCH", "PUT", "DELETE")


def mutating_calls(fake: FakeGitHub) -> list[str]:
    """Content-creating calls as GitHub counts them: REST writes and GraphQL mutations (not queries)."""
    out = []
    for r in fake.requests:
        if r.method not in MUTATING:
            continue
        if r.path.endswith("/graphql") and not str((r.body or {}).get("query", "")).lstrip().startswith("mutation"):
            continue
        out.append(f"{r.method} {r.path}")
    return out


@pytest.mark.parametrize("quick_s", ["30", "0"], ids=["before-any-check-run", "check-run-in-progress"])
async def test_sigkill_between_202_and_check_run_then_restart_on_the_same_file(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path, quick_s: str
) -> None:
    fake = fake_github
    env = {**AS_DEPLOYED, "NPU_REVIEW_QUEUE": f"sqlite:///{tmp_path}/queue.sqlite3", "NPU_REVIEW_QUICK_S": quick_s}
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pull = fake.add_pull(repo, head_files=HEAD)
    fake.inject("git/get-tree", Fault.slow(30), times=2)  # the review hangs on GitHub when the server dies
    app = await start_app(fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env)
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    await wait_until(lambda: len(fake.calls("git/get-tree")) == 2, 10, "the review to be under way")
    if quick_s == "0":
        await wait_until(lambda: bool(fake.check_runs_for(pull.repo, pull.head_sha)), 10, "the in-progress run")
    await app.session.close()
    assert await app.stop(signal.SIGKILL) == -signal.SIGKILL
    left = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
    assert [r.status for r in left] == (["in_progress"] if quick_s == "0" else [])
    fake.faults.clear()

    again = await start_app(fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env)
    try:
        run = await wait_completed(fake, pull, timeout=30)
        await settle(again)
    finally:
        await again.session.close()
        await again.stop()
    # Nothing duplicated: one check run (the in-progress one reused), one review, one comment per finding.
    (only,) = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
    assert only.id == run.id and run.conclusion == "failure"
    if quick_s == "0":
        assert only.id == left[0].id
    assert [(a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == EXPECTED_ANNOTATIONS
    assert len(fake.reviews) == 1
    fps = [parse_marker(c.body) for c in bot_comments(fake)]
    assert len(fps) == 3 and len(set(fps)) == 3
    assert "resuming 1 job(s) that were running when the server stopped" in again.log()
    assert fake.violations == []


async def test_a_burst_of_200_deliveries_for_20_prs(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """20 PRs, each: `opened` and `synchronize` for the same head, both re-sent 3 times under their delivery id
    and once under a new one (200 deliveries), posted 50 at a time in random order, the limiter on."""
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pulls = [fake.add_pull(repo, head_files={**HEAD, "README.md": f"# verl {i}\n"}) for i in range(20)]
    deliveries = []
    for pull in pulls:
        for action in ("opened", "synchronize"):
            d = fake.delivery("pull_request", fake.pull_request_payload(pull, action), FAKE_WEBHOOK_SECRET)
            renamed = dataclasses.replace(d, delivery_id=str(uuid.uuid4()))  # the same signed body, a new id
            deliveries += [d, d, d, d, renamed]
    assert len(deliveries) == 200
    random.Random(11).shuffle(deliveries)
    app = await start_app(fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, AS_DEPLOYED)
    try:
        gate = asyncio.Semaphore(50)
        statuses: list[int] = []

        async def post(d: object) -> None:
            async with gate:
                statuses.append((await app.post(d))[0])

        started = time.monotonic()
        await asyncio.gather(*(post(d) for d in deliveries))

        def all_done() -> bool:
            return all(
                any(r.status == "completed" for r in fake.check_runs_for(p.repo, p.head_sha, "npu-review"))
                for p in pulls
            )

        await wait_until(all_done, 30, "every head's check run completed")
        elapsed = time.monotonic() - started
        await settle(app, timeout=30)
    finally:
        await app.session.close()
        await app.stop()
    assert sorted(set(statuses)) == [200, 202]
    assert statuses.count(202) == 40  # each PR's two events were taken; the 160 repeats were duplicates
    for pull in pulls:
        (run,) = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
        assert run.status == "completed" and run.conclusion == "failure" and len(run.annotations) == 3
    assert len(fake.reviews) == 20 and len(bot_comments(fake)) == 60
    calls = mutating_calls(fake)
    per_review = len(calls) / len(pulls)
    with capsys.disabled():
        print(f"\nburst: 20 heads completed in {elapsed:.1f} s, {len(calls)} mutating calls, {per_review:.2f} a review")
    assert per_review <= 2.2
    assert fake.violations == []


async def test_a_check_run_left_in_progress_by_a_superseded_job_is_concluded_after_the_restart(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path
) -> None:
    fake = fake_github
    env = {**AS_DEPLOYED, "NPU_REVIEW_QUEUE": f"sqlite:///{tmp_path}/queue.sqlite3", "NPU_REVIEW_QUICK_S": "0"}
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pull = fake.add_pull(repo, head_files=HEAD)
    old_head = pull.head_sha
    fake.inject("git/get-tree", Fault.slow(30), times=2)
    app = await start_app(fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env)
    assert (
        await app.post(fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET))
    )[0] == 202
    await wait_until(lambda: bool(fake.check_runs_for(pull.repo, old_head)), 10, "the in-progress run")
    fake.push(pull, {**HEAD, "README.md": "# verl 2\n"})  # a newer head arrives while the first review runs
    sync = fake.pull_request_payload(pull, "synchronize", before=old_head)
    assert (await app.post(fake.delivery("pull_request", sync, FAKE_WEBHOOK_SECRET)))[0] == 202
    await app.session.close()
    await app.stop(signal.SIGKILL)
    fake.faults.clear()

    again = await start_app(fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env)
    try:
        newest = await wait_completed(fake, pull, timeout=30)
        await wait_until(
            lambda: [r.status for r in fake.check_runs_for(pull.repo, old_head)] == ["completed"], 10, "old run"
        )
        await settle(again)
    finally:
        await again.session.close()
        await again.stop()
    (old_run,) = fake.check_runs_for(pull.repo, old_head, "npu-review")
    assert old_run.conclusion == "neutral" and old_run.output["title"] == "npu-review could not complete"
    assert "a newer commit of this PR is reviewed instead" in old_run.output["summary"]
    assert newest.conclusion == "failure" and len(newest.annotations) == 3
    assert len(fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")) == 1
    assert {c.commit_id for c in bot_comments(fake)} == {pull.head_sha}
    assert fake.violations == []
