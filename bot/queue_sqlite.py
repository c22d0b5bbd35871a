"""The embedded queue: jobs, reviewed heads and seen deliveries in one local SQLite file (WAL), run in-process.

Accepted work is committed before the webhook answers 202, so it survives a crash or a deploy: on start the
queue resumes what was waiting or running (a running job runs again and reuses the check run it had made),
and a job a newer head had superseded only has its in-progress check run concluded.
WAL with synchronous=NORMAL: a commit survives the process being killed; only a power loss may lose the last ones.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import sqlite3
import time
from collections.abc import Iterator
from pathlib import Path

from npu_review.bot.jobs import CONCLUDE, DELIVERY_TTL_S, HEAD_TTL_S, REVIEW, Job, Runner, drain_tasks

log = logging.getLogger(__name__)

SCHEMA = """
CREATE TABLE IF NOT EXISTS jobs (
    id TEXT PRIMARY KEY, pr TEXT NOT NULL, head TEXT, force INTEGER NOT NULL, body TEXT NOT NULL,
    state TEXT NOT NULL, kind TEXT NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, created REAL NOT NULL);
CREATE INDEX IF NOT EXISTS jobs_pr ON jobs (pr, state);
CREATE TABLE IF NOT EXISTS heads (pr TEXT NOT NULL, head TEXT NOT NULL, at REAL NOT NULL, PRIMARY KEY (pr, head));
CREATE TABLE IF NOT EXISTS deliveries (key TEXT PRIMARY KEY, at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS latest (pr TEXT PRIMARY KEY, head TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS pr_heads (repo TEXT NOT NULL, head TEXT NOT NULL, number INTEGER NOT NULL,
    at REAL NOT NULL, PRIMARY KEY (repo, head));
"""


def path_from_url(url: str) -> str:
    """sqlite:///relative/path, sqlite:////absolute/path; sqlite:// alone is in memory (nothing survives)."""
    rest = url.removeprefix("sqlite://")
    if rest in ("", "/", "/:memory:"):
        return ":memory:"
    return rest[1:] if rest.startswith("/") else rest


class SqliteQueue:
    def __init__(self, path: str, concurrency: int = 4) -> None:
        if path != ":memory:":
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.execute("PRAGMA busy_timeout=5000")
        self._db.executescript(SCHEMA)
        self._concurrency = concurrency
        self._gate: asyncio.Semaphore | None = None
        self._runner: Runner | None = None
        self._loops: dict[str, asyncio.Task[None]] = {}
        self._stopping = False

    @contextlib.contextmanager
    def _tx(self) -> Iterator[sqlite3.Connection]:
        self._db.execute("BEGIN IMMEDIATE")
        try:
            yield self._db
        except BaseException:
            self._db.execute("ROLLBACK")
            raise
        self._db.execute("COMMIT")

    # -- start-up ------------------------------------------------------------------------------------------
    async def open(self, runner: Runner | None) -> None:
        self._runner = runner
        self._gate = asyncio.Semaphore(self._concurrency)
        now = time.time()
        with self._tx() as db:
            db.execute("DELETE FROM deliveries WHERE at < ?", (now - DELIVERY_TTL_S,))
            db.execute("DELETE FROM heads WHERE at < ?", (now - HEAD_TTL_S,))
            db.execute("DELETE FROM pr_heads WHERE at < ?", (now - HEAD_TTL_S,))
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
            for (pr,) in self._db.execute("SELECT DISTINCT pr FROM jobs").fetchall():
                self._kick(pr)

    # -- deliveries and heads ------------------------------------------------------------------------------
    async def begin_delivery(self, delivery: str, digest: str) -> bool:
        keys = [k for k in (delivery, digest) if k]
        with self._tx() as db:
            marks = ",".join("?" * len(keys))
            if db.execute(f"SELECT 1 FROM deliveries WHERE key IN ({marks})", keys).fetchone():
                return False
            db.executemany("INSERT INTO deliveries (key, at) VALUES (?, ?)", [(k, time.time()) for k in keys])
        return True

    async def forget_delivery(self, delivery: str, digest: str) -> None:
        self._db.execute("DELETE FROM deliveries WHERE key IN (?, ?)", (delivery, digest))

    async def note_head(self, pr: str, repo: str, number: int, head: str) -> None:
        with self._tx() as db:
            db.execute("INSERT OR REPLACE INTO latest (pr, head) VALUES (?, ?)", (pr, head))
            db.execute(
                "INSERT OR REPLACE INTO pr_heads (repo, head, number, at) VALUES (?, ?, ?, ?)",
                (repo, head, number, time.time()),
            )

    async def latest_head(self, pr: str) -> str | None:
        row = self._db.execute("SELECT head FROM latest WHERE pr = ?", (pr,)).fetchone()
        return str(row[0]) if row else None

    async def pr_for_head(self, repo: str, head: str) -> int | None:
        row = self._db.execute("SELECT number FROM pr_heads WHERE repo = ? AND head = ?", (repo, head)).fetchone()
        return int(row[0]) if row else None

    # -- jobs ----------------------------------------------------------------------------------------------
    async def submit(self, job: Job) -> str:
        with self._tx() as db:
            if not job.force and job.head:
                try:
                    db.execute("INSERT INTO heads (pr, head, at) VALUES (?, ?, ?)", (job.pr, job.head, time.time()))
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
                "INSERT INTO jobs (id, pr, head, force, body, state, kind, attempts, created) "
                "VALUES (?, ?, ?, ?, ?, 'queued', ?, ?, ?)",
                (job.id, job.pr, job.head, int(job.force), json.dumps(job.to_json()), job.kind, 0, time.time()),
            )
        self._kick(job.pr)
        return "replaced" if old else "queued"

    async def depth(self) -> int:
        return int(self._db.execute("SELECT COUNT(*) FROM jobs").fetchone()[0])

    def _kick(self, pr: str) -> None:
        if self._runner is None or self._stopping or pr in self._loops:
            return
        task = asyncio.get_running_loop().create_task(self._pr_loop(pr))
        self._loops[pr] = task

    def _next(self, pr: str) -> Job | None:
        with self._tx() as db:
            # A concluding job first (it belongs to an older head), then the PR's one waiting review.
            row = db.execute(
                "SELECT id, body, attempts, kind FROM jobs WHERE pr = ? AND state = 'queued' "
                "ORDER BY kind = ?, created LIMIT 1",
                (pr, REVIEW),
            ).fetchone()
            if row is None:
                return None
            db.execute("UPDATE jobs SET state = 'running' WHERE id = ?", (row[0],))
        data = json.loads(row[1])
        return Job.from_json({**data, "attempts": row[2], "kind": row[3]})

    def stopping(self) -> bool:
        """Whether close() has begun (a call, so that type checkers do not narrow it across an await)."""
        return self._stopping

    async def _pr_loop(self, pr: str) -> None:
        """Runs the PR's jobs one after the other, each taking a slot of the concurrency gate."""
        assert self._gate is not None and self._runner is not None
        try:
            while not self._stopping:
                async with self._gate:
                    if self.stopping():  # close() may have run while this loop waited for the gate
                        return
                    job = self._next(pr)
                    if job is None:
                        return
                    ok = False
                    try:
                        await self._runner(job)
                        ok = True
                    except asyncio.CancelledError:
                        log.warning("job %s for %s cancelled", job.id, pr)
                        raise
                    except Exception:
                        log.exception("job %s for %s failed", job.id, pr)
                    finally:
                        self._finish(job, ok)
        finally:
            self._loops.pop(pr, None)

    def _finish(self, job: Job, ok: bool) -> None:
        with self._tx() as db:
            db.execute("DELETE FROM jobs WHERE id = ?", (job.id,))
            if not ok and job.kind == REVIEW:
                # Failed: forgotten, so that a redelivery (or the same head's next event) reviews it again.
                if job.head and not job.force:
                    db.execute("DELETE FROM heads WHERE pr = ? AND head = ?", (job.pr, job.head))
                db.execute("DELETE FROM deliveries WHERE key IN (?, ?)", (job.delivery, job.digest))

    async def drain(self, timeout: float) -> None:
        self._stopping = True
        await drain_tasks(self._loops.values(), timeout)

    async def close(self) -> None:
        self._db.close()
