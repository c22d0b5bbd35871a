"""The queue contract (bot/jobs.py), the same tests for every implementation: SQLite, and Redis on a real server."""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from npu_review.bot.jobs import Job, JobQueue
from npu_review.bot.queue_sqlite import SqliteQueue

QueueFactory = Callable[[], JobQueue]


@pytest.fixture(params=["sqlite", "redis"])
async def make_queue(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[QueueFactory]:
    """Makes queues over one store (a second queue is a restarted server, or another worker)."""
    made: list[JobQueue] = []
    if request.param == "sqlite":
        path = str(tmp_path / "queue.sqlite3")

        def factory() -> JobQueue:
            made.append(SqliteQueue(path, concurrency=2))
            return made[-1]

    else:
        from npu_review.bot.queue_redis import RedisQueue

        url = request.getfixturevalue("redis_url")
        prefix = f"test-{uuid.uuid4().hex[:8]}"

        def factory() -> JobQueue:
            made.append(RedisQueue(url, prefix=prefix, concurrency=2, visibility_timeout_s=1.0))
            return made[-1]

    yield factory
    for q in made:
        await q.drain(1)
        await q.close()


def job(head: str | None, pr: str = "octo/x#1", force: bool = False, delivery: str = "", digest: str = "") -> Job:
    return Job(uuid.uuid4().hex, pr, head, force, {"head": head}, delivery=delivery, digest=digest)


async def wait_for(pred: Callable[[], bool], timeout: float = 10) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not pred():
        assert loop.time() < deadline, "timed out"
        await asyncio.sleep(0.01)


async def test_a_delivery_and_its_body_are_taken_once(make_queue: QueueFactory) -> None:
    q = make_queue()
    await q.open(None)
    assert await q.begin_delivery("d-1", "sha256:aa") is True
    assert await q.begin_delivery("d-1", "sha256:bb") is False  # the same delivery id
    assert await q.begin_delivery("d-2", "sha256:aa") is False  # the same signed body under a new id
    await q.forget_delivery("d-1", "sha256:aa")
    assert await q.begin_delivery("d-1", "sha256:aa") is True  # forgotten after a failure: runs again


async def test_one_review_per_head_unless_forced(make_queue: QueueFactory) -> None:
    q = make_queue()
    await q.open(None)
    assert await q.submit(job("a" * 40)) == "queued"
    assert await q.submit(job("a" * 40)) == "duplicate"  # `synchronize` after `opened` for the same head
    assert await q.submit(job("a" * 40, pr="octo/x#2")) == "queued"  # another PR
    assert await q.submit(job("a" * 40, force=True)) == "replaced"  # /recheck: replaces the waiting one
    assert await q.depth() == 2


async def test_per_pr_one_runs_and_the_newest_waits(make_queue: QueueFactory) -> None:
    q = make_queue()
    ran: list[str] = []
    gate = asyncio.Event()

    async def runner(j: Job) -> None:
        if j.head == "1" * 40:
            await gate.wait()
        ran.append(str(j.head)[0])

    await q.open(runner)
    await q.submit(job("1" * 40))
    await wait_for(lambda: True)
    await asyncio.sleep(0.3)  # the first one is running
    for head in ("2", "3", "4"):
        await q.submit(job(head * 40))
    gate.set()
    await wait_for(lambda: len(ran) == 2)
    await asyncio.sleep(0.3)
    assert ran == ["1", "4"]
    assert await q.depth() == 0
    # Heads 2 and 3 were never reviewed: a later event for one of them queues it again; 1 and 4 are done.
    assert await q.submit(job("2" * 40)) == "queued"
    assert await q.submit(job("4" * 40)) == "duplicate"


async def test_a_failed_job_forgets_its_head_and_delivery(make_queue: QueueFactory) -> None:
    q = make_queue()
    done = asyncio.Event()

    async def runner(j: Job) -> None:
        done.set()
        raise RuntimeError("GitHub is down")

    await q.open(runner)
    assert await q.begin_delivery("d-9", "sha256:99")
    await q.submit(job("9" * 40, delivery="d-9", digest="sha256:99"))
    await done.wait()
    await wait_for(lambda: True)
    await asyncio.sleep(0.3)
    assert await q.begin_delivery("d-9", "sha256:99") is True
    assert await q.submit(job("9" * 40)) == "queued"


async def test_heads_are_shared(make_queue: QueueFactory) -> None:
    q = make_queue()
    await q.open(None)
    assert await q.latest_head("octo/x#1") is None
    await q.note_head("octo/x#1", "octo/x", 1, "f" * 40)
    assert await q.latest_head("octo/x#1") == "f" * 40
    assert await q.pr_for_head("octo/x", "f" * 40) == 1
    assert await q.pr_for_head("octo/x", "e" * 40) is None


async def test_accepted_work_survives_a_restart(make_queue: QueueFactory) -> None:
    receiver = make_queue()
    await receiver.open(None)  # takes work, runs nothing (like a server that died right after the 202)
    await receiver.submit(job("5" * 40))
    await receiver.close()
    ran: list[Job] = []

    async def runner(j: Job) -> None:
        ran.append(j)

    worker = make_queue()
    await worker.open(runner)
    await wait_for(lambda: len(ran) == 1)
    assert ran[0].head == "5" * 40 and ran[0].attempts == 0
