"""A concurrency gate that hands its free slots round-robin across repositories: a burst of reviews in one
repository waits behind itself, not in front of another repository's single review."""

from __future__ import annotations

import asyncio
import contextlib
from collections import OrderedDict, deque
from collections.abc import AsyncIterator


class FairGate:
    def __init__(self, slots: int) -> None:
        self._free = slots
        # Waiters per repository, repositories in the order they are to be served next.
        self._waiting: OrderedDict[str, deque[asyncio.Future[None]]] = OrderedDict()

    @contextlib.asynccontextmanager
    async def slot(self, repo: str) -> AsyncIterator[None]:
        await self._acquire(repo)
        try:
            yield
        finally:
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
