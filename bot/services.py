"""What every router needs, built once at start-up and passed to handlers."""

from __future__ import annotations

import logging
import time
from dataclasses import dataclass

from bot.deliveries import Deliveries
from bot.github import GitHubApp
from bot.jobs import JobQueue
from bot.logs import log_context
from bot.metrics import Metrics
from bot.review import Reviewer, ReviewRequest
from bot.settings import Settings

log = logging.getLogger(__name__)


@dataclass
class Services:
    settings: Settings
    github: GitHubApp
    reviewer: Reviewer
    queue: JobQueue
    deliveries: Deliveries
    metrics: Metrics

    def schedule_review(self, req: ReviewRequest) -> None:
        """Queue a review; one per PR runs at a time and the newest request wins."""

        async def job() -> None:
            with log_context(delivery=req.delivery, repo=f"{req.owner}/{req.repo}", pr=req.number):
                started = time.monotonic()
                outcome = "error"
                try:
                    result = await self.reviewer.review(req)
                    outcome = result.conclusion or "done"
                finally:
                    self.metrics.run(outcome, time.monotonic() - started)

        self.deliveries.job_added(req.delivery)
        self.queue.submit(req.key, job, lambda ok: self.deliveries.job_finished(req.delivery, ok))
