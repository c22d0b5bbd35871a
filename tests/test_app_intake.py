"""What the webhook takes and how it answers: every payload shape GitHub sends, payloads missing what the App
needs, bodies before they are trusted, a store that cannot write, a dead background loop, Redis going away.
The App runs in the test's loop (create_app over loopback) with the fake GitHub."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import subprocess
import tempfile
import time
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis

from npu_review.bot.bodies import UNVERIFIED_BYTES_LIMIT
from npu_review.bot.jobs import STORAGE_RETRY_AFTER_S
from npu_review.bot.supervise import MAX_CRASHES
from tests.app_harness import LiveApp, start_live_app, wait_until
from tests.conftest import FAKE_APP_ID, FAKE_WEBHOOK_SECRET
from tests.fakeclock import FakeClock
from tests.fakegithub import FakeGitHub, Fault, KeyPair, sign
from tests.test_app_e2e import BASE, HEAD

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = Path(
    os.environ.get("NPU_REVIEW_WEBHOOK_EXAMPLES")
    or ROOT / ".ci/npm/node_modules/@octokit/webhooks-examples/api.github.com/index.json"
)


def post_headers(
    body: bytes, event: str, delivery: str | None = None, secret: str = FAKE_WEBHOOK_SECRET
) -> dict[str, str]:
    return {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery or str(uuid.uuid4()),
        "X-Hub-Signature-256": sign(body, secret),
    }


async def post(app: LiveApp, body: bytes, event: str, **kw: Any) -> tuple[int, dict[str, str], Any]:
    async with app.session.post(app.url + "/webhook", data=body, headers=post_headers(body, event, **kw)) as r:
        return r.status, dict(r.headers), await r.json()


@pytest.fixture
async def receiver(fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path) -> AsyncIterator[LiveApp]:
    """The App taking deliveries without running them (what it answers is what is tested)."""
    app = await start_live_app(
        fake_github,
        app_key_pair.private_pem,
        FAKE_APP_ID,
        FAKE_WEBHOOK_SECRET,
        FakeClock(),
        queue_url=f"sqlite:///{tmp_path}/queue.sqlite3",
        run_jobs=False,
    )
    yield app
    await app.close()


def examples() -> list[tuple[str, dict[str, Any]]]:
    if not EXAMPLES.is_file():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{EXAMPLES} is missing: .ci/run installs @octokit/webhooks-examples from the npm registry")
        pytest.skip("@octokit/webhooks-examples is not installed (.ci/run installs it: npm install --prefix .ci/npm)")
    data = json.loads(EXAMPLES.read_text())
    return [(event["name"], example) for event in data for example in event["examples"]]


async def test_every_payload_github_sends_gets_an_answer_with_a_reason_never_a_5xx(
    receiver: LiveApp, fake_github: FakeGitHub
) -> None:
    shapes = examples()
    assert len(shapes) >= 300  # 329 in 7.6.1
    answers: dict[int, int] = {}
    for event, payload in shapes:
        body = json.dumps(payload).encode()
        status, _, answer = await post(receiver, body, event)
        answers[status] = answers.get(status, 0) + 1
        assert status < 500, (event, payload.get("action"), answer)
        if status >= 400:
            assert status in (400, 422) and answer.get("error"), (event, answer)
        elif status == 202 and "ignored" in answer and "reason" in answer:
            assert "without `installation`" in answer["reason"]
    assert set(answers) <= {200, 202, 400}
    assert fake_github.requests == []  # the receiver only takes work


@pytest.mark.parametrize(
    ("event", "edit", "message"),
    [
        ("pull_request", lambda p: p["pull_request"]["head"].pop("sha"), "the payload has no `head.sha`"),
        ("pull_request", lambda p: p["pull_request"].update(number="7"), "`number` in the payload is not a int"),
        ("pull_request", lambda p: p.update(installation={"id": "x"}), "`installation.id` in the payload is not a int"),
        ("pull_request", lambda p: p.pop("pull_request"), "the payload has no `pull_request`"),
        ("issue_comment", lambda p: p["comment"].pop("id"), "the payload has no `id`"),
        ("issue_comment", lambda p: p.pop("repository"), "the payload has no `repository.owner.login`"),
        ("check_run", lambda p: p["check_run"].pop("head_sha"), "the payload has no `head_sha`"),
    ],
)
async def test_a_signed_payload_missing_what_the_app_needs_is_a_400_naming_it(
    receiver: LiveApp, fake_github: FakeGitHub, event: str, edit: Any, message: str
) -> None:
    fake = fake_github
    pull = fake.add_pull(fake.add_repo("octo-org/verl", files=BASE), head_files=HEAD)
    if event == "pull_request":
        payload = fake.pull_request_payload(pull, "opened")
    elif event == "issue_comment":
        payload = fake.issue_comment_payload(fake.add_issue_comment(pull, "/recheck", user=pull.user.login))
    else:
        run = fake.check_runs.get(1)
        assert run is None
        payload = json.loads(json.dumps(fake.check_suite_payload(pull.repo, pull.head_sha)))
        payload = {**payload, "check_run": {"name": "npu-review", "head_sha": pull.head_sha, "pull_requests": []}}
        payload["action"] = "rerequested"
    edit(payload)
    status, _, answer = await post(receiver, json.dumps(payload).encode(), event)
    assert (status, answer) == (400, {"error": message})
    assert await receiver.services.jobs.depth() == 0


async def test_bodies_are_verified_while_they_stream_and_held_within_a_budget(receiver: LiveApp) -> None:
    # A forged body is refused for its signature, never parsed: not JSON, and 401 all the same.
    status, _, answer = await post(receiver, b"{not json" * 1000, "pull_request", secret="not-the-secret")
    assert (status, answer) == (401, {"error": "signature does not match"})
    # Bodies not yet verified are held within one budget for all connections: a second large one is not read.
    port = int(receiver.url.rsplit(":", 1)[1])
    big = UNVERIFIED_BYTES_LIMIT * 3 // 4
    head = (
        f"POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: {big}\r\n"
        "X-GitHub-Event: pull_request\r\nX-GitHub-Delivery: slow-1\r\nX-Hub-Signature-256: sha256=" + "0" * 64
    )
    _, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(head.encode() + b"\r\n\r\n" + b"x" * 65536)
    await writer.drain()
    await wait_until(lambda: receiver.runtime.unverified.held == big, 10, "the first body to be held")
    second = b'{"zen": "x"}' + b" " * (UNVERIFIED_BYTES_LIMIT // 2)
    status, headers, answer = await post(receiver, second, "ping")
    assert (status, answer) == (503, {"error": "too many large deliveries at once"})
    assert headers["Retry-After"] == "5"
    writer.close()
    await wait_until(lambda: receiver.runtime.unverified.held == 0, 10, "the budget to be given back")
    status, _, answer = await post(receiver, second, "ping")
    assert (status, answer) == (200, {"ok": True, "zen": "x"})
    assert receiver.runtime.unverified.held == 0


async def test_a_delivery_the_store_cannot_take_is_503_never_202(receiver: LiveApp, fake_github: FakeGitHub) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pulls = [fake.add_pull(repo, head_files={**HEAD, "README.md": f"# {i}\n"}) for i in range(40)]
    db = receiver.services.store.db  # type: ignore[attr-defined]
    pages = db.conn.execute("PRAGMA page_count").fetchone()[0]
    db.conn.execute(f"PRAGMA max_page_count = {pages}")  # the disk is full: the next page cannot be written
    answers = []
    for pull in pulls:
        body = json.dumps(fake.pull_request_payload(pull, "opened")).encode()
        answers.append(await post(receiver, body, "pull_request"))
    refused = [(s, h.get("Retry-After"), a) for s, h, a in answers if s != 202]
    assert refused and all(
        r == (503, str(STORAGE_RETRY_AFTER_S), {"error": "the queue cannot store deliveries right now"})
        for r in refused
    )
    accepted = sum(1 for s, _, _ in answers if s == 202)
    assert await receiver.services.jobs.depth() == accepted  # every 202 is a stored job; nothing else is
    db.conn.execute("PRAGMA max_page_count = 1073741823")  # room again: the same deliveries are taken now
    last = pulls[-1]
    status, _, _ = await post(receiver, json.dumps(fake.pull_request_payload(last, "opened")).encode(), "pull_request")
    assert status == 202


async def test_a_job_loop_that_cannot_record_its_work_fails_healthz_until_it_can(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path
) -> None:
    """The database refuses writes while a review runs (here another process holds its write lock; a full disk
    is the same SQLITE error path): the job loop does not die, /healthz says why, and the job is recorded once
    the database takes writes again."""
    import sqlite3

    fake = fake_github
    pull = fake.add_pull(fake.add_repo("octo-org/verl", files=BASE), head_files=HEAD)
    clock = FakeClock()
    path = tmp_path / "queue.sqlite3"
    app = await start_live_app(
        fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, clock, queue_url=f"sqlite:///{path}"
    )
    other = sqlite3.connect(path, isolation_level=None)
    try:
        app.services.store.db.conn.execute("PRAGMA busy_timeout=50")  # type: ignore[attr-defined]
        fake.inject("git/get-tree", Fault.slow(0.5), times=2)  # the review is under way when the lock is taken
        status, _, _ = await post(app, json.dumps(fake.pull_request_payload(pull, "opened")).encode(), "pull_request")
        assert status == 202
        await wait_until(lambda: bool(fake.calls("git/get-tree")), 10, "the review to start")
        other.execute("BEGIN IMMEDIATE")
        await wait_until(lambda: app.services.store.problems() != [], 20, "the loop to notice")
        status, health = await app.get_json("/healthz")
        assert status == 503 and health["status"] == "unhealthy"
        assert health["problems"] == ["the queue database refuses writes: the queue database: database is locked"]
        (run,) = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
        assert run.status == "completed"  # the review itself was done; only its record waits
        other.execute("ROLLBACK")
        await clock.advance(60)
        await wait_until(lambda: app.services.store.problems() == [], 20, "the loop to record the job")
        assert (await app.get_json("/healthz")) == (200, {"status": "ok"})
        assert await app.services.jobs.depth() == 0
        assert len(fake.check_runs) == 1 and len(fake.reviews) == 1
    finally:
        other.close()
        await app.close()


async def test_a_background_loop_that_keeps_crashing_is_given_up_and_fails_healthz(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from npu_review.bot.queue_sqlite import SqliteJobs

    crashes: list[int] = []

    async def broken(self: SqliteJobs) -> None:
        crashes.append(1)
        raise RuntimeError("a bug in the retry scheduler")

    monkeypatch.setattr(SqliteJobs, "_schedule_retries", broken)
    clock = FakeClock()
    app = await start_live_app(
        fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, clock,
        queue_url=f"sqlite:///{tmp_path}/queue.sqlite3",
    )  # fmt: skip
    try:
        await wait_until(lambda: len(crashes) == 1, 10, "the first crash")
        assert (await app.get_json("/healthz"))[0] == 200  # restarted after a pause, not yet given up
        while len(crashes) < MAX_CRASHES:
            before = len(crashes)
            await clock.advance(60)
            await wait_until(lambda: len(crashes) > before, 10, "a restart")  # noqa: B023
        status, health = await app.get_json("/healthz")
        assert status == 503
        assert health == {
            "status": "unhealthy",
            "problems": ["background loop retries is dead: RuntimeError: a bug in the retry scheduler"],
        }
    finally:
        await app.close()


@pytest.fixture
def own_redis() -> Iterator[tuple[str, Any]]:
    """A redis-server of this test's own, which it may stop and start again on the same port."""
    binary = shutil.which("redis-server")
    assert binary is not None, "redis-server is not installed"
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="npu-review-redis-")
    procs: list[subprocess.Popen[bytes]] = []

    def start() -> None:
        procs.append(
            subprocess.Popen(
                [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no",
                 "--dir", workdir],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
        )  # fmt: skip
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=0.2) as c:
                    c.sendall(b"PING\r\n")
                    if c.recv(16).startswith(b"+PONG"):
                        return
            except OSError:
                time.sleep(0.05)
        raise RuntimeError("redis-server did not start")

    def stop() -> None:
        proc = procs.pop()
        proc.terminate()
        proc.wait(timeout=10)

    class Control:
        pass

    control = Control()
    control.start, control.stop = start, stop  # type: ignore[attr-defined]
    start()
    yield f"redis://127.0.0.1:{port}/0", control
    while procs:
        stop()
    shutil.rmtree(workdir, ignore_errors=True)


