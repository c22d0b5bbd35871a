"""The embedded store: jobs, reviewed heads and seen deliveries in one local SQLite file (WAL), run in-process.

Accepted work is committed before the webhook answers 202, so it survives a crash or a deploy: on start the
queue resumes what was waiting, running or waiting on GitHub (a running job runs again and reuses the check run
it had made), and a job a newer head had superseded only has its in-progress check run concluded. A job GitHub
could not serve waits in state 'retry' until its due time (epoch seconds, so it holds across restarts).
WAL with synchronous=NORMAL: a commit survives the process being killed; only a power loss may lose the last ones.
Any SQLite error (a full disk above all) is StorageUnavailable: the webhook answers 503, and the job loops keep
trying to record what they did until the disk has room again.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.fairgate import FairGate
from npu_review.bot.jobs import (
    CONCLUDE,
    DELIVERY_TTL_S,
    DONE,
    FAILED,
    HEAD_TTL_S,
    RETRY,
    RETRY_BASE_S,
    REVIEW,
    Job,
    Runner,
    RunResult,
    StorageUnavailable,
    Waiting,
    drain_tasks,
    retry_delay,
)
from npu_review.bot.supervise import Supervisor

log = logging.getLogger(__name__)
T = TypeVar("T")

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, pr TEXT NOT NULL, head TEXT, force INTEGER NOT NULL, body TEXT NOT NULL,
    state TEXT NOT NULL, kind TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL,
    due REAL NOT NULL DEFAULT 0);
CREATE INDEX IF NOT EXISTS jobs_pr ON jobs (pr, state);
CREATE TABLE IF NOT EXISTS heads (pr TEXT NOT NULL, head TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (pr, head));
CREATE TABLE IF NOT EXISTS deliveries (key TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS latest (pr TEXT PRIMARY KEY, head TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pr_heads (repo TEXT NOT NULL, head TEXT NOT NULL, number INTEGER NOT NULL,
    at REAL NOT NULL, PRIMARY KEY (repo, head));
CREATE TABLE IF NOT EXISTS rechecks (pr TEXT PRIMARY KEY, state TEXT NOT NULL, at REAL NOT NULL);
"""
# Pauses while the database refuses writes (a full disk): doubling up to the maximum, until it takes them.
STORAGE_RETRY_S = 0.5
STORAGE_RETRY_MAX_S = 30.0
# The retry scheduler looks at the due times at least this often (a due time set by another process).
SCHEDULER_MAX_SLEEP_S = 60.0


def path_from_url(url: str) -> str:
    """sqlite:///relative/path, sqlite:////absolute/path; sqlite:// alone is in memory (nothing survives)."""
    rest = url.removeprefix("sqlite://")
    if rest in ("", "/", "/:memory:"):
        return ":memory:"
    return rest[1:] if rest.startswith("/") else rest


class Database:
    """The connection, transactions, and SQLite's errors turned into StorageUnavailable."""

    def __init__(self, path: str, checkpoints: bool = True) -> None:
        """`checkpoints` False: this connection never copies the WAL back into the database file (SQLite does
        that in the COMMIT that crosses 1,000 pages, with an fsync: milliseconds, tens of them on a busy disk,
        during which the event loop waits). A receiver whose worker process checkpoints the file
        (bot/embedded.py) turns them off, so that no acknowledgement waits for one."""
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.conn = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self.conn.execute("PRAGMA journal_mode=WAL")
        self.conn.execute("PRAGMA synchronous=NORMAL")
        self.conn.execute("PRAGMA busy_timeout=5000")
        if not checkpoints:
            self.conn.execute("PRAGMA wal_autocheckpoint=0")
        self.conn.executescript(SCHEMA)
        columns = {row[1] for row in self.conn.execute("PRAGMA table_info(jobs)")}
        if "due" not in columns:  # a file written before jobs could wait on GitHub
            self.conn.execute("ALTER TABLE jobs ADD COLUMN due REAL NOT NULL DEFAULT 0")

    @contextlib.contextmanager
    def tx(self) -> Iterator[sqlite3.Connection]:
        try:
            self.conn.execute("BEGIN IMMEDIATE")
        except sqlite3.Error as exc:
            raise StorageUnavailable(f"the queue database: {exc}") from exc
        try:
            yield self.conn
            self.conn.execute("COMMIT")
        except BaseException as exc:
            with contextlib.suppress(sqlite3.Error):
                if self.conn.in_transaction:
                    self.conn.execute("ROLLBACK")
            if isinstance(exc, sqlite3.Error):
                raise StorageUnavailable(f"the queue database: {exc}") from exc
            raise

    def checkpoint(self) -> None:
        """Copies what the WAL holds into the database file as far as readers allow (PASSIVE: nobody waits), so
        that the WAL does not grow while only the receiver writes."""
        try:
            self.conn.execute("PRAGMA wal_checkpoint(PASSIVE)")
        except sqlite3.Error as exc:
            raise StorageUnavailable(f"the queue database: {exc}") from exc

    def read(self, sql: str, args: tuple[Any, ...] = ()) -> list[Any]:
        try:
            return self.conn.execute(sql, args).fetchall()
        except sqlite3.Error as exc:
            raise StorageUnavailable(f"the queue database: {exc}") from exc


