"""The aiohttp application: routes, start-up (HTTP session, services) and graceful shutdown (drain the jobs)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from bot.deliveries import Deliveries
from bot.github import GitHubApp
from bot.jobs import InProcessQueue
from bot.metrics import Metrics
from bot.review import Reviewer
from bot.services import Services
from bot.settings import Settings
from bot.webhook import MAX_BODY_BYTES, SERVICES, SHUTTING_DOWN, handle_webhook
from checks.engine import known_rule_ids

log = logging.getLogger(__name__)

# On SIGTERM: stop taking deliveries, give running reviews this long, then conclude what is left.
SHUTDOWN_DEADLINE_S = 25.0
# Timeout for one GitHub API request (connect + read), so a hung connection cannot stall a review.
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=30, connect=10)


async def healthz(request: web.Request) -> web.Response:
    if request.app[SHUTTING_DOWN][0]:
        return web.json_response({"status": "shutting down"}, status=503)
    return web.json_response({"status": "ok"})


async def metrics_handler(request: web.Request) -> web.Response:
    return web.Response(text=request.app[SERVICES].metrics.render(), content_type="text/plain", charset="utf-8")


def create_app(settings: Settings) -> web.Application:
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[SHUTTING_DOWN] = [False]
    app.router.add_post("/webhook", handle_webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_handler)

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        session = aiohttp.ClientSession(timeout=HTTP_TIMEOUT)
        metrics = Metrics()
        github = GitHubApp(settings, session, metrics)
        queue = InProcessQueue(settings.max_concurrent_reviews)
        metrics.queue_depth = queue.depth
        reviewer = Reviewer(github, settings.review_timeout_s, settings.completion_retry_s)
        metrics.pending_conclusions = reviewer.pending_conclusions
        app[SERVICES] = Services(
            settings=settings,
            github=github,
            reviewer=reviewer,
            queue=queue,
            deliveries=Deliveries(),
            metrics=metrics,
        )
        known_rule_ids()  # import every rule now, not on the first delivery's critical path
        log.info("npu-review App %s ready, GitHub API at %s", settings.app_id, settings.api_url)
        yield
        await app[SERVICES].reviewer.close()
        await session.close()

    async def on_shutdown(app: web.Application) -> None:
        app[SHUTTING_DOWN][0] = True
        log.info("shutting down: finishing running reviews (up to %.0f s)", SHUTDOWN_DEADLINE_S)
        await app[SERVICES].queue.drain(SHUTDOWN_DEADLINE_S)

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(on_shutdown)
    return app
