"""check_run rerequested / requested_action ("Re-run") and check_suite rerequested: review that commit again."""

from __future__ import annotations

import logging
from typing import Any

from gidgethub import sansio
from gidgethub.routing import Router

from npu_review.bot.jobs import repo_key
from npu_review.bot.reporters import CHECK_NAME, RERUN_ACTION
from npu_review.bot.review import ReviewRequest
from npu_review.bot.services import Services

log = logging.getLogger(__name__)
router = Router()


async def _pull_numbers(
    owner: str, name: str, head_sha: str, prs: list[dict[str, Any]], services: Services
) -> list[int]:
    numbers = [int(p["number"]) for p in prs if p.get("base", {}).get("repo", {}).get("name", name) == name]
    if not numbers:
        # GitHub leaves pull_requests empty for fork PRs: use what the queue learnt from the PR's events.
        known = await services.queue.pr_for_head(repo_key(owner, name), head_sha)
        numbers = [known] if known is not None else []
    return numbers


def _ours(app: dict[str, Any] | None, services: Services) -> bool:
    return app is None or str(app.get("id")) == services.settings.app_id


async def _rerun(event: sansio.Event, services: Services, head_sha: str, prs: list[dict[str, Any]]) -> None:
    repo = event.data["repository"]
    owner, name = repo["owner"]["login"], repo["name"]
    numbers = await _pull_numbers(owner, name, head_sha, prs, services)
    if not numbers:
        log.info(
            "re-run requested for %s, which belongs to no PR this App knows; comment /recheck on the PR", head_sha[:12]
        )
        return
    for number in numbers:
        await services.schedule_review(
            ReviewRequest(
                installation_id=int(event.data["installation"]["id"]),
                owner=owner,
                repo=name,
                number=number,
                head_sha=head_sha,
                delivery=event.delivery_id,
            ),
            force=True,
        )


@router.register("check_run", action="rerequested")
async def on_check_run_rerequested(event: sansio.Event, services: Services) -> None:
    run = event.data["check_run"]
    if run.get("name") != CHECK_NAME or not _ours(run.get("app"), services):
        return
    await _rerun(event, services, run["head_sha"], run.get("pull_requests") or [])


@router.register("check_run", action="requested_action")
async def on_requested_action(event: sansio.Event, services: Services) -> None:
    run = event.data["check_run"]
    action = (event.data.get("requested_action") or {}).get("identifier")
    if action != RERUN_ACTION["identifier"] or not _ours(run.get("app"), services):
        return
    await _rerun(event, services, run["head_sha"], run.get("pull_requests") or [])


@router.register("check_suite", action="rerequested")
async def on_check_suite_rerequested(event: sansio.Event, services: Services) -> None:
    suite = event.data["check_suite"]
    if not _ours(suite.get("app"), services):
        return
    await _rerun(event, services, suite["head_sha"], suite.get("pull_requests") or [])
