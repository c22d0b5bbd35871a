"""A concurrency gate that hands its free slots round-robin across repositories: a burst of reviews in one
repository waits behind itself, not in front of another repository's single review."""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
from collections import OrderedDict, deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


class FairGate:
    def __init__(self, slots: int) -> None:
        self._free = slots
        # Waiters per repository, repositories in the order they are to be served next.
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @contextlib.asynccontextmanager
    async def slot(self, repo: str) -> AsyncIterator[None]:
        """Holds a slot for `repo`'s job; the job may lend it back while it waits (waiting_without_slot)."""
        await self._acquire(repo)
        token = HELD.set(Lender(self._release, lambda: self._acquire(repo)))
        try:
            yield
        finally:
            HELD.reset(token)
            self._release()

    async def _acquire(self, repo: str) -> None:
        if self._free > 0 and not self._waiting:
            self._free -= 1
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiting.setdefault(repo, deque()).append(future)
        try:
            await future
        except asyncio.CancelledError:
            if future.done() and not future.cancelled():
                self._release()  # granted as it was cancelled: hand the slot on
            else:
                queue = self._waiting.get(repo)
                if queue is not None and future in queue:
                    queue.remove(future)
                    if not queue:
                        del self._waiting[repo]
            raise

    def _release(self) -> None:
        while self._waiting:
            repo, queue = next(iter(self._waiting.items()))
            future = queue.popleft()
            if queue:
                self._waiting.move_to_end(repo)  # its next waiter comes after the other repositories'
            else:
                del self._waiting[repo]
            if not future.done():
                future.set_result(None)
                return
        self._free += 1


class Lender:
    """A job's hold on its review slot, lent back while the job only waits (for room in the installation's
    content-creating window): a repository whose reviews all wait for that window must not keep the slots
    another repository's review needs. The first waiter of the job gives the slot back, the last takes it again."""

    def __init__(self, release: Callable[[], None], acquire: Callable[[], Awaitable[object]]) -> None:
        self._release = release
        self._acquire = acquire
        self._waiting = 0
        self._lock = asyncio.Lock()

    async def wait(self, waiting: Awaitable[T]) -> T:
        async with self._lock:
            self._waiting += 1
            if self._waiting == 1:
                self._release()
        try:
            return await waiting
        finally:
            async with self._lock:
                self._waiting -= 1
                if self._waiting == 0:
                    await self._acquire()


# The slot of the job running in this task (and the tasks it starts), None outside a job.
HELD: contextvars.ContextVar[Lender | None] = contextvars.ContextVar("npu_review_review_slot", default=None)


async def waiting_without_slot(waiting: Awaitable[T]) -> T:
    """Awaits `waiting` with the current job's review slot lent back (just awaits it outside a job)."""
    lender = HELD.get()
    if lender is None:
        return await waiting
    return await lender.wait(waiting)