class SqliteDeliveries:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def begin(self, delivery: str, digest: str) -> bool:
        keys = [k for k in (delivery, digest) if k]
        with self._db.tx() as db:
            marks = ",".join("?" * len(keys))
            if db.execute(f"SELECT 1 FROM deliveries WHERE key IN ({marks})", keys).fetchone():
                return False
            now = self._clock.time()
            db.executemany("INSERT INTO deliveries (key, at) VALUES (?, ?)", [(k, now) for k in keys])
        return True

    async def forget(self, delivery: str, digest: str) -> None:
        with self._db.tx() as db:
            db.execute("DELETE FROM deliveries WHERE key IN (?, ?)", (delivery, digest))


class SqliteHeads:
    def __init__(self, db: Database, clock: Clock) -> None:
        self._db = db
        self._clock = clock

    async def note_head(self, pr: str, repo: str, number: int, head: str) -> None:
        with self._db.tx() as db:
            db.execute("INSERT OR REPLACE INTO latest (pr, head) VALUES (?, ?)", (pr, head))
            db.execute(
                "INSERT OR REPLACE INTO pr_heads (repo, head, number, at) VALUES (?, ?, ?, ?)",
                (repo, head, number, self._clock.time()),
            )

    async def latest_head(self, pr: str) -> str | None:
        rows = self._db.read("SELECT head FROM latest WHERE pr = ?", (pr,))
        return str(rows[0][0]) if rows else None

    async def pr_for_head(self, repo: str, head: str) -> int | None:
        rows = self._db.read("SELECT number FROM pr_heads WHERE repo = ? AND head = ?", (repo, head))
        return int(rows[0][0]) if rows else None

    async def last_recheck(self, pr: str) -> tuple[str, float] | None:
        rows = self._db.read("SELECT state, at FROM rechecks WHERE pr = ?", (pr,))
        return (str(rows[0][0]), float(rows[0][1])) if rows else None

    async def note_recheck(self, pr: str, state: str, at: float) -> None:
        with self._db.tx() as db:
            db.execute("INSERT OR REPLACE INTO rechecks (pr, state, at) VALUES (?, ?, ?)", (pr, state, at))


