"""What every router needs, built once at start-up and passed to handlers; and the runner of queued jobs."""

from __future__ import annotations

import logging
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.embedded import EmbeddedWorker
from npu_review.bot.gitcode_review import GitCodeReviewer
from npu_review.bot.github import GONE, RETRY_LATER, GitHubApp, describe, failure_kind
from npu_review.bot.jobs import (
    CONCLUDE,
    FINISHED,
    RETRY,
    RETRY_WINDOW_S,
    DeliveryLog,
    HeadStore,
    Job,
    JobQueue,
    RunResult,
    Store,
)
from npu_review.bot.limits import LocalWindows, WindowStore
from npu_review.bot.logs import log_context
from npu_review.bot.metrics import Metrics
from npu_review.bot.platform import Platform
from npu_review.bot.review import GITCODE, GITHUB, Reviewer, ReviewRequest
from npu_review.bot.settings import Settings
from npu_review.bot.status import ReviewLog

log = logging.getLogger(__name__)

# How long the status page reuses GitHub's list of installations (installation events refresh it at once).
INSTALLATIONS_TTL_S = 60.0
# `/recheck` budgets, counted for each recheck let through to the queue: per commenter in an installation, and
# per PR for untrusted commenters, in (window seconds, at most) pairs. A review costs about 2-3 content-creating
# calls, so even every budget spent at once stays far below the installation's 70 a minute and 450 an hour.
RECHECKS_PER_PR = ((600.0, 3), (3600.0, 10))
RECHECKS_PER_USER = ((600.0, 5), (3600.0, 20))
# The hosts' names in what a concluded run says.
_HOSTS = {GITHUB: "GitHub", GITCODE: "GitCode"}


@dataclass(frozen=True)
class Intake:
    """The delivery being handled, passed to every router beside the services: the jobs it queues carry its id
    and its body's digest (a failed job forgets both, so that GitHub's "Redeliver" runs it again)."""

    delivery: str = ""
    digest: str = ""


