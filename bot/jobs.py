"""Tracked background work: every task is kept, drained on shutdown; one run per key at a time, newest wins.

`JobQueue` is the small interface the webhook needs; `InProcessQueue` is its default. A shared queue (Redis,
a database) can replace it when one server is not enough.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Hashable
from dataclasses import dataclass
from typing import Protocol

log = logging.getLogger(__name__)

JobFactory = Callable[[], Awaitable[None]]
# Called once per submitted job: True when it ran and succeeded, or when a newer job for the same key
# took its place (its work is done by that one); False when it failed.
DoneCallback = Callable[[bool], None]


class JobQueue(Protocol):
    def submit(self, key: Hashable, job: JobFactory, on_done: DoneCallback | None = None) -> None: ...

    def depth(self) -> int: ...

    async def drain(self, timeout: float) -> None: ...


@dataclass
class _Pending:
    job: JobFactory
    on_done: DoneCallback | None


class InProcessQueue:
    """Runs jobs as asyncio tasks. Per key, one runs and at most one waits; a newer submission replaces the
    waiting one (a burst of pushes ends in one run for the newest head)."""

    def __init__(self, concurrency: int = 4) -> None:
        self._gate = asyncio.Semaphore(concurrency)
        self._tasks: set[asyncio.Task[None]] = set()
        self._running: set[Hashable] = set()
        self._waiting: dict[Hashable, _Pending] = {}
        self._closed = False
        self._cancelling = False

    def depth(self) -> int:
        return len(self._running) + len(self._waiting)

    @property
    def closed(self) -> bool:
        return self._closed

    def submit(self, key: Hashable, job: JobFactory, on_done: DoneCallback | None = None) -> None:
        if self._closed:
            raise RuntimeError("the queue is shutting down")
        if key in self._running:
            replaced = self._waiting.get(key)
            self._waiting[key] = _Pending(job, on_done)
            if replaced is not None and replaced.on_done is not None:
                replaced.on_done(True)  # superseded by the newer job
            return
        self._start(key, _Pending(job, on_done))

    def _start(self, key: Hashable, item: _Pending) -> None:
        self._running.add(key)
        task = asyncio.get_running_loop().create_task(self._run(key, item))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _run(self, key: Hashable, item: _Pending) -> None:
        ok = False
        try:
            async with self._gate:
                await item.job()
            ok = True
        except asyncio.CancelledError:
            log.warning("job %r cancelled", key)
            raise
        except Exception:
            log.exception("job %r failed", key)
        finally:
            self._running.discard(key)
            if item.on_done is not None:
                item.on_done(ok)
            nxt = self._waiting.pop(key, None)
            if nxt is not None and not self._cancelling:
                # Accepted work runs even while draining; the drain deadline cancels what is left.
                self._start(key, nxt)
            elif nxt is not None and nxt.on_done is not None:
                nxt.on_done(False)

    async def drain(self, timeout: float) -> None:
        """Stop taking jobs; wait for running ones (and those waiting behind them) up to `timeout` seconds,
        then cancel what is left (a cancelled review still completes its check run)."""
        self._closed = True
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._tasks:
            left = deadline - loop.time()
            if left <= 0:
                break
            await asyncio.wait(set(self._tasks), timeout=left)
        self._cancelling = True
        for t in list(self._tasks):
            t.cancel()
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=10)
        for item in self._waiting.values():
            if item.on_done is not None:
                item.on_done(False)
        self._waiting.clear()
