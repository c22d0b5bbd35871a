"""The aiohttp application: routes, start-up (HTTP session, queue, services, or the setup page while the App has
no credentials) and graceful shutdown (drain)."""

from __future__ import annotations

import logging
import secrets
from collections.abc import AsyncIterator

import aiohttp
from aiohttp import web

from npu_review.bot import pages, setup
from npu_review.bot.jobs import JobQueue
from npu_review.bot.metrics import Metrics
from npu_review.bot.runtime import RUNTIME, Runtime
from npu_review.bot.services import Services
from npu_review.bot.settings import Settings
from npu_review.bot.webhook import MAX_BODY_BYTES, handle_webhook
from npu_review.checks.engine import known_rule_ids

log = logging.getLogger(__name__)

# On SIGTERM: stop taking deliveries, give running reviews this long, then conclude what is left. Jobs not
# started stay queued for the next start (the Dockerfile's stop timeout and compose's stop_grace_period cover it).
SHUTDOWN_DEADLINE_S = 25.0
# Timeout for one GitHub API request (connect + read), so a hung connection cannot stall a review.
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=30, connect=10)


def make_queue(settings: Settings) -> JobQueue:
    if settings.uses_redis:
        from npu_review.bot.queue_redis import RedisQueue

        return RedisQueue(
            settings.queue_url,
            prefix=settings.redis_prefix,
            concurrency=settings.max_concurrent_reviews,
            visibility_timeout_s=settings.visibility_timeout_s,
        )
    from npu_review.bot.queue_sqlite import SqliteQueue, path_from_url

    return SqliteQueue(path_from_url(settings.queue_url), settings.max_concurrent_reviews)


async def build_services(
    settings: Settings, session: aiohttp.ClientSession, queue: JobQueue, metrics: Metrics | None = None
) -> Services:
    from npu_review.bot.github import GitHubApp
    from npu_review.bot.review import Reviewer

    metrics = metrics or Metrics()
    github = GitHubApp(settings, session, metrics, shared=getattr(queue, "shared", None))
    reviewer = Reviewer(github, queue, settings.review_timeout_s, settings.completion_retry_s, settings.quick_review_s)
    metrics.pending_conclusions = reviewer.pending_conclusions
    return Services(settings=settings, github=github, reviewer=reviewer, queue=queue, metrics=metrics)


async def healthz(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    if runtime.shutting_down:
        return web.json_response({"status": "shutting down"}, status=503)
    if runtime.services is None:
        # Up and serving its setup page: a liveness probe must not restart it (that would change the setup URL).
        return web.json_response({"status": "awaiting registration"})
    return web.json_response({"status": "ok"})


async def metrics_handler(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    depth = await runtime.services.queue.depth() if runtime.services is not None else 0
    text = runtime.metrics.render(depth)
    return web.Response(text=text, content_type="text/plain", charset="utf-8")


def create_app(settings: Settings, run_jobs: bool | None = None) -> web.Application:
    """The webhook server. It runs the jobs itself with the embedded queue; with Redis it only accepts them
    (`npu-review worker` processes run them), unless `run_jobs` says otherwise. Without App credentials it
    serves the setup page (bot/setup.py) until the App is registered, then the same as with them."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    runtime = Runtime(settings, (not settings.uses_redis) if run_jobs is None else run_jobs)
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
            await runtime.services.reviewer.close()
            await runtime.services.queue.close()
        await runtime.session.close()

    async def on_shutdown(app: web.Application) -> None:
        runtime.shutting_down = True
        if runtime.services is not None:
            log.info("shutting down: finishing running reviews (up to %.0f s)", SHUTDOWN_DEADLINE_S)
            await runtime.services.queue.drain(SHUTDOWN_DEADLINE_S)

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(on_shutdown)
    return app