async def test_with_redis_down_deliveries_get_503_and_healthz_fails(
    fake_github: FakeGitHub, app_key_pair: KeyPair, own_redis: tuple[str, Any]
) -> None:
    url, redis_server = own_redis
    fake = fake_github
    pull = fake.add_pull(fake.add_repo("octo-org/verl", files=BASE), head_files=HEAD)
    body = json.dumps(fake.pull_request_payload(pull, "opened")).encode()
    app = await start_live_app(
        fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, FakeClock(), queue_url=url, run_jobs=False
    )
    try:
        assert (await app.get_json("/healthz")) == (200, {"status": "ok"})
        redis_server.stop()
        status, headers, answer = await post(app, body, "pull_request", delivery="d-1")
        assert (status, headers["Retry-After"], answer) == (
            503,
            str(STORAGE_RETRY_AFTER_S),
            {"error": "the queue cannot store deliveries right now"},
        )
        status, health = await app.get_json("/healthz")
        assert status == 503 and health["problems"] == ["Redis does not answer (ConnectionError)"]
        redis_server.start()
        await wait_until(lambda: True, 1)
        assert (await post(app, body, "pull_request", delivery="d-1"))[0] == 202  # the retry is taken
        assert (await app.get_json("/healthz")) == (200, {"status": "ok"})
    finally:
        await app.close()


