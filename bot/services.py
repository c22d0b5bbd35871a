"""What every router needs, built once at start-up and passed to handlers; and the runner of queued jobs."""

from __future__ import annotations

import contextvars
import logging
import time
import uuid
from dataclasses import dataclass

from bot.github import GitHubApp
from bot.jobs import CONCLUDE, Job, JobQueue
from bot.logs import log_context
from bot.metrics import Metrics
from bot.review import Reviewer, ReviewRequest
from bot.settings import Settings

log = logging.getLogger(__name__)

# The digest of the delivery being dispatched (each request runs in its own task, so its own copy).
DELIVERY_DIGEST: contextvars.ContextVar[str] = contextvars.ContextVar("npu_review_delivery_digest", default="")


@dataclass
class Services:
    settings: Settings
    github: GitHubApp
    reviewer: Reviewer
    queue: JobQueue
    metrics: Metrics

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
            try:
                result = await self.reviewer.review(req, external_id=job.id, resumed=job.attempts > 0)
                outcome = result.conclusion or "done"
            finally:
                self.metrics.run(outcome, time.monotonic() - started)
