"""The embedded queue's worker process: `npu-review serve` with a SQLite queue file starts one beside itself and
supervises it, so that no review (its GitHub I/O, its payloads, its SQLite bookkeeping) runs on the event loop
that acknowledges deliveries. Both processes open the same queue file (WAL); the server only accepts jobs.

They share a socket pair, one JSON document a line:
  server -> worker   {"settings": {...}} first (the server's settings, so both work from the same ones);
                     {"kick": "<pr>"} when a job of that PR was stored; {"sync": n} to ask for the numbers
  worker -> server   {"ready": pid}; {"sync": n, "snapshot": {...}} its metrics, reviews, the rate-limit budgets
                     GitHub reported and its problems (for /metrics, the status page and /healthz)
The server restarts a worker that exits (bot/supervise.py: given up after repeated crashes, which fails
/healthz) and, on SIGTERM, forwards it and waits while the worker finishes its running reviews. A worker whose
server is gone (the socket closed: SIGKILL, out of memory) exits at once, as the reviews did with the server
before: what it was running is resumed by the next worker of the file, which holds the file's lock.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import logging
import os
import signal
import socket
import sys
from collections.abc import Mapping
from typing import Any

from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.metrics import Metrics
from npu_review.bot.settings import Settings, settings_from_json, settings_to_json
from npu_review.bot.status import ReviewLog
from npu_review.bot.supervise import Supervisor

log = logging.getLogger(__name__)

# How long the server waits for the worker's numbers before it answers /metrics, /healthz or the status page
# with the last ones it has.
SYNC_TIMEOUT_S = 1.0
# The worker looks for jobs queued in the file this often, beside the server's kicks (a kick lost while it
# restarted, or a job another process stored).
POLL_S = 5.0
# ... and copies the queue file's WAL back into the file this often (the server never does: bot/queue_sqlite.py).
CHECKPOINT_S = 1.0
# A line of the socket protocol is at most this long (the settings, a snapshot of 50 reviews: a few kB).
LINE_LIMIT = 4 * 1024 * 1024


class WorkerExited(RuntimeError):
    """The worker process ended while the server was not stopping: the supervisor starts another."""


class EmbeddedWorker:
    """The server's side: starts the worker process, tells it of new jobs, asks for its numbers, restarts it when
    it dies and stops it on shutdown. `history` (the status page's) shows the reviews the workers ran."""

    # The worker process's command line, the socket's descriptor number appended.
    command: tuple[str, ...] = (sys.executable, "-m", "npu_review.bot.embedded")

    def __init__(self, settings: Settings, history: ReviewLog, clock: Clock = SYSTEM_CLOCK) -> None:
        self.settings = settings
        self.history = history
        self.supervisor = Supervisor("embedded", clock)
        self.metrics = Metrics()  # every worker's counters since the server started
        self.budgets: dict[int, tuple[int, int, int]] = {}
        self.pid: int | None = None
        self._problems: list[str] = []
        # What the workers that ended had counted; the running one's last snapshot.
        self._ended: list[dict[str, Any]] = []
        self._current: dict[str, Any] = {}
        self._proc: asyncio.subprocess.Process | None = None
        self._writer: asyncio.StreamWriter | None = None
        self._ready = asyncio.Event()
        self._stopping = False
        self._sync_seq = 0
        self._pending: dict[int, asyncio.Future[None]] = {}

    def start(self) -> None:
        self.supervisor.loop("worker process", self._run)

    async def wait_ready(self, timeout: float) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), timeout)
        return self._ready.is_set()

    def kick(self, pr: str) -> None:
        """A job of this PR was stored: the worker starts it now (a worker not connected finds it on start)."""
        self._send({"kick": pr})

    async def refresh(self, timeout: float = SYNC_TIMEOUT_S) -> None:
        """Asks the worker for its numbers and waits for them (at most `timeout`; then the last ones stand)."""
        if self._writer is None or not self._ready.is_set():
            return
        self._sync_seq += 1
        seq = self._sync_seq
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._pending[seq] = future
        self._send({"sync": seq})
        try:
            await asyncio.wait_for(future, timeout)
        except TimeoutError:
            log.warning("the worker process did not answer within %.1f s", timeout)
        finally:
            self._pending.pop(seq, None)

    def problems(self) -> list[str]:
        out = [f"the worker process is given up: {why}" for why in self.supervisor.dead.values()]
        return out + list(self._problems)

    async def stop(self, timeout: float) -> None:
        """SIGTERM to the worker, which finishes its running reviews (bot/app.py's deadline); waits for it."""
        self._stopping = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(proc.wait(), timeout)
            except TimeoutError:
                log.error("the worker process did not stop within %.0f s; killing it", timeout)
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                await proc.wait()
        await self.supervisor.cancel_all()

    def _send(self, message: Mapping[str, Any]) -> None:
        writer = self._writer
        if writer is None or writer.is_closing():
            return
        writer.write(json.dumps(message).encode() + b"\n")

    async def _run(self) -> None:
        ours, theirs = socket.socketpair()
        try:
            self._proc = await asyncio.create_subprocess_exec(
                *self.command, str(theirs.fileno()), pass_fds=(theirs.fileno(),)
            )
        finally:
            theirs.close()
        proc = self._proc
        self.pid = proc.pid
        log.info("started the worker process (pid %d)", proc.pid)
        reader, writer = await asyncio.open_unix_connection(sock=ours, limit=LINE_LIMIT)
        self._writer = writer
        try:
            self._send({"settings": settings_to_json(self.settings)})
            with contextlib.suppress(ConnectionError):  # a worker that died before reading what it was sent
                while line := await reader.readline():
                    self._receive(json.loads(line))
        finally:
            self._writer = None
            self._ready.clear()
            writer.close()
            for future in self._pending.values():
                if not future.done():
                    future.set_result(None)
            code = await proc.wait()
            self._ended.append(self._current)
            self._current = {}
            self._problems = []
        if not self._stopping:
            raise WorkerExited(f"the worker process (pid {proc.pid}) exited with status {code}")

    def _receive(self, message: Mapping[str, Any]) -> None:
        if "ready" in message:
            log.info("the worker process (pid %s) runs the reviews", message["ready"])
            self._ready.set()
        snapshot = message.get("snapshot")
        if isinstance(snapshot, dict):
            self._current = snapshot
            self._problems = [str(p) for p in snapshot.get("problems", [])]
            self.budgets = {int(k): (int(v[0]), int(v[1]), int(v[2])) for k, v in snapshot["budgets"].items()}
            parts = [*self._ended, self._current]
            self.metrics = Metrics.total(Metrics.from_snapshot(p.get("metrics", {})) for p in parts)
            self.history.load([p.get("history", {}) for p in parts])
        future = self._pending.get(int(message.get("sync", 0)))
        if future is not None and not future.done():
            future.set_result(None)


