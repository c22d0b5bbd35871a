"""The embedded queue's worker process (bot/embedded.py): `npu-review serve` runs the reviews in a process of
their own beside the server, restarts it when it dies, counts its reviews and stops it on shutdown."""

from __future__ import annotations

import os
import signal
import sys
from dataclasses import replace
from pathlib import Path

import pytest

from npu_review.bot.embedded import EmbeddedWorker
from npu_review.bot.reporters import parse_marker
from npu_review.bot.settings import Secret, Settings, from_env, settings_from_json, settings_to_json
from npu_review.bot.supervise import MAX_CRASHES
from tests.app_harness import AS_DEPLOYED, settle, start_app, start_live_app, wait_completed, wait_until, worker_pid
from tests.conftest import FAKE_APP_ID, FAKE_WEBHOOK_SECRET
from tests.fakeclock import FakeClock
from tests.fakegithub import FakeGitHub, Fault, KeyPair
from tests.test_app_e2e import BASE, EXPECTED_ANNOTATIONS, HEAD, bot_comments


async def test_a_worker_process_killed_mid_review_is_started_again_and_resumes_the_job(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path
) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pull = fake.add_pull(repo, head_files=HEAD)
    env = {**AS_DEPLOYED, "NPU_REVIEW_QUICK_S": "0"}
    fake.inject("git/get-tree", Fault.slow(30), times=2)  # the review hangs on GitHub when its worker dies
    app = await start_app(fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env)
    try:
        first = worker_pid(app)
        status, _ = await app.post(
            fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
        )
        assert status == 202
        await wait_until(lambda: bool(fake.check_runs_for(pull.repo, pull.head_sha)), 10, "the in-progress run")
        os.kill(first, signal.SIGKILL)
        fake.faults.clear()
        run = await wait_completed(fake, pull, timeout=30)
        await settle(app)
        assert worker_pid(app) != first  # the server started another, which resumed the job
        async with app.session.get(app.url + "/healthz") as r:
            assert (r.status, await r.json()) == (200, {"status": "ok"})
    finally:
        await app.session.close()
        await app.stop()
    # The check run made before the crash, completed by the next worker; nothing posted twice.
    (only,) = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
    assert only.id == run.id and run.conclusion == "failure"
    assert [(a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == EXPECTED_ANNOTATIONS
    fps = [parse_marker(c.body) for c in bot_comments(fake)]
    assert len(fps) == 3 and len(set(fps)) == 3 and len(fake.reviews) == 1
    assert "resuming 1 job(s) that were running when the server stopped" in app.log()
    assert fake.violations == []


async def test_a_worker_process_that_keeps_dying_is_given_up_and_fails_healthz(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Restarted after growing pauses (on the injected clock), given up after MAX_CRASHES quick deaths in a row;
    deliveries are still stored meanwhile, for a worker that does start."""
    monkeypatch.setattr(EmbeddedWorker, "command", (sys.executable, "-c", "raise SystemExit(3)"))
    clock = FakeClock()
    app = await start_live_app(
        fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, clock, run_jobs=None,
        queue_url=f"sqlite:///{tmp_path}/queue.sqlite3", worker_process=True,
    )  # fmt: skip
    worker = app.services.worker
    assert worker is not None
    try:
        await wait_until(lambda: worker.supervisor.restarts == 1, 10, "the first death")
        assert (await app.get_json("/healthz"))[0] == 200  # started again after a pause, not yet given up
        while not worker.supervisor.dead:
            before = worker.supervisor.restarts
            await clock.advance(60)
            await wait_until(lambda: worker.supervisor.restarts > before or bool(worker.supervisor.dead), 10)  # noqa: B023
        assert worker.supervisor.restarts == MAX_CRASHES - 1
        status, health = await app.get_json("/healthz")
        assert status == 503
        assert health == {
            "status": "unhealthy",
            "problems": [
                "the worker process is given up: WorkerExited: the worker process (pid "
                f"{worker.pid}) exited with status 3"
            ],
        }
    finally:
        await app.close()


def test_the_worker_process_gets_the_servers_settings_whole() -> None:
    """Secrets, paths and mappings included; the settings' repr still hides the secrets."""
    env = {
        "GITHUB_APP_ID": "7",
        "GITHUB_PRIVATE_KEY": "-----BEGIN RSA PRIVATE KEY-----\nk\n-----END RSA PRIVATE KEY-----",
        "GITHUB_WEBHOOK_SECRET": "hush",
        "NPU_REVIEW_STATUS_TOKEN": "peek",
        "NPU_REVIEW_QUEUE": "sqlite:////data/q.sqlite3",
        "NPU_REVIEW_CONCURRENCY": "3",
    }
    settings = replace(from_env(env), extra={"a": "b"})
    assert settings.worker_process and not settings.queue_in_memory
    again = settings_from_json(settings_to_json(settings))
    assert (
        again == settings
        and again.webhook_secret == Secret("hush")
        and again.credentials_file == Path("~/.config/npu-review/app-credentials.json").expanduser()
    )
    assert "hush" not in repr(again) and "peek" not in repr(again)
    assert not from_env({**env, "NPU_REVIEW_WORKER_PROCESS": "0"}).worker_process
    assert Settings("1", Secret(""), Secret("")).queue_in_memory  # the dataclass default: no file to share


async def test_the_server_waits_on_sigterm_for_its_worker_to_finish(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path
) -> None:
    """SIGTERM to the server: no delivery is taken any more, the running review is finished by the worker, both
    processes end with status 0 and no process is left."""
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pull = fake.add_pull(repo, head_files=HEAD)
    fake.inject("git/get-tree", Fault.slow(1.5), times=2)
    app = await start_app(fake, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, AS_DEPLOYED)
    worker = worker_pid(app)
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    await wait_until(lambda: len(fake.calls("git/get-tree")) == 2, 10, "the review to be under way")
    await app.session.close()
    assert await app.stop(signal.SIGTERM) == 0
    assert not Path(f"/proc/{worker}").exists()
    (run,) = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
    assert run.status == "completed" and run.conclusion == "failure" and len(run.annotations) == 3
    assert "stopping: finishing running reviews" in app.log()


def test_a_receiver_with_a_worker_never_checkpoints_the_queue_file(tmp_path: Path) -> None:
    """SQLite copies the WAL back into the file (with an fsync) in the COMMIT that crosses 1,000 pages: the
    receiver, whose commits acknowledge deliveries, leaves that to its worker process."""
    from npu_review.bot.queue_sqlite import SqliteStore

    path = str(tmp_path / "queue.sqlite3")
    receiver, worker = SqliteStore(path, checkpoints=False), SqliteStore(path)
    try:
        assert receiver.db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
        assert worker.db.conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 1000
        for i in range(300):
            with receiver.db.tx() as db:
                db.execute("INSERT INTO deliveries (key, at) VALUES (?, ?)", (f"d{i}", 0.0))
        busy, wal_pages, moved = worker.db.conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
        assert busy == 0 and wal_pages >= 300 and moved == wal_pages
        worker.db.checkpoint()
    finally:
        receiver.db.conn.close()
        worker.db.conn.close()
