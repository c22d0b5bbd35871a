"""Review jobs and the queue interface they go through; the implementations are bot/queue_sqlite.py (the embedded
default, one server) and bot/queue_redis.py (several receivers and `npu-review worker` processes).

What every queue guarantees:
- a delivery (by its id, and by a digest of its signed body) is taken once; a failed one is forgotten, so GitHub's
  "Redeliver" runs it again;
- one review per (repository, PR, head SHA): a second `opened`/`synchronize` for a head already queued, running or
  reviewed is a duplicate, unless the job is forced (`/recheck`, Re-run);
- per PR, one job runs at a time and at most one waits: a newer submission replaces the waiting one;
- accepted work outlives the process that accepted it: a job that was running when its process died runs again
  (`attempts` > 0), and the review then finds and reuses the check run it had made (external_id = the job's id).
"""

from __future__ import annotations

import asyncio
import hashlib
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

# A job is a review, or (after a crash) the conclusion of a check run a superseded job had left in progress.
REVIEW = "review"
CONCLUDE = "conclude"
# Remembered delivery ids and body digests: GitHub offers redelivery of deliveries up to 3 days old.
# https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks
DELIVERY_TTL_S = 3 * 24 * 3600
# Reviewed heads are remembered this long (a redelivered `opened` for an old head is still a duplicate).
HEAD_TTL_S = 30 * 24 * 3600


@dataclass(frozen=True)
class Job:
    id: str  # also the check run's external_id, so a resumed job finds the run it made
    pr: str  # "owner/repo#number", lower case: the coalescing key
    head: str | None  # the head to review; None: the PR's head when the job runs (`/recheck`)
    force: bool  # review even if this head was reviewed (`/recheck`, Re-run)
    request: Mapping[str, Any]  # ReviewRequest.to_json()
    delivery: str = ""
    digest: str = ""
    attempts: int = 0  # > 0: resumed after a crash or taken over from a dead worker
    kind: str = REVIEW

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "pr": self.pr,
            "head": self.head,
            "force": self.force,
            "request": dict(self.request),
            "delivery": self.delivery,
            "digest": self.digest,
            "attempts": self.attempts,
            "kind": self.kind,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Job:
        return cls(
            id=str(data["id"]),
            pr=str(data["pr"]),
            head=data.get("head"),
            force=bool(data.get("force")),
            request=data["request"],
            delivery=str(data.get("delivery") or ""),
            digest=str(data.get("digest") or ""),
            attempts=int(data.get("attempts") or 0),
            kind=str(data.get("kind") or REVIEW),
        )


# Runs one job; raises when it failed (the delivery is then forgotten and the head may be reviewed again).
Runner = Callable[[Job], Awaitable[None]]


def body_digest(event: str, body: bytes) -> str:
    """Identifies a signed body re-sent under a new delivery id."""
    return "sha256:" + hashlib.sha256(event.encode() + b"\n" + body).hexdigest()


class JobQueue(Protocol):
    """What the webhook, the routers, the reviewer and the status page need of a queue."""

    async def open(self, runner: Runner | None) -> None:
        """Start; with a runner, run jobs (and resume what a crash left); without, only accept them."""

    async def submit(self, job: Job) -> str:
        """'queued', 'replaced' (a waiting job of the PR gave way) or 'duplicate' (this head is already done)."""

    async def begin_delivery(self, delivery: str, digest: str) -> bool:
        """False when the delivery id or the body digest was taken before (a duplicate)."""

    async def forget_delivery(self, delivery: str, digest: str) -> None: ...

    async def note_head(self, pr: str, repo: str, number: int, head: str) -> None:
        """The newest head of a PR (an older run posts no comments) and the PR of a head (fork check runs)."""

    async def latest_head(self, pr: str) -> str | None: ...

    async def pr_for_head(self, repo: str, head: str) -> int | None: ...

    async def depth(self) -> int:
        """Jobs waiting or running (all replicas' when shared)."""

    async def drain(self, timeout: float) -> None:
        """Stop starting jobs; give running ones `timeout` seconds, then cancel them (they conclude their check
        runs). Jobs not started stay in the queue for the next start (or another worker)."""

    async def close(self) -> None: ...


async def drain_tasks(tasks: Collection[asyncio.Task[None]], timeout: float) -> None:
    """Give running reviews `timeout` seconds to finish, then cancel what is left and wait for it (10 s at most).

    Both queues stop this way on shutdown (SIGTERM)."""
    running = set(tasks)
    if not running:
        return
    await asyncio.wait(running, timeout=timeout)
    for task in running:
        task.cancel()
    await asyncio.wait(running, timeout=10)


def pr_key(owner: str, repo: str, number: int) -> str:
    return f"{owner}/{repo}#{number}".lower()


def repo_key(owner: str, repo: str) -> str:
    return f"{owner}/{repo}".lower()