# ---------------------------------------------------------------------------------------------------------
# The worker process: `python -m npu_review.bot.embedded FD` (started by EmbeddedWorker, never by hand).
# ---------------------------------------------------------------------------------------------------------


def _lock(path: str) -> int:
    """Holds the queue file's worker lock (one worker a file), waiting while another worker still has it."""
    fd = os.open(path + ".worker-lock", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        log.warning("another worker still runs the jobs of %s; waiting for it to stop", path)
        fcntl.flock(fd, fcntl.LOCK_EX)
    return fd


async def _work(fd: int) -> None:
    import aiohttp

    from npu_review.bot import logs
    from npu_review.bot.app import SHUTDOWN_DEADLINE_S
    from npu_review.bot.assemble import HTTP_TIMEOUT, make_store, start_reviewing
    from npu_review.bot.engine_pool import lower_priority
    from npu_review.bot.jobs import StorageUnavailable
    from npu_review.bot.queue_sqlite import SqliteStore, path_from_url

    reader, writer = await asyncio.open_unix_connection(sock=socket.socket(fileno=fd), limit=LINE_LIMIT)
    first = await reader.readline()
    if not first:
        return  # the server went away before it said anything
    settings = settings_from_json(json.loads(first)["settings"])
    logs.setup(json_lines=settings.log_json)
    lower_priority()  # the server that acknowledges deliveries comes first
    lock = await asyncio.to_thread(_lock, path_from_url(settings.queue_url))
    session = aiohttp.ClientSession(timeout=HTTP_TIMEOUT)
    store = make_store(settings)
    assert isinstance(store, SqliteStore)
    services, stop = await start_reviewing(settings, session, store)

    def snapshot() -> dict[str, Any]:
        budgets = services.github.rate_budgets()
        return {
            "metrics": services.metrics.snapshot(),
            "history": services.history.snapshot(),
            "budgets": {str(k): list(v) for k, v in budgets.items()},
            "problems": store.problems(),
        }

    def send(message: Mapping[str, Any]) -> None:
        if not writer.is_closing():
            writer.write(json.dumps(message).encode() + b"\n")

    async def listen() -> None:
        while line := await reader.readline():
            message = json.loads(line)
            if "kick" in message:
                store.jobs.wake(str(message["kick"]))
            if "sync" in message:
                send({"sync": message["sync"], "snapshot": snapshot()})
        if not stop.is_set():
            # The server is gone (killed): end now, as the reviews did with it; the next worker resumes them.
            log.error("the server went away; the worker process ends, its running jobs are resumed by the next")
            os._exit(1)

    async def poll() -> None:
        while True:
            await asyncio.sleep(POLL_S)
            store.jobs.wake()

    async def checkpoint() -> None:
        while True:
            await asyncio.sleep(CHECKPOINT_S)
            try:
                store.db.checkpoint()  # on this loop: the worker's, whose reviews may wait an fsync
            except StorageUnavailable as exc:
                log.warning("checkpointing the queue file failed (%s); trying again", exc)

    await store.jobs.open(services.run_job)
    tasks = [asyncio.ensure_future(listen()), asyncio.ensure_future(poll()), asyncio.ensure_future(checkpoint())]
    send({"ready": os.getpid()})
    log.info("worker process ready: %d reviews at once", settings.max_concurrent_reviews)
    await stop.wait()
    tasks[1].cancel()
    tasks[2].cancel()
    log.info("stopping: finishing running reviews (up to %.0f s)", SHUTDOWN_DEADLINE_S)
    await store.jobs.drain(SHUTDOWN_DEADLINE_S)
    send({"snapshot": snapshot()})
    await services.reviewer.engine.close()
    await store.close()
    await session.close()
    tasks[0].cancel()
    with contextlib.suppress(ConnectionError):
        await writer.drain()
    writer.close()
    os.close(lock)


def main(argv: list[str]) -> int:
    asyncio.run(_work(int(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
