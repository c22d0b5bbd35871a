"""POST /gitcode/webhook: GitCode's `Merge Request Hook` and `Note Hook` deliveries, verified, deduplicated and
queued like GitHub's (the same body budget, store, queue and 202), then reviewed by bot/gitcode_review.py.

From GitCode's webhook documentation (docs.gitcode.com/en/docs/help/home/org_project/webhook/...):
- headers `X-GitCode-Event` ("Merge Request Hook", "Note Hook") and `X-GitCode-Delivery` (the request's id)
  (webhook-stepup/merge-request-events, note-events);
- a signing key puts `X-GitCode-Signature-256: sha256=<signature>` on each request; a password is sent as
  `X-GitCode-Token: <password>` (webhook-first, "WebHook Password/Signing Key");
- Merge Request Hook: `object_kind` "merge_request", `object_attributes.iid`, `object_attributes.action` ("open",
  "update", "merge", "close"), `object_attributes.state`, `git_commit_no` (the head commit);
- Note Hook: `object_kind` "note", `object_attributes.note`, `object_attributes.noteable_type` ("MergeRequest"),
  `object_attributes.system`, `user.username`, `project.path_with_namespace`.
Assumed (the pages do not say, or show no example):
- the signature is the hex HMAC-SHA256 of the raw body with the signing key, as GitHub's `X-Hub-Signature-256`;
- the merge request's repository is `project.path_with_namespace` ("owner/repo"), as in GitLab's payloads;
- a Note Hook names its merge request as `merge_request.iid`, as GitLab's does;
- "reopen" (GitLab's action) is reviewed like "open".
"""

from __future__ import annotations

import hmac
import logging
from typing import Any

from aiohttp import web

from npu_review.bot.jobs import STORAGE_RETRY_AFTER_S, StorageUnavailable, body_digest
from npu_review.bot.logs import log_context
from npu_review.bot.review import GITCODE, ReviewRequest
from npu_review.bot.routers.recheck import has_recheck
from npu_review.bot.runtime import RUNTIME
from npu_review.bot.services import Intake, Services
from npu_review.bot.webhook import Refused, _error, json_object, read_verified

log = logging.getLogger(__name__)

MERGE_REQUEST_HOOK = "Merge Request Hook"
NOTE_HOOK = "Note Hook"
REVIEW_ACTIONS = frozenset({"open", "reopen", "update"})
# Metric labels of the events (a fixed set: nothing unverified or free-form becomes a label).
METRIC_EVENTS = {MERGE_REQUEST_HOOK: "gitcode_merge_request", NOTE_HOOK: "gitcode_note"}
# The delivery log is shared with GitHub's: GitCode's ids carry this prefix there.
DELIVERY_PREFIX = "gitcode:"


async def handle_gitcode_webhook(request: web.Request) -> web.StreamResponse:
    runtime = request.app[RUNTIME]
    if runtime.shutting_down:
        return _error(503, "shutting down", STORAGE_RETRY_AFTER_S, close=True)
    services = runtime.services
    if services is None or services.gitcode is None:
        return _error(404, "GitCode is not configured here (GITCODE_TOKEN, GITCODE_WEBHOOK_SECRET)", close=True)
    settings = services.settings
    assert settings.gitcode_webhook_secret is not None
    secret = settings.gitcode_webhook_secret.reveal()
    event = request.headers.get("X-GitCode-Event", "")
    delivery = request.headers.get("X-GitCode-Delivery", "")
    signature = request.headers.get("X-GitCode-Signature-256")
    password = request.headers.get("X-GitCode-Token")
    if not event or not delivery:
        return _error(400, "missing X-GitCode-Event or X-GitCode-Delivery", close=True)
    password_mode = False
    if signature is None or not signature.startswith("sha256="):
        if password is None or not settings.gitcode_allow_password:
            return _error(401, "missing X-GitCode-Signature-256 (set a signing key on the webhook)", close=True)
        if not hmac.compare_digest(password.encode(), secret.encode()):
            log.warning("refused GitCode delivery %r: wrong password", delivery[:64])
            return _error(401, "wrong X-GitCode-Token", close=True)
        password_mode = True
    try:
        body, taken = await read_verified(
            request,
            secret.encode(),
            None if password_mode else signature,
            runtime.unverified,
            settings.body_timeout_s,
        )
    except Refused as refused:
        return refused.response
    try:
        if body is None:
            log.warning("refused GitCode delivery %r: bad signature", delivery[:64])
            return _error(401, "signature does not match")
        if password_mode:
            log.warning(
                "GitCode delivery %r accepted by its password (GITCODE_ALLOW_PASSWORD=1): anyone who sees the "
                "password can forge deliveries; set a signing key on the webhook",
                delivery[:64],
            )
        return await _accept(services, event, delivery, body)
    finally:
        runtime.unverified.give(taken)


