"""Per-installation limits on content-creating requests, over GitHub's one-minute and one-hour windows.

GitHub's secondary rate limits: "No more than 80 content-generating requests per minute and no more than 500
content-generating requests per hour are allowed" (REST and GraphQL together), on top of the primary limit.
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits
We stay below both (70 and 450 by default), per installation, counted in sliding windows: a burst goes at once
while the windows have room, and waits only when one is full. Reads are not counted (they are bounded by the
concurrency cap in bot/github.py). With Redis the windows are shared by every replica (bot/queue_redis.py).
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable
from typing import Protocol

GITHUB_PER_MINUTE = 80
GITHUB_PER_HOUR = 500
DEFAULT_PER_MINUTE = 70
DEFAULT_PER_HOUR = 450
MINUTE_S = 60.0
HOUR_S = 3600.0


class WindowStore(Protocol):
    async def take(self, installation_id: int, limits: tuple[tuple[float, int], ...]) -> float:
        """Counts one request if every window has room (returns 0), else the seconds until one has."""

    async def used(self, installation_id: int, limits: tuple[tuple[float, int], ...]) -> list[int]:
        """Requests counted in each window now."""


class LocalWindows:
    """The windows of one process (the embedded queue's single server)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._stamps: dict[int, deque[float]] = {}

    def _trim(self, installation_id: int, longest: float) -> deque[float]:
        stamps = self._stamps.setdefault(installation_id, deque())
        now = self._clock()
        while stamps and stamps[0] <= now - longest:
            stamps.popleft()
        return stamps

    async def take(self, installation_id: int, limits: tuple[tuple[float, int], ...]) -> float:
        stamps = self._trim(installation_id, max(w for w, _ in limits))
        now = self._clock()
        wait = 0.0
        for window, limit in limits:
            inside = [t for t in stamps if t > now - window]
            if len(inside) >= limit:
                wait = max(wait, inside[len(inside) - limit] + window - now)
        if wait > 0:
            return wait
        stamps.append(now)
        return 0.0

    async def used(self, installation_id: int, limits: tuple[tuple[float, int], ...]) -> list[int]:
        stamps = self._trim(installation_id, max(w for w, _ in limits))
        now = self._clock()
        return [sum(1 for t in stamps if t > now - window) for window, _ in limits]


class MutationLimiter:
    def __init__(
        self,
        store: WindowStore | None = None,
        per_minute: int = DEFAULT_PER_MINUTE,
        per_hour: int = DEFAULT_PER_HOUR,
        sleep: Callable[[float], Awaitable[object]] = asyncio.sleep,
    ) -> None:
        self.store = store or LocalWindows()
        self.limits = ((MINUTE_S, per_minute), (HOUR_S, per_hour))
        self._sleep = sleep

    async def acquire(self, installation_id: int) -> float:
        """Waits until a content-creating request for the installation fits both windows; the seconds waited."""
        waited = 0.0
        while True:
            wait = await self.store.take(installation_id, self.limits)
            if wait <= 0:
                return waited
            wait = min(wait, MINUTE_S) + 0.01
            await self._sleep(wait)
            waited += wait

    async def budget(self, installation_id: int) -> dict[str, int]:
        """What is left of each window for the installation (for the status page and /metrics)."""
        used = await self.store.used(installation_id, self.limits)
        return {
            "per_minute_left": max(0, self.limits[0][1] - used[0]),
            "per_hour_left": max(0, self.limits[1][1] - used[1]),
            "per_minute": self.limits[0][1],
            "per_hour": self.limits[1][1],
        }
