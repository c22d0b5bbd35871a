"""What every router needs, built once at start-up and passed to handlers; and the runner of queued jobs."""

from __future__ import annotations

import contextvars
import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from npu_review.bot.github import GitHubApp
from npu_review.bot.jobs import CONCLUDE, Job, JobQueue
from npu_review.bot.logs import log_context
from npu_review.bot.metrics import Metrics
from npu_review.bot.review import Reviewer, ReviewRequest
from npu_review.bot.settings import Settings
from npu_review.bot.status import ReviewLog

log = logging.getLogger(__name__)

# How long the status page reuses GitHub's list of installations (installation events refresh it at once).
INSTALLATIONS_TTL_S = 60.0
# The digest of the delivery being dispatched (each request runs in its own task, so its own copy).
DELIVERY_DIGEST: contextvars.ContextVar[str] = contextvars.ContextVar("npu_review_delivery_digest", default="")


@dataclass
class Services:
    settings: Settings
    github: GitHubApp
    reviewer: Reviewer
    queue: JobQueue
    metrics: Metrics
    # The reviews this process ran, for the status page.
    history: ReviewLog = field(default_factory=ReviewLog)
    _installations: list[dict[str, Any]] | None = field(default=None, repr=False)
    _installations_at: float = field(default=-INSTALLATIONS_TTL_S, repr=False)

    async def installations(self) -> list[dict[str, Any]] | None:
        """The App's installations as GitHub lists them (reused for a minute), None when GitHub could not say."""
        if time.monotonic() - self._installations_at < INSTALLATIONS_TTL_S:
            return self._installations
        try:
            self._installations = await self.github.list_installations()
        except Exception as exc:
            log.warning("could not list the App's installations: %s", type(exc).__name__)
            self._installations = None
        self._installations_at = time.monotonic()
        return self._installations

    def forget_installations(self) -> None:
        self._installations_at = -INSTALLATIONS_TTL_S

    async def schedule_review(self, req: ReviewRequest, force: bool = False) -> str:
        """Queue a review: one per head unless forced (`/recheck`, Re-run); per PR one runs and the newest waits."""
        job = Job(
            id=uuid.uuid4().hex,
            pr=req.key,
            head=req.head_sha,
            force=force or req.head_sha is None,
            request=req.to_json(),
            delivery=req.delivery,
            digest=DELIVERY_DIGEST.get(),
        )
        outcome = await self.queue.submit(job)
        if outcome == "duplicate":
            log.info("head %s of %s is already reviewed or queued: nothing to do", (req.head_sha or "")[:12], req.key)
        return outcome

    async def run_job(self, job: Job) -> None:
        """The queue's runner: one review (or, after a crash, the conclusion of an abandoned check run)."""
        req = ReviewRequest.from_json(job.request)
        with log_context(delivery=req.delivery, repo=f"{req.owner}/{req.repo}", pr=req.number):
            if job.kind == CONCLUDE:
                await self.reviewer.conclude_abandoned(req, job.id)
                return
            started = time.monotonic()
            outcome = "error"
            result = None
            try:
                result = await self.reviewer.review(req, external_id=job.id, resumed=job.attempts > 0)
                outcome = result.conclusion or "done"
            finally:
                seconds = time.monotonic() - started
                self.metrics.run(outcome, seconds)
                self.history.add(req, result, outcome, seconds)
