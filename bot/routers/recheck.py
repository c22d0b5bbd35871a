"""`/recheck` in a PR comment: re-run the review for the current head, for the PR author or a trusted user."""

from __future__ import annotations

import logging

from gidgethub import sansio
from gidgethub.routing import Router
from markdown_it import MarkdownIt

from npu_review.bot.review import ReviewRequest
from npu_review.bot.services import Services

log = logging.getLogger(__name__)
router = Router()

TRUSTED_ASSOCIATIONS = frozenset({"OWNER", "MEMBER", "COLLABORATOR"})
COMMAND = "/recheck"
# CommonMark, as GitHub renders comments: fenced and indented code blocks, HTML blocks, quotes are told apart.
_MARKDOWN = MarkdownIt("commonmark")


def has_recheck(body: str) -> bool:
    """True when a line of a paragraph is exactly `/recheck` (surrounding spaces aside), as Prow reads `/retest`:
    code of any kind (fences of any length, indented blocks, inside lists or quotes), quotes, list items and
    inline code do not count."""
    if COMMAND not in (body or ""):
        return False
    lines = body.splitlines()
    for token in _MARKDOWN.parse(body):
        # A paragraph's source lines; in a quote or a list item they start with the marker, so they don't match.
        if token.type == "paragraph_open" and token.map is not None:
            start, end = token.map
            if any(line.strip() == COMMAND for line in lines[start:end]):
                return True
    return False


def may_recheck(event_data: dict[str, object]) -> bool:
    comment = event_data["comment"]
    issue = event_data["issue"]
    assert isinstance(comment, dict) and isinstance(issue, dict)
    user = comment.get("user") or {}
    if user.get("type") == "Bot" or str(user.get("login", "")).endswith("[bot]"):
        return False
    if comment.get("author_association") in TRUSTED_ASSOCIATIONS:
        return True
    author = (issue.get("user") or {}).get("login")
    return author is not None and user.get("login") == author


@router.register("issue_comment", action="created")
async def on_comment(event: sansio.Event, services: Services) -> None:
    data = event.data
    if "pull_request" not in data["issue"] or not has_recheck(data["comment"].get("body") or ""):
        return
    if not may_recheck(data):
        log.info("ignored /recheck from %s (not the author nor trusted)", data["comment"]["user"].get("login"))
        return
    repo = data["repository"]
    owner, name = repo["owner"]["login"], repo["name"]
    await services.schedule_review(
        ReviewRequest(
            installation_id=int(data["installation"]["id"]),
            owner=owner,
            repo=name,
            number=int(data["issue"]["number"]),
            react_to_comment=int(data["comment"]["id"]),
            delivery=event.delivery_id,
        ),
        force=True,
    )
