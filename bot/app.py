"""The aiohttp application: routes, start-up (HTTP session, queue, services) and graceful shutdown (drain)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from bot.jobs import JobQueue
from bot.metrics import Metrics
from bot.services import Services
from bot.settings import Settings
from bot.webhook import MAX_BODY_BYTES, SERVICES, SHUTTING_DOWN, handle_webhook
from checks.engine import known_rule_ids

log = logging.getLogger(__name__)

# On SIGTERM: stop taking deliveries, give running reviews this long, then conclude what is left. Jobs not
# started stay queued for the next start (the Dockerfile's stop timeout and compose's stop_grace_period cover it).
SHUTDOWN_DEADLINE_S = 25.0
# Timeout for one GitHub API request (connect + read), so a hung connection cannot stall a review.
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=30, connect=10)


def make_queue(settings: Settings) -> JobQueue:
    if settings.uses_redis:
        from bot.queue_redis import RedisQueue

        return RedisQueue(
            settings.queue_url,
            prefix=settings.redis_prefix,
            concurrency=settings.max_concurrent_reviews,
            visibility_timeout_s=settings.visibility_timeout_s,
        )
    from bot.queue_sqlite import SqliteQueue, path_from_url

    return SqliteQueue(path_from_url(settings.queue_url), settings.max_concurrent_reviews)


async def build_services(settings: Settings, session: aiohttp.ClientSession, queue: JobQueue) -> Services:
    from bot.github import GitHubApp
    from bot.review import Reviewer

    metrics = Metrics()
    github = GitHubApp(settings, session, metrics, shared=getattr(queue, "shared", None))
    reviewer = Reviewer(github, queue, settings.review_timeout_s, settings.completion_retry_s, settings.quick_review_s)
    metrics.pending_conclusions = reviewer.pending_conclusions
    return Services(settings=settings, github=github, reviewer=reviewer, queue=queue, metrics=metrics)


async def healthz(request: web.Request) -> web.Response:
    if request.app[SHUTTING_DOWN][0]:
        return web.json_response({"status": "shutting down"}, status=503)
    return web.json_response({"status": "ok"})


async def metrics_handler(request: web.Request) -> web.Response:
    services = request.app[SERVICES]
    text = services.metrics.render(await services.queue.depth())
    return web.Response(text=text, content_type="text/plain", charset="utf-8")


def create_app(settings: Settings, run_jobs: bool | None = None) -> web.Application:
    """The webhook server. It runs the jobs itself with the embedded queue; with Redis it only accepts them
    (`npu-review worker` processes run them), unless `run_jobs` says otherwise."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    app[SHUTTING_DOWN] = [False]
    app.router.add_post("/webhook", handle_webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_handler)
    runs = (not settings.uses_redis) if run_jobs is None else run_jobs

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        session = aiohttp.ClientSession(timeout=HTTP_TIMEOUT)
        queue = make_queue(settings)
        services = await build_services(settings, session, queue)
        app[SERVICES] = services
        known_rule_ids()  # import every rule now, not on the first delivery's critical path
        await queue.open(services.run_job if runs else None)
        log.info("npu-review App %s ready, GitHub API at %s", settings.app_id, settings.api_url)
        yield
        await services.reviewer.close()
        await queue.close()
        await session.close()

    async def on_shutdown(app: web.Application) -> None:
        app[SHUTTING_DOWN][0] = True
        log.info("shutting down: finishing running reviews (up to %.0f s)", SHUTDOWN_DEADLINE_S)
        await app[SERVICES].queue.drain(SHUTDOWN_DEADLINE_S)

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(on_shutdown)
    return app
