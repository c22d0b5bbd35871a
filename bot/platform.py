"""The seam between the review queue and the code hosts. A queued job's ReviewRequest names its platform
("github", "gitcode"); the queue's runner (bot/services.py) hands it to that platform's reviewer, which reads the
change (files at head, config at base), runs the rules in the shared engine and reports the host's way. The
durable queue, deduplication, retries with backoff, limits, the worker process and Redis replicas do not know
which host a job is for.

What the hosts share besides the queue: the engine (bot/engine_pool.py), the planning of inline comments (one per
cause, within the repo config's budget: reporters.inline_causes), the text of comments, summaries and titles
(bot/reporters.py) and the fingerprint markers. What each does its own way: GitHub reports in a check run, one
batched review and resolved threads (bot/review.py); GitCode in comments posted one by one on diff positions, a
summary comment and a gate label (bot/gitcode_review.py)."""

from __future__ import annotations

from typing import Protocol

from npu_review.bot.review import Outcome, ReviewRequest


class Platform(Protocol):
    async def review(self, req: ReviewRequest, external_id: str | None = None, resumed: bool = False) -> Outcome:
        """One review of the change request's head. `external_id`: the job's id (a check run made by an earlier
        attempt is found by it); `resumed`: the job ran before (a crash, a takeover, a retry)."""
        ...

    async def conclude_abandoned(
        self, req: ReviewRequest, external_id: str, reason: str = "", create: bool = False
    ) -> None:
        """A job that will not be reviewed (superseded while it waited, or given up after the retry window):
        whatever it left showing "in progress" is concluded with `reason`; with `create`, the reason is shown even
        if the job had shown nothing yet."""
        ...
