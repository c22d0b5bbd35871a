"""Review jobs and the three roles a store plays for them; the implementations are bot/queue_sqlite.py (the
embedded default, one server) and bot/queue_redis.py (several receivers and `npu-review worker` processes).

A store is three things, each handed only to who needs it:
- a delivery log (the webhook): a delivery, by its id and by a digest of its signed body, is taken once; a
  failed one is forgotten, so GitHub's "Redeliver" runs it again;
- a head store (the routers and the reviewer): the newest head of each PR, the PR of each head, and when a
  `/recheck` last re-reviewed an unchanged head;
- a job queue (the routers, the runner, the status page):
  - one review per (repository, PR, head SHA): a second `opened`/`synchronize` for a head already queued,
    running or reviewed is a duplicate, unless the job is forced (`/recheck`, Re-run);
  - per PR, one job runs at a time and at most one waits: a newer submission replaces the waiting one, and a
    recheck while a job of the PR waits is coalesced into it (an untrusted commenter's: Job.joins_waiting);
  - accepted work outlives the process that accepted it: a job that was running when its process died runs
    again (`attempts` > 0), and the review then finds and reuses the check run it had made (external_id = the
    job's id);
  - a job GitHub could not serve stays queued until its check run is concluded: it is tried again with capped
    exponential backoff and jitter (`retry_delay`), across restarts, and shown as waiting on GitHub.
A store that cannot write raises StorageUnavailable: the webhook then answers 503 with Retry-After, never 202.
"""

from __future__ import annotations

import asyncio
import hashlib
import random
from collections.abc import Awaitable, Callable, Collection, Mapping
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from npu_review.bot.github import SharedState

# A job is a review, or (after a crash) the conclusion of a check run a superseded job had left in progress.
REVIEW = "review"
CONCLUDE = "conclude"
# What a runner says of a job it ran: finished (whatever the conclusion), or to be tried again later because
# GitHub could not serve it (an outage, a refused token, a rate limit longer than a request may wait).
DONE = "done"
RETRY = "retry"
# Remembered delivery ids and body digests: GitHub offers redelivery of deliveries up to 3 days old.
# https://docs.github.com/en/webhooks/testing-and-troubleshooting-webhooks/redelivering-webhooks
DELIVERY_TTL_S = 3 * 24 * 3600
# Reviewed heads are remembered this long (a redelivered `opened` for an old head is still a duplicate).
HEAD_TTL_S = 30 * 24 * 3600
# Jobs GitHub could not serve: first retry after about RETRY_BASE_S, doubling up to RETRY_MAX_S (with jitter:
# between half and all of it, so that jobs failed together do not come back together), for RETRY_WINDOW_S from
# the first failure. GitHub's incidents have lasted hours; an accepted delivery is not redelivered by GitHub.
RETRY_BASE_S = 5.0
RETRY_MAX_S = 300.0
RETRY_WINDOW_S = 6 * 3600.0
# How long a webhook sender is asked to wait when the store could not take a delivery.
STORAGE_RETRY_AFTER_S = 30


class StorageUnavailable(Exception):
    """The store could not read or write (a full disk, Redis unreachable): nothing was accepted."""


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
    retries: int = 0  # times GitHub could not serve it so far
    failing_since: float = 0.0  # epoch seconds of the first of those failures (0: none)
    error: str = ""  # the last of them, for the status page (no secrets: an exception's class and status)

    @property
    def joins_waiting(self) -> bool:
        """A `/recheck` (no head: the PR's head when it runs) joins a review of its PR that waits already, instead
        of queueing one more. Not a trusted commenter's (a maintainer's): the waiting one may be the author's, which
        the author's cooldown skips when it runs, and the maintainer's request would go with it; theirs takes its
        place (per PR the newest waits), and reviews the head as it is then all the same."""
        return self.head is None and self.request.get("trusted") is not True

    @property
    def may_have_check_run(self) -> bool:
        """Run before (crash, takeover or retry): its check run may exist, to be found by external_id."""
        return self.attempts > 0 or self.retries > 0

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
            "retries": self.retries,
            "failing_since": self.failing_since,
            "error": self.error,
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
            retries=int(data.get("retries") or 0),
            failing_since=float(data.get("failing_since") or 0.0),
            error=str(data.get("error") or ""),
        )

    def failed_again(self, now: float, error: str) -> Job:
        return replace(self, retries=self.retries + 1, failing_since=self.failing_since or now, error=error[:200])


