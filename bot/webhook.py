"""POST /webhook: read within the timeouts and the unverified-bytes budget, verify the signature as the body
streams in, parse only a verified body, acknowledge at once (202) once the work is stored, else 503.

Before its signature is checked a body is anybody's: the bytes held for such bodies are capped across every
connection (UNVERIFIED_BYTES_LIMIT); past that a delivery is answered 503 with Retry-After before its body is read,
so a flood of large forged bodies cannot take the process's memory. The HMAC is updated chunk by chunk, and a
body whose signature does not match is dropped unparsed."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
import logging
from typing import Any

from aiohttp import web
from gidgethub import sansio

from npu_review.bot.bodies import UnverifiedBytes
from npu_review.bot.jobs import STORAGE_RETRY_AFTER_S, StorageUnavailable, body_digest
from npu_review.bot.logs import log_context
from npu_review.bot.metrics import Metrics
from npu_review.bot.payload import NotForTheApp, PayloadError
from npu_review.bot.routers import router
from npu_review.bot.runtime import RUNTIME
from npu_review.bot.services import Intake, Services

log = logging.getLogger(__name__)

# GitHub caps webhook payloads at 25 MB; ours are JSON documents about one PR, far smaller.
# https://docs.github.com/en/webhooks/webhook-events-and-payloads#payload-cap
MAX_BODY_BYTES = 25 * 1024 * 1024
BUSY_RETRY_AFTER_S = 5
# GitHub's payloads nest about 10 levels; a signed document deeper than this is refused (400), not parsed on.
MAX_JSON_DEPTH = 400
HANDLED_EVENTS = frozenset(
    {"pull_request", "issue_comment", "check_run", "check_suite", "installation", "installation_repositories", "ping"}
)
# The only event names that become metric labels (any other verified one counts as "other").
METRIC_EVENTS = HANDLED_EVENTS | {"push", "pull_request_review", "pull_request_review_comment", "status"}


def _error(status: int, message: str, retry_after: int | None = None, close: bool = False) -> web.Response:
    headers = {"Retry-After": str(retry_after)} if retry_after is not None else None
    resp = web.json_response({"error": message}, status=status, headers=headers)
    if close:
        resp.force_close()  # the body was not read: do not wait for it
    return resp


class TooDeep(ValueError):
    """A JSON document nested deeper than MAX_JSON_DEPTH."""


def json_object(body: bytes, metrics: Metrics, label: str) -> dict[str, Any] | web.Response:
    """The delivery's body as a JSON object, or the 400 answer (counted as a bad request) when it is none."""
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
    return data


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


class Refused(Exception):
    def __init__(self, response: web.Response) -> None:
        self.response = response


async def read_verified(
    request: web.Request, secret: bytes, signature: str | None, budget: UnverifiedBytes, timeout: float
) -> tuple[bytes | None, int]:
    """The body if its signature matches (None if not), and the budget bytes taken for it (to give back).
    `signature` None: the body whatever it holds (GitCode's password mode checks a header instead)."""
    length = request.content_length
    if length is not None and length > MAX_BODY_BYTES:
        raise Refused(_error(413, "payload too large", close=True))
    taken = 0
    if length is not None:
        if not budget.take(length):
            raise Refused(_error(503, "too many large deliveries at once", BUSY_RETRY_AFTER_S, close=True))
        taken = length
    mac = hmac.new(secret, digestmod=hashlib.sha256)
    chunks: list[bytes] = []
    size = 0
    try:
        async with asyncio.timeout(timeout):
            async for chunk in request.content.iter_any():
                size += len(chunk)
                if size > MAX_BODY_BYTES:
                    raise Refused(_error(413, "payload too large", close=True))
                if size > taken:
                    if not budget.take(size - taken):
                        raise Refused(_error(503, "too many large deliveries at once", BUSY_RETRY_AFTER_S, close=True))
                    taken = size
                mac.update(chunk)
                chunks.append(chunk)
    except TimeoutError:
        budget.give(taken)
        raise Refused(_error(408, "request body not received in time", close=True)) from None
    except BaseException:
        budget.give(taken)
        raise
    if signature is not None and not hmac.compare_digest("sha256=" + mac.hexdigest(), signature):
        chunks.clear()
        return None, taken
    body = b"".join(chunks)
    chunks.clear()
    return body, taken


