"""`/recheck` in a PR comment: re-run the review for the current head, for the PR author or a trusted user.

What one commenter can spend is bounded three ways: a recheck while a review of the PR waits joins it
(bot/jobs.py), each PR and each commenter has a budget of rechecks (bot/services.py), and an unchanged head is
re-reviewed at most once per 5 minutes unless the commenter is trusted (bot/review.py)."""

from __future__ import annotations

import logging

from gidgethub import sansio
from gidgethub.routing import Router

from npu_review.bot.payload import field, installation_id
from npu_review.bot.review import ReviewRequest
from npu_review.bot.services import Intake, Services
from npu_review.checks.parsers import mdblocks

log = logging.getLogger(__name__)
router = Router()

TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
COMMAND = "/recheck"


def has_recheck(body: str) -> bool:
    """True when a line of a paragraph is exactly `/recheck` (surrounding spaces aside), as Prow reads `/retest`:
    code of any kind (fences of any length, indented blocks, inside lists or quotes), quotes, list items and
    inline code do not count. Blocks as CommonMark reads them, as GitHub renders comments (`mdblocks`, the engine's
    one Markdown scanner)."""
    if COMMAND not in (body or ""):
        return False
    # A paragraph's source lines; in a quote or a list item they start with the marker, so they don't match.
    return any(
        block.kind == "paragraph" and any(line.strip() == COMMAND for _, line in block.body)
        for block in mdblocks.blocks(body)
    )


def is_trusted(event_data: dict[str, object]) -> bool:
    comment = event_data["comment"]
    assert isinstance(comment, dict)
    return comment.get("author_association") in TRUSTED_ASSOCIATIONS


def may_recheck(event_data: dict[str, object]) -> bool:
    comment = event_data["comment"]
    issue = event_data["issue"]
    assert isinstance(comment, dict) and isinstance(issue, dict)
    user = comment.get("user") or {}
    if user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]"):
        return False
    if is_trusted(event_data):
        return True
    author = (issue.get("user") or {}).get("login")
    return author is not None and user.get("login") == author


@router.register("issue_comment", action="created")
async def on_comment(event: sansio.Event, services: Services, intake: Intake) -> None:
    data = event.data
    issue = field(data, "issue", dict)
    comment = field(data, "comment", dict)
    body = comment.get("body")
    if "pull_request" not in issue or not has_recheck(body if isinstance(body, str) else ""):
        return
    installation = installation_id(data, "issue_comment")
    field(comment, "user", dict)
    if not may_recheck(data):
        log.info("ignored /recheck from %s (not the author nor trusted)", comment["user"].get("login"))
        return
    req = ReviewRequest(
        installation_id=installation,
        owner=field(data, "repository.owner.login", str),
        repo=field(data, "repository.name", str),
        number=field(issue, "number", int),
        react_to_comment=field(comment, "id", int),
        delivery=intake.delivery,
        requested_by=str(comment["user"].get("login", "")),
        trusted=is_trusted(data),
    )
    if not await services.recheck_allowed(req):
        return
    await services.schedule_review(req, intake, force=True)
