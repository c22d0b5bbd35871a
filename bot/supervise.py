"""Supervised background tasks: none is created bare. A task that ends with an exception is logged and started
again after a pause; one that keeps crashing is given up, and then /healthz fails (bot/app.py) so that an
orchestrator restarts the process instead of leaving it up and deaf."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Coroutine
from typing import Any

from npu_review.bot.clock import SYSTEM_CLOCK, Clock

log = logging.getLogger(__name__)

# A crashed loop is started again after these pauses (doubling); this many crashes in a row, each within
# STABLE_S of its start, and it is given up (the process reports unhealthy).
RESTART_DELAY_S = 1.0
RESTART_DELAY_MAX_S = 30.0
MAX_CRASHES = 5
STABLE_S = 60.0


class Supervisor:
    """Owns long-running loops (restarted when they crash) and one-shot tasks (logged when they fail)."""

    def __init__(self, name: str, clock: Clock = SYSTEM_CLOCK) -> None:
        self.name = name
        self._clock = clock
        self._tasks: set[asyncio.Task[Any]] = set()
        self.dead: dict[str, str] = {}  # loop name -> why it was given up
        self.restarts = 0

    def loop(self, name: str, factory: Callable[[], Awaitable[None]]) -> asyncio.Task[None]:
        """Runs `factory()` until it returns or is cancelled; restarts it when it raises."""
        return self._track(self._keep(name, factory), name)

    def spawn(self, name: str, coro: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]:
        """A one-shot task: tracked (drained and cancelled on close) and its failure logged."""
        task = self._track(coro, name)
        task.add_done_callback(self._report)
        return task

    def _track(self, coro: Coroutine[Any, Any, Any], name: str) -> asyncio.Task[Any]:
        task = asyncio.get_running_loop().create_task(coro, name=f"{self.name}:{name}")
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        return task

    @staticmethod
    def _report(task: asyncio.Task[Any]) -> None:
        if not task.cancelled() and task.exception() is not None:
            log.error("background task %s failed", task.get_name(), exc_info=task.exception())

    async def _keep(self, name: str, factory: Callable[[], Awaitable[None]]) -> None:
        crashes = 0
        delay = RESTART_DELAY_S
        while True:
            started = self._clock.monotonic()
            try:
                await factory()
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                crashes = 1 if self._clock.monotonic() - started > STABLE_S else crashes + 1
                if crashes >= MAX_CRASHES:
                    self.dead[name] = f"{type(exc).__name__}: {exc}"[:200]
                    log.critical(
                        "background loop %s crashed %d times in a row; giving up", name, crashes, exc_info=True
                    )
                    return
                self.restarts += 1
                log.error("background loop %s crashed; restarting in %.0f s", name, delay, exc_info=True)
                await self._clock.sleep(delay)
                delay = min(delay * 2, RESTART_DELAY_MAX_S)

    def running(self) -> int:
        return len(self._tasks)

    def tasks(self) -> set[asyncio.Task[Any]]:
        return set(self._tasks)

    async def cancel_all(self, timeout: float = 10) -> None:
        tasks = self.tasks()
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=timeout)
