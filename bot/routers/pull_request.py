"""pull_request opened / synchronize / reopened / ready_for_review: review the PR's head commit."""

from __future__ import annotations

from gidgethub import sansio
from gidgethub.routing import Router

from npu_review.bot.payload import field, installation_id
from npu_review.bot.review import ReviewRequest, pull_fields
from npu_review.bot.services import Intake, Services

router = Router()

REVIEW_ACTIONS = ("opened", "synchronize", "reopened", "ready_for_review")


@router.register("pull_request", action="opened")
@router.register("pull_request", action="synchronize")
@router.register("pull_request", action="reopened")
@router.register("pull_request", action="ready_for_review")
async def on_pull_request(event: sansio.Event, services: Services, intake: Intake) -> None:
    installation = installation_id(event.data, "pull_request")
    pull = field(event.data, "pull_request", dict)
    owner = field(pull, "base.repo.owner.login", str)
    name = field(pull, "base.repo.name", str)
    number = field(pull, "number", int)
    head = field(pull, "head.sha", str)
    field(pull, "base.sha", str)
    # Noted now, before queueing, so that an older run still in flight sees it has been superseded.
    await services.reviewer.note_head(owner, name, number, head)
    await services.schedule_review(
        ReviewRequest(
            installation_id=installation,
            owner=owner,
            repo=name,
            number=number,
            head_sha=head,
            pull=pull_fields(pull),
            delivery=intake.delivery,
        ),
        intake,
    )