@dataclass(frozen=True)
class Waiting:
    """A job waiting on GitHub, for the status page."""

    pr: str
    head: str | None
    retries: int
    failing_since: float
    next_try: float
    error: str


def retry_delay(retries: int, base_s: float = RETRY_BASE_S, rng: random.Random | None = None) -> float:
    """Seconds before try `retries` + 1: capped exponential backoff with equal jitter."""
    bound = min(RETRY_MAX_S, base_s * 2 ** max(0, retries - 1))
    return bound / 2 + (rng or random).uniform(0, bound / 2)


@dataclass(frozen=True)
class RunResult:
    verdict: str  # DONE, RETRY or FAILED
    error: str = ""  # why it is to be tried again (shown on the status page)


# A job that raised: the delivery is forgotten and the head may be reviewed again (GitHub's "Redeliver").
FAILED = RunResult("failed")
FINISHED = RunResult(DONE)
# Runs one job; raises when it failed.
Runner = Callable[[Job], Awaitable[RunResult]]


def body_digest(event: str, body: bytes) -> str:
    """Identifies a signed body re-sent under a new delivery id."""
    return "sha256:" + hashlib.sha256(event.encode() + b"\n" + body).hexdigest()


class DeliveryLog(Protocol):
    async def begin(self, delivery: str, digest: str) -> bool:
        """False when the delivery id or the body digest was taken before (a duplicate)."""

    async def forget(self, delivery: str, digest: str) -> None: ...


class HeadStore(Protocol):
    """The newest head per PR and the PR per head, shared by every process that takes deliveries."""

    async def note_head(self, pr: str, repo: str, number: int, head: str) -> None:
        """The newest head of a PR (an older run posts no comments) and the PR of a head (fork check runs)."""

    async def latest_head(self, pr: str) -> str | None: ...

    async def pr_for_head(self, repo: str, head: str) -> int | None: ...

    async def last_recheck(self, pr: str) -> tuple[str, float] | None:
        """(what was re-reviewed: head and base config, when) of the PR's last `/recheck` review."""

    async def note_recheck(self, pr: str, state: str, at: float) -> None: ...


class JobQueue(Protocol):
    async def open(self, runner: Runner | None) -> None:
        """Start; with a runner, run jobs (and resume what a crash left); without, only accept them."""

    async def submit(self, job: Job) -> str:
        """'queued', 'replaced' (a waiting job of the PR gave way), 'duplicate' (this head is already done) or
        'coalesced' (a recheck while a job of the PR waits: that one reviews the current head)."""

    async def depth(self) -> int:
        """Jobs waiting, running or waiting on GitHub (all replicas' when shared)."""

    async def waiting_on_github(self) -> list[Waiting]: ...

    def running(self) -> int:
        """Jobs this process is running now."""

    async def drain(self, timeout: float) -> None:
        """Stop starting jobs; give running ones `timeout` seconds, then cancel them (they conclude their check
        runs). Jobs not started stay in the queue for the next start (or another worker)."""


class Store(Protocol):
    @property
    def deliveries(self) -> DeliveryLog: ...

    @property
    def heads(self) -> HeadStore: ...

    @property
    def jobs(self) -> JobQueue: ...

    @property
    def shared(self) -> SharedState | None:
        """Installation tokens and content-creating windows shared by replicas (Redis); None: this process's own."""

    def problems(self) -> list[str]:
        """Why the store cannot take work now (for /healthz), empty when it can. Cheap and local."""

    async def ping(self) -> str | None:
        """A round trip to the store when it is a server (Redis): the problem, or None."""

    async def close(self) -> None: ...


async def drain_tasks(tasks: Collection[asyncio.Task[Any]], timeout: float) -> None:
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
