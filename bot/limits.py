"""Per-installation limits on content-creating requests, over GitHub's one-minute and one-hour windows, shared
fairly by the installation's repositories.

GitHub's secondary rate limits: "No more than 80 content-generating requests per minute and no more than 500
content-generating requests per hour are allowed" (REST and GraphQL together), on top of the primary limit.
https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#about-secondary-rate-limits
We stay below both (70 and 450 by default), per installation, counted in sliding windows: a burst goes at once
while the windows have room, and waits only when one is full. Reads are not counted (they are bounded by the
concurrency cap in bot/github.py). With Redis the windows are shared by every replica (bot/queue_redis.py).

Fairness: the window belongs to the installation, but one busy repository must not starve the others (a push
storm in one repository would otherwise hold a review elsewhere for up to a minute). So no repository may take the
last eighth of a window (`reserve`), and that reserve goes only to repositories below an equal share of the
window (its limit / the repositories that used it in the window). A repository alone still gets seven eighths.
"""

from __future__ import annotations

import asyncio
import time
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Protocol

from npu_review.bot.fairgate import waiting_without_slot

GITHUB_PER_MINUTE = 80
GITHUB_PER_HOUR = 500
DEFAULT_PER_MINUTE = 70
DEFAULT_PER_HOUR = 450
MINUTE_S = 60.0
HOUR_S = 3600.0


def reserve(limit: int) -> int:
    """The top of a window kept for repositories below their share (an eighth, at least one request)."""
    return max(1, limit // 8) if limit > 1 else 0


class WindowStore(Protocol):
    """Sliding windows per scope: an installation id (content-creating requests), or a name (bot/services.py's
    `/recheck` budgets)."""

    async def take(self, installation_id: int | str, limits: tuple[tuple[float, int], ...], repo: str = "") -> float:
        """Counts one request (of `repo`, "" for none in particular) if every window has room for it (returns
        0), else the seconds until one may have."""

    async def used(self, installation_id: int | str, limits: tuple[tuple[float, int], ...]) -> list[int]:
        """Requests counted in each window now."""


def verdict(now: float, stamps: Sequence[tuple[float, str]], window: float, limit: int, repo: str) -> float:
    """0 when `repo` may take a request in this window (stamps: (time, repo), oldest first), else the seconds
    until that may change. The same rule runs in Redis (queue_redis.WINDOW_TAKE)."""
    inside = [(t, r) for t, r in stamps if t > now - window]
    total = len(inside)
    if total >= limit:
        return inside[total - limit][0] + window - now
    if not repo:
        return 0.0
    keep = reserve(limit)
    mine = [t for t, r in inside if r == repo]
    if len(mine) >= limit - keep:  # no repository takes the reserve for itself
        return mine[len(mine) - (limit - keep)] + window - now
    if total < limit - keep:
        return 0.0
    active = len({r for _, r in inside if r} | {repo})
    if len(mine) < limit / active:  # below an equal share: the reserve is for this
        return 0.0
    return inside[total - (limit - keep)][0] + window - now


class LocalWindows:
    """The windows of one process (the embedded queue's single server)."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._stamps: dict[int | str, deque[tuple[float, str]]] = {}

    def _trim(self, installation_id: int | str, longest: float) -> deque[tuple[float, str]]:
        stamps = self._stamps.setdefault(installation_id, deque())
        now = self._clock()
        while stamps and stamps[0][0] <= now - longest:
            stamps.popleft()
        return stamps

    async def take(self, installation_id: int | str, limits: tuple[tuple[float, int], ...], repo: str = "") -> float:
        stamps = self._trim(installation_id, max(w for w, _ in limits))
        now = self._clock()
        wait = max(verdict(now, stamps, window, limit, repo) for window, limit in limits)
        if wait > 0:
            return wait
        stamps.append((now, repo))
        return 0.0

    async def used(self, installation_id: int | str, limits: tuple[tuple[float, int], ...]) -> list[int]:
        stamps = self._trim(installation_id, max(w for w, _ in limits))
        now = self._clock()
        return [sum(1 for t, _ in stamps if t > now - window) for window, _ in limits]


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

    async def acquire(self, installation_id: int, repo: str = "") -> float:
        """Waits until a content-creating request for the installation (from `repo`) fits both windows; the
        seconds waited."""
        waited = 0.0
        while True:
            wait = await self.store.take(installation_id, self.limits, repo)
            if wait <= 0:
                return waited
            wait = min(wait, MINUTE_S) + 0.01
            # The job's review slot goes to another job meanwhile (bot/fairgate.py): waiting holds nothing.
            await waiting_without_slot(self._sleep(wait))
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
