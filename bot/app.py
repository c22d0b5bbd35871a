"""The aiohttp application: routes, start-up (HTTP session, queue, services, or the setup page while the App has
no credentials) and graceful shutdown (drain)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from npu_review.bot import pages, setup
from npu_review.bot.assemble import HTTP_TIMEOUT
from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.jobs import StorageUnavailable
from npu_review.bot.runtime import RUNTIME, Runtime
from npu_review.bot.settings import Settings
from npu_review.bot.webhook import MAX_BODY_BYTES, handle_webhook
from npu_review.checks.engine import known_rule_ids

log = logging.getLogger(__name__)

# On SIGTERM: stop taking deliveries, give running reviews this long, then conclude what is left. Jobs not
# started stay queued for the next start (the Dockerfile's stop timeout and compose's stop_grace_period cover it).
SHUTDOWN_DEADLINE_S = 25.0


async def healthz(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    if runtime.shutting_down:
        return web.json_response({"status": "shutting down"}, status=503)
    if runtime.services is None:
        # Up and serving its setup page: a liveness probe must not restart it (that would change the setup URL).
        return web.json_response({"status": "awaiting registration"})
    # Unhealthy: a background loop given up after crashing again and again, the queue's storage refusing
    # writes, or Redis (when it is the queue) not answering.
    store = runtime.services.store
    problems = store.problems()
    unreachable = await store.ping()
    if unreachable:
        problems.append(unreachable)
    if problems:
        return web.json_response({"status": "unhealthy", "problems": problems}, status=503)
    return web.json_response({"status": "ok"})


async def metrics_handler(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    depth: int | None = 0
    waiting: int | None = 0
    if runtime.services is not None:
        try:
            depth = await runtime.services.jobs.depth()
            waiting = len(await runtime.services.jobs.waiting_on_github())
        except StorageUnavailable:
            depth = waiting = None
    text = runtime.metrics.render(depth, waiting)
    return web.Response(text=text, content_type="text/plain", charset="utf-8")


def create_app(settings: Settings, run_jobs: bool | None = None, clock: Clock = SYSTEM_CLOCK) -> web.Application:
    """The webhook server. It runs the jobs itself with the embedded queue; with Redis it only accepts them
    (`npu-review worker` processes run them), unless `run_jobs` says otherwise. Without App credentials it
    serves the setup page (bot/setup.py) until the App is registered, then the same as with them."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    runtime = Runtime(settings, (not settings.uses_redis) if run_jobs is None else run_jobs, clock)
    app[RUNTIME] = runtime
    app.router.add_post("/webhook", handle_webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_handler)
    app.router.add_get("/", pages.status_page)
    app.router.add_get("/status.json", pages.status_json)
    setup_token = ""
    if not settings.registered:
        setup_token = settings.setup_token.reveal() if settings.setup_token else secrets.token_urlsafe(24)
        setup.add_routes(app, setup_token)

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        runtime.session = aiohttp.ClientSession(timeout=HTTP_TIMEOUT)
        known_rule_ids()  # import every rule now, not on the first delivery's critical path
        if settings.registered:
            await runtime.activate(settings)
        else:
            where = settings.public_url or f"http://localhost:{settings.port}"
            # The setup token is shown to the operator on purpose: it only opens the setup page, and only until
            # the App is registered; it is no GitHub credential.
            log.warning(
                "npu-review has no GitHub App credentials yet. To register the App, open %s/setup?token=%s",
                where,
                setup_token,
            )
        yield
        if runtime.services is not None:
            await runtime.services.reviewer.engine.close()
            await runtime.services.store.close()
        await runtime.session.close()

    async def on_shutdown(app: web.Application) -> None:
        runtime.shutting_down = True
        if runtime.services is not None:
            log.info("shutting down: finishing running reviews (up to %.0f s)", SHUTDOWN_DEADLINE_S)
            await runtime.services.jobs.drain(SHUTDOWN_DEADLINE_S)

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(on_shutdown)
    return app