async def _accept(services: Services, event: str, delivery: str, body: bytes) -> web.StreamResponse:
    metrics = services.metrics
    label = METRIC_EVENTS.get(event, "other")
    data = json_object(body, metrics, label)
    if isinstance(data, web.Response):
        return data
    try:
        request = _request(event, data, delivery)
    except ValueError as exc:
        metrics.delivery(label, "bad_request")
        return _error(400, str(exc))
    if request is None:
        metrics.delivery(label, "ignored")
        return web.json_response({"ignored": event}, status=202)
    key = DELIVERY_PREFIX + delivery
    digest = body_digest("gitcode:" + event, body)
    with log_context(delivery=key, repo=f"gitcode:{request.owner}/{request.repo}", pr=request.number):
        try:
            if not await services.deliveries.begin(key, digest):
                metrics.delivery(label, "duplicate")
                return web.json_response({"duplicate": delivery}, status=200)
            intake = Intake(key, digest)
            if request.head_sha is None:
                if not await services.recheck_allowed(request):
                    metrics.delivery(label, "ignored")
                    return web.json_response({"ignored": event, "reason": "recheck budget spent"}, status=202)
            else:
                # Noted now, before queueing, so that an older run still in flight sees it is superseded.
                repo_key = f"gitcode:{request.owner}/{request.repo}".lower()
                await services.heads.note_head(request.key, repo_key, request.number, request.head_sha)
            await services.schedule_review(request, intake, force=request.head_sha is None)
        except StorageUnavailable as exc:
            log.error("GitCode delivery not stored: %s", exc)
            metrics.delivery(label, "unavailable")
            return _error(503, "the queue cannot store deliveries right now", STORAGE_RETRY_AFTER_S)
    metrics.delivery(label, "accepted")
    return web.json_response({"accepted": delivery}, status=202)


def _get(data: Any, path: str) -> Any:
    for part in path.split("."):
        if not isinstance(data, dict):
            return None
        data = data.get(part)
    return data


def _repo(data: dict[str, Any]) -> tuple[str, str]:
    full = _get(data, "project.path_with_namespace") or _get(data, "object_attributes.target.path_with_namespace")
    if not isinstance(full, str) or "/" not in full:
        raise ValueError("missing project.path_with_namespace (owner/repo)")
    owner, _, name = full.rpartition("/")
    return owner, name


def _request(event: str, data: dict[str, Any], delivery: str) -> ReviewRequest | None:
    """The review a delivery asks for, None when it asks for none; ValueError for a payload missing a field."""
    if event == MERGE_REQUEST_HOOK:
        action = _get(data, "object_attributes.action")
        state = _get(data, "object_attributes.state")
        if action not in REVIEW_ACTIONS or state not in (None, "opened"):
            return None
        number = _get(data, "object_attributes.iid")
        head = data.get("git_commit_no") or _get(data, "object_attributes.last_commit.id")
        if not isinstance(number, int) or not isinstance(head, str) or not head:
            raise ValueError("missing object_attributes.iid or git_commit_no")
        owner, name = _repo(data)
        return ReviewRequest(0, owner, name, number, head_sha=head, delivery=delivery, platform=GITCODE)
    if event == NOTE_HOOK:
        if _get(data, "object_attributes.noteable_type") != "MergeRequest" or _get(data, "object_attributes.system"):
            return None
        note = _get(data, "object_attributes.note")
        if not isinstance(note, str) or not has_recheck(note):
            return None
        user = _get(data, "user.username")
        number = _get(data, "merge_request.iid")
        if not isinstance(user, str) or not user or not isinstance(number, int):
            raise ValueError("missing user.username or merge_request.iid")
        owner, name = _repo(data)
        # Who may re-run it (write access) is asked of GitCode when the job runs, not before the 202.
        return ReviewRequest(
            0, owner, name, number, delivery=delivery, requested_by=user, trusted=False, platform=GITCODE
        )
    return None