@dataclass
class Services:
    settings: Settings
    github: GitHubApp
    reviewer: Reviewer
    store: Store
    metrics: Metrics
    clock: Clock = SYSTEM_CLOCK
    # The `/recheck` budgets' windows (shared through Redis when it is the store).
    budgets: WindowStore = field(default_factory=LocalWindows)
    # The reviews this process ran, for the status page (its worker process's, when it has one).
    history: ReviewLog = field(default_factory=ReviewLog)
    # The worker process that runs the embedded queue's reviews (bot/embedded.py); None: they run here, or in
    # `npu-review worker` processes (Redis).
    worker: EmbeddedWorker | None = None
    # The reviews of GitCode merge requests (bot/gitcode_review.py); None: GitCode is not configured.
    gitcode: GitCodeReviewer | None = None
    _installations: list[dict[str, Any]] | None = field(default=None, repr=False)
    _installations_at: float = field(default=-INSTALLATIONS_TTL_S, repr=False)

    @property
    def deliveries(self) -> DeliveryLog:
        return self.store.deliveries

    @property
    def heads(self) -> HeadStore:
        return self.store.heads

    @property
    def jobs(self) -> JobQueue:
        return self.store.jobs

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

    async def refresh(self) -> None:
        """Brings the worker process's numbers (reviews, metrics, budgets, problems) up to date."""
        if self.worker is not None:
            await self.worker.refresh()

    def problems(self) -> list[str]:
        """Why the App cannot take or run work now (for /healthz): the store's and the worker process's."""
        return self.store.problems() + (self.worker.problems() if self.worker is not None else [])

    def rate_budgets(self) -> dict[int, tuple[int, int, int]]:
        """The core rate-limit budget GitHub last reported per installation, to this process or its worker."""
        return {**self.github.rate_budgets(), **(self.worker.budgets if self.worker is not None else {})}

    def metrics_total(self) -> Metrics:
        """This process's counters and its worker process's."""
        return self.metrics if self.worker is None else Metrics.total([self.metrics, self.worker.metrics])

    async def recheck_allowed(self, req: ReviewRequest) -> bool:
        """Takes one from the commenter's `/recheck` budget and, for an untrusted commenter (the PR's author),
        from the PR's; False when one is spent. A maintainer's budget is their own: an author's flood cannot
        spend it."""
        budgets = [(f"recheck-user:{req.installation_id}:{req.requested_by.lower()}", RECHECKS_PER_USER)]
        if not req.trusted:
            budgets.append((f"recheck-pr:{req.key}", RECHECKS_PER_PR))
        for scope, limits in budgets:
            if await self.budgets.take(scope, limits) > 0:
                log.info(
                    "ignored /recheck from %s on %s: %s budget spent", req.requested_by, req.key, scope.split(":")[0]
                )
                return False
        return True

    async def schedule_review(self, req: ReviewRequest, intake: Intake, force: bool = False) -> str:
        """Queue a review: one per head unless forced (`/recheck`, Re-run); per PR one runs and the newest waits."""
        job = Job(
            id=uuid.uuid4().hex,
            pr=req.key,
            head=req.head_sha,
            force=force or req.head_sha is None,
            request=req.to_json(),
            delivery=intake.delivery,
            digest=intake.digest,
        )
        outcome = await self.jobs.submit(job)
        if outcome == "duplicate":
            log.info("head %s of %s is already reviewed or queued: nothing to do", (req.head_sha or "")[:12], req.key)
        elif outcome == "coalesced":
            log.info("a review of %s waits already: this /recheck joins it", req.key)
        return outcome

    async def run_job(self, job: Job) -> RunResult:
        """The queue's runner: one review (or, after a crash, the conclusion of an abandoned check run).

        GitHub not serving it (an outage, a token refused twice, a long rate limit): RETRY, for up to
        RETRY_WINDOW_S from the first failure, then the check run is concluded if GitHub lets it. Its
        installation or repository gone: done, with a log line. Anything else raises (the delivery is
        forgotten, and the check run was concluded with the reason)."""
        req = ReviewRequest.from_json(job.request)
        with log_context(delivery=req.delivery, repo=f"{req.owner}/{req.repo}", pr=req.number):
            try:
                return await self._run(job, req)
            except Exception as exc:
                kind = failure_kind(exc)
                if kind == GONE:
                    log.warning("dropping job %s: %s: %s", job.id, describe(exc), exc)
                    return FINISHED
                if kind != RETRY_LATER:
                    raise
                now = self.clock.time()
                host = _HOSTS.get(req.platform, req.platform)
                if job.failing_since and now - job.failing_since > RETRY_WINDOW_S:
                    log.error(
                        "%s has not served job %s for %.0f s (%s); giving up",
                        host,
                        job.id,
                        now - job.failing_since,
                        describe(exc),
                    )
                    await self._give_up(job, req)
                    return FINISHED
                log.warning("%s could not serve job %s (%s); it waits and is tried again", host, job.id, describe(exc))
                return RunResult(RETRY, describe(exc))

    def platform(self, req: ReviewRequest) -> Platform | None:
        """The reviewer of the job's host (bot/platform.py); None when that host is not configured here."""
        if req.platform == GITCODE:
            return self.gitcode
        return self.reviewer if req.platform == GITHUB else None

    async def _run(self, job: Job, req: ReviewRequest) -> RunResult:
        platform = self.platform(req)
        if platform is None:
            log.error("a job for %s, which this server is not configured for: dropped", req.platform)
            return FINISHED
        if job.kind == CONCLUDE:
            await platform.conclude_abandoned(req, job.id)
            return FINISHED
        if job.retries and req.head_sha and (await self.heads.latest_head(req.key)) not in (None, req.head_sha):
            # It waited on the host while a newer head came: that one is reviewed; this one's run is concluded.
            host = _HOSTS.get(req.platform, req.platform)
            reason = f"{host} was unavailable, and a newer commit of this PR is reviewed instead"
            await platform.conclude_abandoned(req, job.id, reason)
            return FINISHED
        started = time.monotonic()
        outcome = "error"
        result = None
        try:
            result = await platform.review(req, external_id=job.id, resumed=job.may_have_check_run)
            outcome = "skipped" if result.skipped else (result.conclusion or "done")
        except Exception as exc:
            outcome = "waiting" if failure_kind(exc) == RETRY_LATER else "error"
            raise
        finally:
            seconds = time.monotonic() - started
            if outcome != "skipped":
                self.metrics.run(outcome, seconds)
                if outcome != "waiting":
                    self.history.add(req, result, outcome, seconds)
        return FINISHED

    async def _give_up(self, job: Job, req: ReviewRequest) -> None:
        platform = self.platform(req)
        if platform is None:
            return
        try:
            host = _HOSTS.get(req.platform, req.platform)
            reason = f"{host} was unavailable for more than {RETRY_WINDOW_S / 3600:.0f} hours"
            await platform.conclude_abandoned(req, job.id, reason, create=True)
        except Exception as exc:
            log.error("could not conclude the check run of job %s either (%s)", job.id, describe(exc))
