"""POST /webhook: verify the signature, acknowledge at once (202), dispatch to the routers as tracked jobs."""

from __future__ import annotations

import json
import logging

from aiohttp import web
from gidgethub import BadRequest, ValidationFailure, sansio

from bot.logs import log_context
from bot.routers import router
from bot.services import Services

SERVICES: web.AppKey[Services] = web.AppKey("services", Services)
SHUTTING_DOWN: web.AppKey[list[bool]] = web.AppKey("shutting_down", list)

log = logging.getLogger(__name__)

# GitHub caps webhook payloads at 25 MB; ours are JSON documents about one PR, far smaller.
# https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap
MAX_BODY_BYTES = 25 * 1024 * 1024
HANDLED_EVENTS = frozenset(
    {"pull_request", "issue_comment", "check_run", "check_suite", "installation", "installation_repositories", "ping"}
)


def _error(status: int, message: str) -> web.Response:
    return web.json_response({"error": message}, status=status)


async def handle_webhook(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    deliveries = services.deliveries
    metrics = services.metrics
    if request.app[SHUTTING_DOWN][0]:
        return _error(503, "shutting down")
    if request.content_type != "application/json":
        metrics.delivery("-", "bad_request")
        return _error(400, "expected Content-Type: application/json")
    event_name = request.headers.get("X-GitHub-Event")
    delivery = request.headers.get("X-GitHub-Delivery")
    signature = request.headers.get("X-Hub-Signature-256")
    if not event_name or not delivery:
        metrics.delivery(event_name or "-", "bad_request")
        return _error(400, "missing X-GitHub-Event or X-GitHub-Delivery")
    if not signature:
        metrics.delivery(event_name, "unauthorized")
        return _error(401, "missing X-Hub-Signature-256 (deliveries must be signed with SHA-256)")
    try:
        body = await request.read()
    except web.HTTPRequestEntityTooLarge:
        metrics.delivery(event_name, "too_large")
        return _error(413, "payload too large")
    headers = {
        "content-type": "application/json",
        "x-github-event": event_name,
        "x-github-delivery": delivery,
        "x-hub-signature-256": signature,
    }
    try:
        event = sansio.Event.from_http(headers, body, secret=services.settings.webhook_secret.reveal())
    except ValidationFailure:
        metrics.delivery(event_name, "unauthorized")
        log.warning("refused delivery %s: bad signature", delivery)
        return _error(401, "signature does not match")
    except (BadRequest, ValueError, json.JSONDecodeError):
        metrics.delivery(event_name, "bad_request")
        return _error(400, "body is not a JSON document")
    if not isinstance(event.data, dict):
        metrics.delivery(event_name, "bad_request")
        return _error(400, "body is not a JSON object")
    if event_name == "ping":
        metrics.delivery(event_name, "ok")
        return web.json_response({"ok": True, "zen": event.data.get("zen")})
    if event_name not in HANDLED_EVENTS:
        metrics.delivery(event_name, "ignored")
        return web.json_response({"ignored": event_name}, status=202)
    if deliveries.seen(delivery):
        metrics.delivery(event_name, "duplicate")
        return web.json_response({"duplicate": delivery}, status=200)

    deliveries.begin(delivery)
    ok = True
    with log_context(delivery=delivery):
        try:
            # Handlers only look at the payload and queue work: nothing slow happens before the 202.
            await router.dispatch(event, services)
        except Exception:
            ok = False
            log.exception("handling %s failed", event_name)
    deliveries.dispatched(delivery, ok)
    metrics.delivery(event_name, "accepted" if ok else "error")
    if not ok:
        return _error(500, "could not handle the delivery")
    return web.json_response({"accepted": delivery}, status=202)
