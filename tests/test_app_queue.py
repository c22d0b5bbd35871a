"""The store contract (bot/jobs.py), the same tests for every implementation: SQLite, and Redis on a real server.

Nothing here sleeps for a fixed time: the runner says when it starts and ends, the queues say when they are idle,
and the backoff of jobs waiting on GitHub runs on a FakeClock."""

from __future__ import annotations

import asyncio
import dataclasses
import uuid
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest

from npu_review.bot.jobs import DONE, FINISHED, RETRY, RETRY_MAX_S, Job, RunResult, StorageUnavailable, Store
from npu_review.bot.queue_sqlite import SqliteStore
from tests.fakeclock import FakeClock, eventually, run_until

StoreFactory = Callable[[], Store]


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", "redis"])
async def make_store(request: pytest.FixtureRequest, tmp_path: Path, clock: FakeClock) -> AsyncIterator[StoreFactory]:
    """Makes stores over one database (a second store is a restarted server, or another worker)."""
    made: list[Store] = []
    if request.param == "sqlite":
        path = str(tmp_path / "queue.sqlite3")

        def factory() -> Store:
            made.append(SqliteStore(path, concurrency=2, clock=clock))
            return made[-1]

    else:
        from npu_review.bot.queue_redis import RedisStore

        url = request.getfixturevalue("redis_url")
        prefix = f"test-{uuid.uuid4().hex[:8]}"

        def factory() -> Store:
            made.append(RedisStore(url, prefix=prefix, concurrency=2, visibility_timeout_s=1.0, clock=clock))
            return made[-1]

    yield factory
    for s in made:
        await s.jobs.drain(1)
        await s.close()


def job(head: str | None, pr: str = "octo/x#1", force: bool = False, delivery: str = "", digest: str = "") -> Job:
    return Job(uuid.uuid4().hex, pr, head, force, {"head": head}, delivery=delivery, digest=digest)


async def idle(store: Store) -> None:
    """Until nothing waits or runs (the runner has returned for every job)."""
    depth = -1

    async def look() -> None:
        nonlocal depth
        depth = await store.jobs.depth()

    loop = asyncio.get_running_loop()
    deadline = loop.time() + 10
    while True:
        await look()
        if depth == 0 and store.jobs.running() == 0:
            return
        assert loop.time() < deadline, f"queue not idle: depth {depth}"
        await asyncio.sleep(0.005)


async def test_a_delivery_and_its_body_are_taken_once(make_store: StoreFactory) -> None:
    s = make_store()
    await s.jobs.open(None)
    assert await s.deliveries.begin("d-1", "sha256:aa") is True
    assert await s.deliveries.begin("d-1", "sha256:bb") is False  # the same delivery id
    assert await s.deliveries.begin("d-2", "sha256:aa") is False  # the same signed body under a new id
    await s.deliveries.forget("d-1", "sha256:aa")
    assert await s.deliveries.begin("d-1", "sha256:aa") is True  # forgotten after a failure: runs again


async def test_one_review_per_head_unless_forced(make_store: StoreFactory) -> None:
    s = make_store()
    await s.jobs.open(None)
    assert await s.jobs.submit(job("a" * 40)) == "queued"
    assert await s.jobs.submit(job("a" * 40)) == "duplicate"  # `synchronize` after `opened` for the same head
    assert await s.jobs.submit(job("a" * 40, pr="octo/x#2")) == "queued"  # another PR
    assert await s.jobs.submit(job("a" * 40, force=True)) == "replaced"  # Re-run: replaces the waiting one
    assert await s.jobs.depth() == 2


async def test_a_recheck_while_a_review_waits_joins_it(make_store: StoreFactory) -> None:
    s = make_store()
    await s.jobs.open(None)
    assert await s.jobs.submit(job(None)) == "queued"  # /recheck: the head as it is when it runs
    assert [await s.jobs.submit(job(None)) for _ in range(5)] == ["coalesced"] * 5
    assert await s.jobs.submit(job("b" * 40)) == "replaced"  # a push still replaces the waiting job
    assert await s.jobs.submit(job(None)) == "coalesced"
    assert await s.jobs.depth() == 1


