"""Several replicas on one real Redis: a receiver (`npu-review serve`) and `npu-review worker` processes."""

from __future__ import annotations

import asyncio
import signal
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from npu_review.bot.limits import MutationLimiter
from npu_review.bot.queue_redis import RedisStore
from npu_review.bot.reporters import parse_marker
from tests.app_harness import AppProcess, WorkerProcess, settle, start_app, start_worker, wait_until
from tests.conftest import FAKE_APP_ID, FAKE_WEBHOOK_SECRET
from tests.fakegithub import FakeGitHub, Fault, KeyPair
from tests.test_app_e2e import BASE, EXPECTED_ANNOTATIONS, HEAD


@pytest.fixture
def redis_env(redis_url: str) -> dict[str, str]:
    return {
        "NPU_REVIEW_QUEUE": redis_url,
        "NPU_REVIEW_REDIS_PREFIX": f"test-{uuid.uuid4().hex[:8]}",
        "NPU_REVIEW_VISIBILITY_TIMEOUT_S": "1.5",
        "NPU_REVIEW_CONCURRENCY": "1",
        "NPU_REVIEW_QUICK_S": "0",  # every run shows its in-progress check run at once
    }


@pytest.fixture
async def receiver(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path, redis_env: dict[str, str]
) -> AsyncIterator[AppProcess]:
    proc = await start_app(
        fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, extra_env=redis_env
    )
    yield proc
    await proc.session.close()
    await proc.stop()


async def workers(fake: FakeGitHub, key: KeyPair, tmp: Path, env: dict[str, str], n: int) -> list[WorkerProcess]:
    return list(
        await asyncio.gather(
            *(start_worker(fake, key.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp, env, str(i)) for i in range(n))
        )
    )


def bot_comments_of(fake: FakeGitHub, number: int) -> list[str | None]:
    return [
        parse_marker(c.body) for c in fake.review_comments.values() if c.user.type == "Bot" and c.pull.number == number
    ]


async def test_a_worker_killed_mid_review_has_its_job_taken_over(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path, redis_env: dict[str, str], receiver: AppProcess
) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pulls = [fake.add_pull(repo, head_files={**HEAD, "README.md": f"# verl {i}\n"}) for i in range(3)]
    pool = await workers(fake, app_key_pair, tmp_path, redis_env, 3)
    try:
        fake.inject("git/get-tree", Fault.slow(3), times=6)  # every review is under way when the worker dies
        for pull in pulls:
            status, _ = await receiver.post(
                fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
            )
            assert status == 202
        await wait_until(
            lambda: all(fake.check_runs_for(p.repo, p.head_sha) for p in pulls), 15, "three runs in progress"
        )
        victim = pool[0]
        assert await victim.stop(signal.SIGKILL) == -signal.SIGKILL
        await wait_until(
            lambda: all(
                [r.status for r in fake.check_runs_for(p.repo, p.head_sha, "npu-review")] == ["completed"]
                for p in pulls
            ),
            30,
            "every head completed",
        )
        await settle(receiver, timeout=20)
    finally:
        for w in pool:
            await w.stop()
    for pull in pulls:
        (run,) = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")  # the in-progress one, reused
        assert run.conclusion == "failure"
        assert [(a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == EXPECTED_ANNOTATIONS
        fps = bot_comments_of(fake, pull.number)
        assert len(fps) == 3 and len(set(fps)) == 3
    assert len(fake.reviews) == 3
    assert sum("taking over job" in w.log() for w in pool[1:]) == 1
    assert len(fake.tokens) == 1  # one installation token, shared by the three workers through Redis
    assert fake.violations == []


async def test_receivers_share_deliveries_and_heads(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path, redis_env: dict[str, str], receiver: AppProcess
) -> None:
    fake = fake_github
    second = await start_app(
        fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, extra_env=redis_env
    )
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pull = fake.add_pull(repo, head_files=HEAD)
    opened = fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    sync = fake.delivery("pull_request", fake.pull_request_payload(pull, "synchronize"), FAKE_WEBHOOK_SECRET)
    try:
        assert (await receiver.post(opened))[0] == 202
        assert (await second.post(opened))[0] == 200  # the same delivery at the other replica
        assert (await second.post(sync))[0] == 202  # taken, but the head is already queued: no second job
        async with receiver.session.get(receiver.url + "/metrics") as r:
            assert "npu_review_queue_depth 1\n" in await r.text()
        assert fake.requests == []  # receivers call nothing: the workers do
        pool = await workers(fake, app_key_pair, tmp_path, redis_env, 1)
        try:
            await wait_until(
                lambda: [r.status for r in fake.check_runs_for(pull.repo, pull.head_sha)] == ["completed"], 20, "run"
            )
            await settle(second)
        finally:
            await pool[0].stop()
    finally:
        await second.session.close()
        await second.stop()
    assert len(fake.check_runs_for(pull.repo, pull.head_sha)) == 1 and len(fake.reviews) == 1
    assert fake.violations == []


async def test_the_windows_are_shared_by_replicas(redis_url: str) -> None:
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    one, two = RedisStore(redis_url, prefix=prefix), RedisStore(redis_url, prefix=prefix)
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        raise asyncio.CancelledError  # stop at the first wait

    try:
        a = MutationLimiter(one.shared.windows if one.shared else None, per_minute=3, per_hour=5, sleep=sleep)
        b = MutationLimiter(two.shared.windows if two.shared else None, per_minute=3, per_hour=5, sleep=sleep)
        assert [await a.acquire(7), await b.acquire(7), await a.acquire(7)] == [0.0, 0.0, 0.0]
        assert await b.budget(7) == {"per_minute_left": 0, "per_hour_left": 2, "per_minute": 3, "per_hour": 5}
        with pytest.raises(asyncio.CancelledError):
            await b.acquire(7)  # the fourth in a minute, from the other replica: it must wait
        assert len(slept) == 1 and 59 < slept[0] <= 60.01
        assert await b.acquire(8) == 0.0  # another installation has its own windows
    finally:
        await one.close()
        await two.close()
        client = aioredis.from_url(redis_url)
        keys = [k async for k in client.scan_iter(f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
