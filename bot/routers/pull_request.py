"""pull_request opened / synchronize / reopened / ready_for_review: review the PR's head commit."""

from __future__ import annotations

from gidgethub import sansio
from gidgethub.routing import Router

from npu_review.bot.review import ReviewRequest
from npu_review.bot.services import Services

router = Router()

REVIEW_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review")


@router.register("pull_request", action="opened")
@router.register("pull_request", action="synchronize")
@router.register("pull_request", action="reopened")
@router.register("pull_request", action="ready_for_review")
async def on_pull_request(event: sansio.Event, services: Services) -> None:
    pull = event.data["pull_request"]
    base_repo = pull["base"]["repo"]
    owner, name = base_repo["owner"]["login"], base_repo["name"]
    # Noted now, before queueing, so that an older run still in flight sees it has been superseded.
    await services.reviewer.note_head(owner, name, int(pull["number"]), pull["head"]["sha"])
    await services.schedule_review(
        ReviewRequest(
            installation_id=int(event.data["installation"]["id"]),
            owner=owner,
            repo=name,
            number=int(pull["number"]),
            head_sha=pull["head"]["sha"],
            pull=pull,
            delivery=event.delivery_id,
        )
    )