async def test_a_maintainer_s_recheck_takes_the_place_of_a_waiting_author_s(make_store: StoreFactory) -> None:
    """The author's waiting recheck would be skipped by the author's cooldown when it runs: a maintainer's recheck
    joining it would be lost with it. A trusted commenter's recheck replaces the waiting job; the author's next
    one joins the maintainer's."""
    s = make_store()
    await s.jobs.open(None)
    author = Job(uuid.uuid4().hex, "octo/x#1", None, True, {"head": None, "trusted": False})
    maintainer = Job(uuid.uuid4().hex, "octo/x#1", None, True, {"head": None, "trusted": True})
    assert await s.jobs.submit(author) == "queued"
    assert await s.jobs.submit(maintainer) == "replaced"
    assert await s.jobs.submit(dataclasses.replace(author, id=uuid.uuid4().hex)) == "coalesced"
    assert await s.jobs.depth() == 1


async def test_per_pr_one_runs_and_the_newest_waits(make_store: StoreFactory) -> None:
    s = make_store()
    ran: list[str] = []
    first_started = asyncio.Event()
    gate = asyncio.Event()

    async def runner(j: Job) -> RunResult:
        if j.head == "1" * 40:
            first_started.set()
            await gate.wait()
        ran.append(str(j.head)[0])
        return FINISHED

    await s.jobs.open(runner)
    await s.jobs.submit(job("1" * 40))
    await first_started.wait()
    for head in ("2", "3", "4"):
        await s.jobs.submit(job(head * 40))
    gate.set()
    await idle(s)
    assert ran == ["1", "4"]
    # Heads 2 and 3 were never reviewed: a later event for one of them queues it again; 1 and 4 are done.
    assert await s.jobs.submit(job("2" * 40)) == "queued"
    assert await s.jobs.submit(job("4" * 40)) == "duplicate"


async def test_a_failed_job_forgets_its_head_and_delivery(make_store: StoreFactory) -> None:
    s = make_store()

    async def runner(j: Job) -> RunResult:
        raise RuntimeError("a bug")

    await s.jobs.open(runner)
    assert await s.deliveries.begin("d-9", "sha256:99")
    await s.jobs.submit(job("9" * 40, delivery="d-9", digest="sha256:99"))
    await idle(s)
    assert await s.deliveries.begin("d-9", "sha256:99") is True
    assert await s.jobs.submit(job("9" * 40)) == "queued"


async def test_heads_are_shared(make_store: StoreFactory) -> None:
    s = make_store()
    await s.jobs.open(None)
    assert await s.heads.latest_head("octo/x#1") is None
    await s.heads.note_head("octo/x#1", "octo/x", 1, "f" * 40)
    assert await s.heads.latest_head("octo/x#1") == "f" * 40
    assert await s.heads.pr_for_head("octo/x", "f" * 40) == 1
    assert await s.heads.pr_for_head("octo/x", "e" * 40) is None
    assert await s.heads.last_recheck("octo/x#1") is None
    await s.heads.note_recheck("octo/x#1", "f" * 40 + ":-", 123.0)
    assert await s.heads.last_recheck("octo/x#1") == ("f" * 40 + ":-", 123.0)


async def test_accepted_work_survives_a_restart(make_store: StoreFactory) -> None:
    receiver = make_store()
    await receiver.jobs.open(None)  # takes work, runs nothing (like a server that died right after the 202)
    await receiver.jobs.submit(job("5" * 40))
    await receiver.close()
    ran: list[Job] = []

    async def runner(j: Job) -> RunResult:
        ran.append(j)
        return FINISHED

    worker = make_store()
    await worker.jobs.open(runner)
    await eventually(lambda: len(ran) == 1, what="the job to run")
    assert ran[0].head == "5" * 40 and ran[0].attempts == 0


