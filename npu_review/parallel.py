"""Shares of a whole-tree audit in worker processes: the engine's `ShareMapper` over a fork-based pool.

Fork, because the task is a closure over the change set and the rules' state, which need not (and cannot all)
be pickled: each child starts as a copy of this process. Only the results (`Partial`: hits, suppression
directives, counts) travel back. Git readers reopen their `cat-file` process in each child (gitsource).
`concurrent.futures` rather than `multiprocessing.Pool`: when a worker dies (killed for memory, say) the
executor says so, where a Pool waits forever for the lost share. The run then finishes in this process.
`multiprocessing` and the executor are imported when a run is shared out, not by a review too small for it.
"""

from __future__ import annotations

import gc
import logging
import os
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from npu_review.checks.engine import Partial

log = logging.getLogger(__name__)

_TASK: Callable[[int], Partial] | None = None


def _start_worker() -> None:
    """In each worker: its `git cat-file` readers (opened after the fork, see gitsource) are closed and reaped
    when the worker ends, not left to the system: multiprocessing's finalizers run at a worker's exit."""
    from multiprocessing import util

    util.Finalize(None, _close_git, exitpriority=10)


def _close_git() -> None:
    import sys

    gitsource = sys.modules.get("npu_review.gitsource")
    if gitsource is not None:
        gitsource.close_all()


def _call(index: int) -> Partial:
    assert _TASK is not None
    return _TASK(index)


def available() -> bool:
    """Whether worker processes can be forked here (not on Windows): multiprocessing's "fork" start method is
    there exactly where the os module can fork."""
    return hasattr(os, "fork")


def default_jobs() -> int:
    """The cores this process may run on."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):  # not every platform has affinity
        return max(1, os.cpu_count() or 1)


def process_mapper(
    jobs: int, progress: Callable[[int, int, int], None] | None = None
) -> Callable[[Callable[[int], Partial], int], list[Partial]]:
    """A mapper running the shares in `jobs` forked processes, one share at a time each, in index order.
    `progress(shares done, shares, files checked)` is called as each share comes back."""

    def mapper(task: Callable[[int], Partial], count: int) -> list[Partial]:
        import multiprocessing
        from concurrent.futures import ProcessPoolExecutor, as_completed
        from concurrent.futures.process import BrokenProcessPool

        global _TASK
        _TASK = task
        # What exists now is shared with the children until written: keep their collector off it (a
        # collection touches every object it tracks, which would copy those pages into each child).
        gc.freeze()
        try:
            context = multiprocessing.get_context("fork")
            with ProcessPoolExecutor(min(jobs, count), mp_context=context, initializer=_start_worker) as pool:
                futures = [pool.submit(_call, i) for i in range(count)]
                if progress is not None:
                    checked = 0
                    for done, future in enumerate(as_completed(futures), start=1):
                        checked += future.result().checked
                        progress(done, count, checked)
                return [future.result() for future in futures]
        except BrokenProcessPool:
            log.warning("a worker process died; reviewing in this process instead")
            return [task(i) for i in range(count)]
        finally:
            gc.unfreeze()
            _TASK = None

    return mapper
