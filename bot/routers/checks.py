"""check_run rerequested / requested_action ("Re-run") and check_suite rerequested: review that commit again."""

from __future__ import annotations

import logging
from typing import Any

from gidgethub import sansio
from gidgethub.routing import Router

from npu_review.bot.jobs import repo_key
from npu_review.bot.payload import field, installation_id
from npu_review.bot.reporters import CHECK_NAME, RERUN_ACTION
from npu_review.bot.review import ReviewRequest
from npu_review.bot.services import Intake, Services

log = logging.getLogger(__name__)
router = Router()


async def _pull_numbers(
    owner: str, name: str, head_sha: str, prs: list[dict[str, Any]], services: Services
) -> list[int]:
    numbers = [field(p, "number", int) for p in prs if isinstance(p, dict) and _base_name(p, name) == name]
    if not numbers:
        # GitHub leaves pull_requests empty for fork PRs: use what the queue learnt from the PR's events.
        known = await services.heads.pr_for_head(repo_key(owner, name), head_sha)
        numbers = [known] if known is not None else []
    return numbers


def _base_name(pull: dict[str, Any], default: str) -> Any:
    base = pull.get("base")
    repo = base.get("repo") if isinstance(base, dict) else None
    return repo.get("name", default) if isinstance(repo, dict) else default


def _ours(app: object, services: Services) -> bool:
    return app is None or (isinstance(app, dict) and str(app.get("id")) == services.settings.app_id)


async def _rerun(
    event: sansio.Event, services: Services, intake: Intake, head_sha: str, prs: list[dict[str, Any]]
) -> None:
    installation = installation_id(event.data, event.event)
    owner = field(event.data, "repository.owner.login", str)
    name = field(event.data, "repository.name", str)
    numbers = await _pull_numbers(owner, name, head_sha, prs, services)
    if not numbers:
        log.info(
            "re-run requested for %s, which belongs to no PR this App knows; comment /recheck on the PR", head_sha[:12]
        )
        return
    for number in numbers:
        await services.schedule_review(
            ReviewRequest(
                installation_id=installation,
                owner=owner,
                repo=name,
                number=number,
                head_sha=head_sha,
                delivery=intake.delivery,
            ),
            intake,
            force=True,
        )


@router.register("check_run", action="rerequested")
async def on_check_run_rerequested(event: sansio.Event, services: Services, intake: Intake) -> None:
    run = field(event.data, "check_run", dict)
    if run.get("name") != CHECK_NAME or not _ours(run.get("app"), services):
        return
    await _rerun(event, services, intake, field(run, "head_sha", str), _list(run.get("pull_requests")))


@router.register("check_run", action="requested_action")
async def on_requested_action(event: sansio.Event, services: Services, intake: Intake) -> None:
    run = field(event.data, "check_run", dict)
    requested = event.data.get("requested_action")
    action = requested.get("identifier") if isinstance(requested, dict) else None
    if action != RERUN_ACTION["identifier"] or not _ours(run.get("app"), services):
        return
    await _rerun(event, services, intake, field(run, "head_sha", str), _list(run.get("pull_requests")))


@router.register("check_suite", action="rerequested")
async def on_check_suite_rerequested(event: sansio.Event, services: Services, intake: Intake) -> None:
    suite = field(event.data, "check_suite", dict)
    if not _ours(suite.get("app"), services):
        return
    await _rerun(event, services, intake, field(suite, "head_sha", str), _list(suite.get("pull_requests")))


def _list(value: object) -> list[dict[str, Any]]:
    return [p for p in value if isinstance(p, dict)] if isinstance(value, list) else []