async def test_workers_leave_the_consumer_group_and_dead_ones_are_removed(
    redis_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    import npu_review.bot.queue_redis as queue_redis
    from npu_review.bot.jobs import FINISHED, Job, RunResult

    monkeypatch.setattr(queue_redis, "REAP_IDLE_S", 0.3)
    monkeypatch.setattr(queue_redis, "READ_BLOCK_MS", 100)
    prefix = f"test-{uuid.uuid4().hex[:8]}"
    client = aioredis.from_url(redis_url, decode_responses=True)

    async def consumers() -> list[str]:
        return [c["name"] for c in await client.xinfo_consumers(f"{prefix}:jobs", "workers")]

    async def runner(job: Job) -> RunResult:
        return FINISHED

    stopping = queue_redis.RedisStore(redis_url, prefix=prefix, visibility_timeout_s=0.1)
    dying = queue_redis.RedisStore(redis_url, prefix=prefix, visibility_timeout_s=0.1)
    survivor = queue_redis.RedisStore(redis_url, prefix=prefix, visibility_timeout_s=0.1)
    try:
        for store in (stopping, dying, survivor):
            await store.jobs.open(runner)
        for _ in range(100):  # each reads the stream (a consumer of the group from its first read)
            if len(await consumers()) == 3:
                break
            await asyncio.sleep(0.02)
        assert len(await consumers()) == 3
        await stopping.jobs.drain(1)  # SIGTERM: it leaves the group
        assert stopping.jobs.consumer not in await consumers()  # type: ignore[attr-defined]
        await dying.jobs.supervisor.cancel_all()  # type: ignore[attr-defined]  # killed: it never says goodbye
        # Silent for longer than the (shortened) REAP_IDLE_S, with nothing pending: the survivor removes it.
        for _ in range(200):
            if await consumers() == [survivor.jobs.consumer]:  # type: ignore[attr-defined]
                break
            await asyncio.sleep(0.02)
        assert await consumers() == [survivor.jobs.consumer]  # type: ignore[attr-defined]
    finally:
        for store in (stopping, dying, survivor):
            await store.jobs.drain(1)
            await store.close()
        keys = [k async for k in client.scan_iter(f"{prefix}:*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()
