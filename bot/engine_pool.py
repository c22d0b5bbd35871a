"""The rules run off the event loop that acknowledges deliveries: in a pool of processes by default, so that a
review's CPU (parsing, every rule) never delays a 202, whatever the review load. With 0 processes they run in a
thread of this process (tests, a small machine)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import multiprocessing
import os
import threading
import time
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool

from npu_review.checks import ChangeSet, Config, diskcache
from npu_review.checks.context import ParseCache
from npu_review.checks.engine import Report, run, warm_up

log = logging.getLogger(__name__)


class EngineCrashed(RuntimeError):
    """A pool process died under a review (killed, out of memory): the job is tried again later."""

    retry_later = True


def default_processes(concurrency: int) -> int:
    """One process per core, at most one per review that may run at once."""
    return max(1, min(os.cpu_count() or 1, concurrency))


# The pool's processes (and the embedded queue's worker process, bot/embedded.py) run at this lower CPU priority:
# on a busy machine the kernel serves the process that acknowledges deliveries first, and the reviews take what
# is left (they wait in a queue anyway).
NICENESS = 10


def lower_priority() -> None:
    """This process to NICENESS (from a parent that already runs there, no lower)."""
    with contextlib.suppress(OSError):
        os.nice(max(0, NICENESS - os.nice(0)))


# A pool process checks this often that the server it works for is alive, and ends when it is not: a server killed
# outright (SIGKILL, OOM) would otherwise leave its pool processes waiting on a queue nobody writes to.
PARENT_CHECK_S = 2.0


def _start_worker(server_pid: int) -> None:
    lower_priority()
    # What a review derives from a file it does not change (a workflow's image products and builds, the kinds of
    # the tree's paths) is kept in this process, by git object id, for the next review of the same repository.
    diskcache.keep_in_memory(KEPT_ENTRIES)
    threading.Thread(target=_watch_server, args=(server_pid,), name="watch-server", daemon=True).start()
    _warm()


def _watch_server(server_pid: int) -> None:
    while True:
        time.sleep(PARENT_CHECK_S)
        try:
            os.kill(server_pid, 0)
        except ProcessLookupError:
            os._exit(0)
        except OSError:
            pass


_WARMED = False


def _warm() -> None:
    # Every rule imported and a small change of each file kind reviewed once per process, not on the first review's
    # clock (the first review of a 1,200-file repository's 20-file PR: 0.64 s -> 0.58 s in the engine).
    global _WARMED
    if not _WARMED:
        warm_up()
        _WARMED = True


# The parses of this process's reviews, kept for the next (checks.context.ParseCache): a push to a PR, or another PR
# on the same base, finds the unchanged files' parses here. Bounded by the text it holds (~10x that in memory).
PARSES_TEXT_CHARS = 8 << 20
_PARSES: ParseCache | None = None


# The most entries each store of derived values holds in a review process (checks.diskcache.keep_in_memory).
KEPT_ENTRIES = 20_000


def _run(changeset: ChangeSet, config: Config) -> Report:
    global _PARSES
    if _PARSES is None:
        _PARSES = ParseCache(PARSES_TEXT_CHARS)
        diskcache.keep_in_memory(KEPT_ENTRIES)  # (a review in the server's own threads: processes = 0)
    return run(changeset, config, time.monotonic, parses=_PARSES)


class Engine:
    def __init__(self, processes: int) -> None:
        self.processes = processes
        self._pool: ProcessPoolExecutor | None = None

    def _executor(self) -> ProcessPoolExecutor:
        if self._pool is None:
            # forkserver: the workers are not forks of a process with an event loop and threads.
            context = multiprocessing.get_context("forkserver")
            self._pool = ProcessPoolExecutor(
                self.processes, mp_context=context, initializer=_start_worker, initargs=(os.getpid(),)
            )
        return self._pool

    async def start(self) -> None:
        """Starts the pool's processes now (their imports off the first review's path)."""
        if self.processes > 0:
            loop = asyncio.get_running_loop()
            pool = self._executor()
            await asyncio.gather(*(loop.run_in_executor(pool, _warm) for _ in range(self.processes)))

    async def run(self, changeset: ChangeSet, config: Config) -> Report:
        if self.processes <= 0:
            return await asyncio.to_thread(_run, changeset, config)
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(self._executor(), _run, changeset, config)
        except BrokenProcessPool:
            log.error("a review process died; starting a new pool")
            pool, self._pool = self._pool, None
            if pool is not None:
                pool.shutdown(wait=False, cancel_futures=True)
            raise EngineCrashed("a review process died") from None

    async def close(self) -> None:
        pool, self._pool = self._pool, None
        if pool is not None:
            await asyncio.to_thread(pool.shutdown, True, cancel_futures=True)