async def test_a_job_github_cannot_serve_waits_with_backoff_across_a_restart(
    make_store: StoreFactory, clock: FakeClock
) -> None:
    """Told RETRY, a job leaves the running set, is listed as waiting on GitHub with its next try, is not run
    again before then, survives a restart in that state, and runs when due; an hour of outage costs a few dozen
    tries, not thousands."""
    tries: list[Job] = []
    outage_until = clock.time() + 3600

    async def runner(j: Job) -> RunResult:
        tries.append(j)
        if clock.time() < outage_until:
            return RunResult(RETRY, "GitHubBroken 502")
        return RunResult(DONE)

    first = make_store()
    await first.jobs.open(runner)
    assert await first.deliveries.begin("d-1", "sha256:11")
    await first.jobs.submit(job("7" * 40, delivery="d-1", digest="sha256:11"))
    await eventually(lambda: len(tries) == 1, what="the first try")
    waiting: list = []

    async def listed() -> None:
        nonlocal waiting
        waiting = await first.jobs.waiting_on_github()

    for _ in range(200):
        await listed()
        if waiting:
            break
        await asyncio.sleep(0.005)
    (w,) = waiting
    assert (w.pr, w.head, w.retries, w.error) == ("octo/x#1", "7" * 40, 1, "GitHubBroken 502")
    assert w.failing_since == clock.time() and clock.time() < w.next_try <= clock.time() + 5
    assert await first.jobs.depth() == 1
    assert await first.deliveries.begin("d-1", "sha256:11") is False  # still accepted: a redelivery is a duplicate
    await clock.advance(1)  # not due yet: still waiting, nothing running
    assert first.jobs.running() == 0 and len(tries) == 1
    assert [x.retries for x in await first.jobs.waiting_on_github()] == [1]
    await first.jobs.drain(1)  # a deploy
    await first.close()

    second = make_store()
    await second.jobs.open(runner)
    while True:
        waiting = await second.jobs.waiting_on_github()
        if not waiting:
            break
        before = len(tries)
        await clock.advance(max(0.0, waiting[0].next_try - clock.time()) + 0.001)
        await run_until(clock, lambda: len(tries) > before)  # noqa: B023
        await eventually(lambda: second.jobs.running() == 0, what="the try to end")
        if clock.time() < outage_until:
            assert len(tries) == before + 1
    await idle(second)
    assert tries[-1].retries == len(tries) - 1 and tries[-1].may_have_check_run
    assert 12 <= len(tries) <= 40  # capped exponential backoff over the hour (RETRY_MAX_S apart at most)
    assert max(b.failing_since for b in tries) == tries[1].failing_since
    assert RETRY_MAX_S == 300.0


async def test_a_store_that_cannot_write_says_so(tmp_path: Path, redis_url: str) -> None:
    import sqlite3

    from npu_review.bot.queue_redis import RedisStore

    full = SqliteStore(str(tmp_path / "q.sqlite3"))
    await full.jobs.open(None)
    assert await full.deliveries.begin("d-1", "")
    pages = full.db.conn.execute("PRAGMA page_count").fetchone()[0]
    full.db.conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full: SQLITE_FULL on the next page
    with pytest.raises(StorageUnavailable, match="database or disk is full"):
        for i in range(200):
            await full.deliveries.begin(f"d-{i + 2}-" + "x" * 500, "")
    with pytest.raises(StorageUnavailable):
        for i in range(200):
            await full.jobs.submit(job(f"{i:040d}", pr=f"octo/x#{i}"))
    assert full.db.conn.execute("PRAGMA max_page_count = 1000000").fetchone()  # room again
    assert await full.deliveries.begin("d-later", "")
    await full.close()
    assert isinstance(sqlite3.sqlite_version, str)

    down = RedisStore("redis://127.0.0.1:1/0", prefix="x")  # nothing listens there
    with pytest.raises(StorageUnavailable):
        await down.deliveries.begin("d-1", "")
    with pytest.raises(StorageUnavailable):
        await down.jobs.submit(job("a" * 40))
    assert (await down.ping() or "").startswith("Redis does not answer")
    await down.close()
