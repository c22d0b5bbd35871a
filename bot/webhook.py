"""POST /webhook: read within the timeouts, verify the signature, acknowledge at once (202), queue the work."""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

from aiohttp import web
from gidgethub import ValidationFailure, sansio

from npu_review.bot.jobs import body_digest
from npu_review.bot.logs import log_context
from npu_review.bot.routers import router
from npu_review.bot.runtime import RUNTIME
from npu_review.bot.services import DELIVERY_DIGEST

log = logging.getLogger(__name__)

# GitHub caps webhook payloads at 25 MB; ours are JSON documents about one PR, far smaller.
# https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap
MAX_BODY_BYTES = 25 * 1024 * 1024
# GitHub's payloads nest about 10 levels; a signed document deeper than this is refused (400), not parsed on.
MAX_JSON_DEPTH = 400
HANDLED_EVENTS = frozenset(
    {"pull_request", "issue_comment", "check_run", "check_suite", "installation", "installation_repositories", "ping"}
)
# The only event names that become metric labels (any other verified one counts as "other").
METRIC_EVENTS = HANDLED_EVENTS | {"push", "pull_request_review", "pull_request_review_comment", "status"}


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


class TooDeep(ValueError):
    """A JSON document nested deeper than MAX_JSON_DEPTH."""


def parse_json(body: bytes, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """json.loads, refusing documents nested deeper than max_depth (the C parser itself stops at Python's
    recursion limit with a RecursionError; anything it accepts is measured without recursion)."""
    try:
        value = json.loads(body)
    except RecursionError:
        raise TooDeep(f"nested deeper than {max_depth} levels") from None
    if body.count(b"[") + body.count(b"{") <= max_depth:
        return value  # fewer brackets than levels allowed (GitHub's payloads): no need to measure
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if not isinstance(node, dict | list):
            continue
        children = node.values() if isinstance(node, dict) else node
        if depth > max_depth:
            raise TooDeep(f"nested deeper than {max_depth} levels")
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return value


async def handle_webhook(request: web.Request) -> web.StreamResponse:
    runtime = request.app[RUNTIME]
    if runtime.shutting_down:
        return _error(503, "shutting down")
    services = runtime.services
    if services is None:
        return _error(503, "the App is not registered yet: finish its setup page first")
    queue = services.queue
    metrics = services.metrics
    # Nothing from a delivery reaches the metrics before its signature is checked.
    if request.content_type != "application/json":
        return _error(400, "expected Content-Type: application/json")
    event_name = request.headers.get("X-GitHub-Event")
    delivery = request.headers.get("X-GitHub-Delivery")
    signature = request.headers.get("X-Hub-Signature-256")
    if not event_name or not delivery:
        return _error(400, "missing X-GitHub-Event or X-GitHub-Delivery")
    if not signature:
        return _error(401, "missing X-Hub-Signature-256 (deliveries must be signed with SHA-256)")
    try:
        body = await asyncio.wait_for(request.read(), services.settings.body_timeout_s)
    except TimeoutError:
        log.warning("delivery %r: body not received within %.0f s", delivery[:64], services.settings.body_timeout_s)
        resp = _error(408, "request body not received in time")
        resp.force_close()
        return resp
    except web.HTTPRequestEntityTooLarge:
        return _error(413, "payload too large")
    try:
        sansio.validate_event(body, signature=signature, secret=services.settings.webhook_secret.reveal())
    except ValidationFailure:
        log.warning("refused delivery %r: bad signature", delivery[:64])
        return _error(401, "signature does not match")
    label = event_name if event_name in METRIC_EVENTS else "other"
    try:
        data = parse_json(body)
    except TooDeep as exc:
        metrics.delivery(label, "bad_request")
        return _error(400, f"body is {exc}")
    except (ValueError, UnicodeDecodeError):
        metrics.delivery(label, "bad_request")
        return _error(400, "body is not a JSON document")
    if not isinstance(data, dict):
        metrics.delivery(label, "bad_request")
        return _error(400, "body is not a JSON object")
    if event_name == "ping":
        metrics.delivery(label, "ok")
        return web.json_response({"ok": True, "zen": data.get("zen")})
    if event_name not in HANDLED_EVENTS:
        metrics.delivery(label, "ignored")
        return web.json_response({"ignored": event_name}, status=202)
    digest = body_digest(event_name, body)
    if not await queue.begin_delivery(delivery, digest):
        metrics.delivery(label, "duplicate")
        return web.json_response({"duplicate": delivery}, status=200)

    event = sansio.Event(data, event=event_name, delivery_id=delivery)
    ok = True
    DELIVERY_DIGEST.set(digest)
    with log_context(delivery=delivery):
        try:
            # Handlers only look at the payload and queue work: nothing slow happens before the 202.
            await router.dispatch(event, services)
        except Exception:
            ok = False
            log.exception("handling %s failed", event_name)
    if not ok:
        await queue.forget_delivery(delivery, digest)
        metrics.delivery(label, "error")
        return _error(500, "could not handle the delivery")
    metrics.delivery(label, "accepted")
    return web.json_response({"accepted": delivery}, status=202)