async def handle_webhook(request: web.Request) -> web.StreamResponse:
    runtime = request.app[RUNTIME]
    if runtime.shutting_down:
        return _error(503, "shutting down", STORAGE_RETRY_AFTER_S, close=True)
    services = runtime.services
    if services is None:
        return _error(503, "the App is not registered yet: finish its setup page first", close=True)
    if not services.settings.registered:
        # Serving GitCode only: no GitHub secret to check a signature against, so nothing is taken here.
        return _error(404, "this server takes GitCode deliveries only (POST /gitcode/webhook)", close=True)
    # Nothing from a delivery reaches the metrics before its signature is checked.
    if request.content_type != "application/json":
        return _error(400, "expected Content-Type: application/json", close=True)
    event_name = request.headers.get("X-GitHub-Event")
    delivery = request.headers.get("X-GitHub-Delivery")
    signature = request.headers.get("X-Hub-Signature-256")
    if not event_name or not delivery:
        return _error(400, "missing X-GitHub-Event or X-GitHub-Delivery", close=True)
    if not signature or not signature.startswith("sha256="):
        return _error(401, "missing X-Hub-Signature-256 (deliveries must be signed with SHA-256)", close=True)
    secret = services.settings.webhook_secret.reveal().encode()
    try:
        body, taken = await read_verified(
            request, secret, signature, runtime.unverified, services.settings.body_timeout_s
        )
    except Refused as refused:
        if refused.response.status == 408:
            log.warning("delivery %r: body not received within %.0f s", delivery[:64], services.settings.body_timeout_s)
        return refused.response
    try:
        if body is None:
            log.warning("refused delivery %r: bad signature", delivery[:64])
            return _error(401, "signature does not match")
        return await _accept(request, services, event_name, delivery, body)
    finally:
        runtime.unverified.give(taken)


async def _accept(
    request: web.Request, services: Services, event_name: str, delivery: str, body: bytes
) -> web.StreamResponse:
    metrics = services.metrics
    label = event_name if event_name in METRIC_EVENTS else "other"
    data = json_object(body, metrics, label)
    if isinstance(data, web.Response):
        return data
    if event_name == "ping":
        metrics.delivery(label, "ok")
        zen = data.get("zen")
        return web.json_response({"ok": True, "zen": zen if isinstance(zen, str) else None})
    if event_name not in HANDLED_EVENTS:
        metrics.delivery(label, "ignored")
        return web.json_response({"ignored": event_name}, status=202)
    digest = body_digest(event_name, body)
    try:
        if not await services.deliveries.begin(delivery, digest):
            metrics.delivery(label, "duplicate")
            return web.json_response({"duplicate": delivery}, status=200)
    except StorageUnavailable as exc:
        log.error("delivery %r not taken: %s", delivery[:64], exc)
        metrics.delivery(label, "unavailable")
        return _error(503, "the queue cannot store deliveries right now", STORAGE_RETRY_AFTER_S)

    event = sansio.Event(data, event=event_name, delivery_id=delivery)
    with log_context(delivery=delivery):
        try:
            # Handlers only look at the payload and queue work: nothing slow happens before the 202.
            await router.dispatch(event, services, Intake(delivery, digest))
        except NotForTheApp as exc:
            metrics.delivery(label, "ignored")
            return web.json_response({"ignored": event_name, "reason": str(exc)}, status=202)
        except PayloadError as exc:
            await _forget(services, delivery, digest)
            metrics.delivery(label, "bad_request")
            return _error(400, str(exc))
        except StorageUnavailable as exc:
            log.error("delivery not stored: %s", exc)
            await _forget(services, delivery, digest)
            metrics.delivery(label, "unavailable")
            return _error(503, "the queue cannot store deliveries right now", STORAGE_RETRY_AFTER_S)
        except Exception:
            log.exception("handling %s failed", event_name)
            await _forget(services, delivery, digest)
            metrics.delivery(label, "error")
            return _error(500, "could not handle the delivery")
    metrics.delivery(label, "accepted")
    return web.json_response({"accepted": delivery}, status=202)


async def _forget(services: Services, delivery: str, digest: str) -> None:
    """So that GitHub's "Redeliver" (or a retry after 503) is taken again; the store may be down too."""
    try:
        await services.deliveries.forget(delivery, digest)
    except StorageUnavailable as exc:
        log.warning("could not forget delivery %r (%s)", delivery[:64], exc)
