"""Delivery bookkeeping: a delivery id is done only when all its work succeeded, so a redelivery of a failed one
runs again, while a duplicate of one in flight or done does nothing."""

from __future__ import annotations

from collections import OrderedDict

# Remembered done deliveries. GitHub redelivers on request within days; a few thousand cover a busy server's day.
DONE_REMEMBERED = 10_000


class Deliveries:
    def __init__(self) -> None:
        self._pending: dict[str, int] = {}  # delivery -> jobs not yet finished
        self._failed: set[str] = set()
        self._done: OrderedDict[str, None] = OrderedDict()

    def seen(self, delivery: str) -> bool:
        return delivery in self._pending or delivery in self._done

    def begin(self, delivery: str) -> None:
        self._pending[delivery] = 0

    def job_added(self, delivery: str) -> None:
        if delivery in self._pending:
            self._pending[delivery] += 1

    def job_finished(self, delivery: str, ok: bool) -> None:
        if delivery not in self._pending:
            return
        if not ok:
            self._failed.add(delivery)
        self._pending[delivery] -= 1
        if self._pending[delivery] <= 0:
            self._settle(delivery)

    def dispatched(self, delivery: str, ok: bool = True) -> None:
        """The handlers have run; with no job scheduled, the delivery is settled now."""
        if not ok:
            self._failed.add(delivery)
        if self._pending.get(delivery) == 0:
            self._settle(delivery)

    def _settle(self, delivery: str) -> None:
        self._pending.pop(delivery, None)
        if delivery in self._failed:
            self._failed.discard(delivery)
            return  # forgotten: a redelivery will run it again
        self._done[delivery] = None
        while len(self._done) > DONE_REMEMBERED:
            self._done.popitem(last=False)

    def is_done(self, delivery: str) -> bool:
        return delivery in self._done