class SqliteJobs:
    def __init__(self, db: Database, clock: Clock, concurrency: int = 4, retry_base_s: float = RETRY_BASE_S) -> None:
        self._db = db
        self._clock = clock
        self._concurrency = concurrency
        self._retry_base_s = retry_base_s
        self._gate: FairGate | None = None
        self._runner: Runner | None = None
        self._loops: dict[str, asyncio.Task[None]] = {}
        self._active = 0
        self._stopping = False
        self._retry_changed = asyncio.Event()
        self.supervisor = Supervisor("sqlite-queue", clock)
        # Called with the PR of each job stored, once committed: how a receiver tells its worker process.
        self.on_submit: Callable[[str], None] | None = None
        self.storage_error: tuple[float, str] | None = None  # (since, message) while writes fail

    # -- start-up ------------------------------------------------------------------------------------------
    async def open(self, runner: Runner | None) -> None:
        """With a runner: run the jobs, resuming what the last runner of this file left running (it is gone: the
        server starts its worker process only after the previous one exited, and the worker holds the file's
        lock). Without: only accept jobs (a receiver), leaving running ones to their runner."""
        self._runner = runner
        self._gate = FairGate(self._concurrency)
        now = self._clock.time()
        running = []
        with self._db.tx() as db:
            db.execute("DELETE FROM deliveries WHERE at < ?", (now - DELIVERY_TTL_S,))
            db.execute("DELETE FROM heads WHERE at < ?", (now - HEAD_TTL_S,))
            db.execute("DELETE FROM pr_heads WHERE at < ?", (now - HEAD_TTL_S,))
            if runner is not None:
                running = db.execute("SELECT id, pr FROM jobs WHERE state = 'running'").fetchall()
            for job_id, pr in running:
                newer = db.execute(
                    "SELECT 1 FROM jobs WHERE pr = ? AND state = 'queued' AND kind = ?", (pr, REVIEW)
                ).fetchone()
                # Superseded while it ran: only its check run needs concluding. Otherwise it runs again.
                kind = CONCLUDE if newer else None
                db.execute(
                    "UPDATE jobs SET state = 'queued', attempts = attempts + 1, kind = COALESCE(?, kind) WHERE id = ?",
                    (kind, job_id),
                )
        if running:
            log.info("resuming %d job(s) that were running when the server stopped", len(running))
        if runner is not None:
            self.wake()
            self.supervisor.loop("retries", self._schedule_retries)

    def wake(self, pr: str | None = None) -> None:
        """Runs the jobs queued for `pr` (for every PR: None) that no loop of this process runs yet: what another
        process (the receiver in front of this worker) queued in the shared file."""
        if pr is not None:
            self._kick(pr)
            return
        for (queued,) in self._db.read("SELECT DISTINCT pr FROM jobs WHERE state = 'queued'"):
            self._kick(queued)

    # -- jobs ----------------------------------------------------------------------------------------------
    async def submit(self, job: Job) -> str:
        with self._db.tx() as db:
            if (
                job.joins_waiting
                and db.execute(
                    "SELECT 1 FROM jobs WHERE pr = ? AND kind = ? AND (state = 'queued' OR (state = 'retry' AND "
                    "head IS NULL))",
                    (job.pr, REVIEW),
                ).fetchone()
            ):
                return "coalesced"  # a review of this PR waits already and reviews its head as it is then
            if not job.force and job.head:
                try:
                    db.execute(
                        "INSERT INTO heads (pr, head, at) VALUES (?, ?, ?)", (job.pr, job.head, self._clock.time())
                    )
                except sqlite3.IntegrityError:
                    return "duplicate"
            old = db.execute(
                "SELECT id, head, force FROM jobs WHERE pr = ? AND state = 'queued' AND kind = ?", (job.pr, REVIEW)
            ).fetchall()
            for old_id, old_head, old_force in old:
                db.execute("DELETE FROM jobs WHERE id = ?", (old_id,))
                if old_head and not old_force:  # never reviewed: a later delivery of that head may queue it again
                    db.execute("DELETE FROM heads WHERE pr = ? AND head = ?", (job.pr, old_head))
            db.execute(
                "INSERT INTO jobs (id, pr, head, force, body, state, kind, attempts, created, due) "
                "VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?, 0)",
                (job.id, job.pr, job.head, int(job.force), json.dumps(job.to_json()), job.kind, 0, self._clock.time()),
            )
        self._kick(job.pr)
        if self.on_submit is not None:
            self.on_submit(job.pr)
        return "replaced" if old else "queued"

    async def depth(self) -> int:
        return int(self._db.read("SELECT COUNT(*) FROM jobs")[0][0])

    async def waiting_on_github(self) -> list[Waiting]:
        out = []
        for body, due in self._db.read("SELECT body, due FROM jobs WHERE state = 'retry' ORDER BY due LIMIT 100"):
            job = Job.from_json(json.loads(body))
            out.append(Waiting(job.pr, job.head, job.retries, job.failing_since, float(due), job.error))
        return out

    def running(self) -> int:
        return self._active

    def problems(self) -> list[str]:
        out = [f"background loop {name} is dead: {why}" for name, why in self.supervisor.dead.items()]
        if self.storage_error is not None:
            out.append(f"the queue database refuses writes: {self.storage_error[1]}")
        return out

    def _kick(self, pr: str) -> None:
        if self._runner is None or self._stopping or pr in self._loops:
            return
        self._loops[pr] = self.supervisor.spawn(f"pr {pr}", self._pr_loop(pr))

    def _next(self, pr: str) -> Job | None:
        with self._db.tx() as db:
            # A concluding job first (it belongs to an older head), then the PR's waiting review.
            row = db.execute(
                "SELECT id, body, attempts, kind FROM jobs WHERE pr = ? AND (state = 'queued' OR "
                "(state = 'retry' AND due <= ?)) ORDER BY kind = ?, created LIMIT 1",
                (pr, self._clock.time(), REVIEW),
            ).fetchone()
            if row is None:
                return None
            db.execute("UPDATE jobs SET state = 'running' WHERE id = ?", (row[0],))
        data = json.loads(row[1])
        return Job.from_json({**data, "attempts": row[2], "kind": row[3]})

    def stopping(self) -> bool:
        """Whether close() has begun (a call, so that type checkers do not narrow it across an await)."""
        return self._stopping

    async def _stored(self, what: str, fn: Callable[[], T]) -> T:
        """fn() until the database takes it: a full disk pauses the job loops, it does not kill them."""
        delay = STORAGE_RETRY_S
        while True:
            try:
                result = fn()
            except StorageUnavailable as exc:
                if self.storage_error is None:
                    self.storage_error = (self._clock.time(), str(exc))
                log.error("%s: %s; trying again in %.1f s", what, exc, delay)
                await self._clock.sleep(delay)
                delay = min(delay * 2, STORAGE_RETRY_MAX_S)
                continue
            self.storage_error = None
            return result

    async def _pr_loop(self, pr: str) -> None:
        """Runs the PR's jobs one after the other, each taking a slot of the concurrency gate (slots go round the
        repositories that wait)."""
        assert self._gate is not None and self._runner is not None
        try:
            while not self._stopping:
                async with self._gate.slot(pr.split("#", 1)[0]):
                    if self.stopping():  # close() may have run while this loop waited for the gate
                        return
                    job = await self._stored("taking the next job", lambda: self._next(pr))
                    if job is None:
                        return
                    result = FAILED
                    self._active += 1
                    try:
                        result = await self._runner(job)
                    except asyncio.CancelledError:
                        # Left 'running': the next start resumes it (and finds its check run concluded).
                        log.warning("job %s for %s cancelled", job.id, pr)
                        self._active -= 1
                        raise
                    except Exception:
                        log.exception("job %s for %s failed", job.id, pr)
                    try:
                        await self._stored("recording a finished job", functools.partial(self._finish, job, result))
                    finally:
                        self._active -= 1
        finally:
            self._loops.pop(pr, None)

    def _finish(self, job: Job, result: RunResult) -> None:
        with self._db.tx() as db:
            if result.verdict == RETRY:
                now = self._clock.time()
                again = job.failed_again(now, result.error)
                due = now + retry_delay(again.retries, self._retry_base_s)
                db.execute(
                    "UPDATE jobs SET state = 'retry', due = ?, body = ? WHERE id = ?",
                    (due, json.dumps(again.to_json()), job.id),
                )
                self._retry_changed.set()
                return
            db.execute("DELETE FROM jobs WHERE id = ?", (job.id,))
            if result.verdict != DONE and job.kind == REVIEW:
                # Failed: forgotten, so that a redelivery (or the same head's next event) reviews it again.
                if job.head and not job.force:
                    db.execute("DELETE FROM heads WHERE pr = ? AND head = ?", (job.pr, job.head))
                db.execute("DELETE FROM deliveries WHERE key IN (?, ?)", (job.delivery, job.digest))

    async def _schedule_retries(self) -> None:
        """Starts the PR loop of every job whose retry is due; sleeps until the next due time."""
        while not self._stopping:
            self._retry_changed.clear()
            now = self._clock.time()
            due_prs = await self._stored(
                "reading due retries",
                functools.partial(
                    self._db.read, "SELECT DISTINCT pr FROM jobs WHERE state = 'retry' AND due <= ?", (now,)
                ),
            )
            for (pr,) in due_prs:
                self._kick(pr)
            rows = await self._stored(
                "reading due retries", lambda: self._db.read("SELECT MIN(due) FROM jobs WHERE state = 'retry'")
            )
            nxt = rows[0][0]
            wait = SCHEDULER_MAX_SLEEP_S if nxt is None else min(max(float(nxt) - now, 0.0), SCHEDULER_MAX_SLEEP_S)
            sleeper = asyncio.ensure_future(self._clock.sleep(wait))
            changed = asyncio.ensure_future(self._retry_changed.wait())
            try:
                await asyncio.wait({sleeper, changed}, return_when=asyncio.FIRST_COMPLETED)
            finally:
                sleeper.cancel()
                changed.cancel()

    async def drain(self, timeout: float) -> None:
        self._stopping = True
        self._retry_changed.set()
        await drain_tasks(self._loops.values(), timeout)
        await self.supervisor.cancel_all()


class SqliteStore:
    """The three roles over one SQLite file (bot/jobs.py)."""

    def __init__(
        self,
        path: str,
        concurrency: int = 4,
        clock: Clock = SYSTEM_CLOCK,
        retry_base_s: float = RETRY_BASE_S,
        checkpoints: bool = True,
    ) -> None:
        self.db = Database(path, checkpoints)
        self.deliveries = SqliteDeliveries(self.db, clock)
        self.heads = SqliteHeads(self.db, clock)
        self.jobs = SqliteJobs(self.db, clock, concurrency, retry_base_s)
        self.shared = None

    def problems(self) -> list[str]:
        return self.jobs.problems()

    async def ping(self) -> str | None:
        return None

    async def close(self) -> None:
        self.db.conn.close()
