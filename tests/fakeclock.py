"""A clock for the App's durable work that tests move by hand: hours of backoff pass in milliseconds.

`advance(s)` moves time at once and wakes every sleeper whose time has come (as a suspended process would find
on waking); the woken tasks then do their real I/O (Redis, the fake GitHub) in real time."""

from __future__ import annotations

import asyncio
import heapq
import itertools
from collections.abc import Callable


class FakeClock:
    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self.start = start
        self.now = start
        self._sleepers: list[tuple[float, int, asyncio.Future[None]]] = []
        self._seq = itertools.count()

    def time(self) -> float:
        return self.now

    def monotonic(self) -> float:
        return self.now - self.start + 1000.0

    async def sleep(self, seconds: float) -> None:
        if seconds <= 0:
            await asyncio.sleep(0)
            return
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        heapq.heappush(self._sleepers, (self.now + seconds, next(self._seq), future))
        await future

    def sleepers(self) -> int:
        return sum(1 for _, _, f in self._sleepers if not f.done())

    async def advance(self, seconds: float) -> None:
        self.now += seconds
        while self._sleepers and self._sleepers[0][0] <= self.now:
            _, _, future = heapq.heappop(self._sleepers)
            if not future.done():
                future.set_result(None)
        for _ in range(3):
            await asyncio.sleep(0)


async def eventually(pred: Callable[[], bool], timeout: float = 20, what: str = "condition") -> None:
    """Polls a condition in real time (for real I/O to finish), failing after `timeout` seconds."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not pred():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


async def run_until(clock: FakeClock, pred: Callable[[], bool], nudge: float = 0.5, timeout: float = 20) -> None:
    """Polls a condition in real time, moving the clock on by `nudge` seconds between looks: a loop that went to
    sleep just after an advance (from the time it read before it) is woken too."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not pred():
        if loop.time() > deadline:
            raise AssertionError("timed out")
        await asyncio.sleep(0.01)
        if not pred():
            await clock.advance(nudge)
