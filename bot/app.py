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
from npu_review.bot.gitcode_webhook import handle_gitcode_webhook
from npu_review.bot.jobs import StorageUnavailable
from npu_review.bot.runtime import RUNTIME, Runtime
from npu_review.bot.settings import Settings
from npu_review.bot.webhook import MAX_BODY_BYTES, handle_webhook
from npu_review.checks.rule import all_rules

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
    # Unhealthy: a background loop given up after crashing again and again (the worker process among them), the
    # queue's storage refusing writes, or Redis (when it is the queue) not answering.
    await runtime.services.refresh()
    problems = runtime.services.problems()
    unreachable = await runtime.services.store.ping()
    if unreachable:
        problems.append(unreachable)
    if problems:
        return web.json_response({"status": "unhealthy", "problems": problems}, status=503)
    return web.json_response({"status": "ok"})


async def metrics_handler(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    depth: int | None = 0
    waiting: int | None = 0
    metrics = runtime.metrics
    if runtime.services is not None:
        await runtime.services.refresh()
        metrics = runtime.services.metrics_total()
        try:
            depth = await runtime.services.jobs.depth()
            waiting = len(await runtime.services.jobs.waiting_on_github())
        except StorageUnavailable:
            depth = waiting = None
    text = metrics.render(depth, waiting)
    return web.Response(text=text, content_type="text/plain", charset="utf-8")


def create_app(settings: Settings, run_jobs: bool | None = None, clock: Clock = SYSTEM_CLOCK) -> web.Application:
    """The webhook server. With the embedded queue its worker process runs the jobs (bot/embedded.py; in this
    process with `worker_process` off or a queue in memory); with Redis it only accepts them (`npu-review worker`
    processes run them). `run_jobs` True runs them in this process, False only accepts them, whatever the queue.
    Without App credentials it serves the setup page (bot/setup.py) until the App is registered, then the same as
    with them."""
    app = web.Application(client_max_size=MAX_BODY_BYTES)
    embedded_file = not settings.uses_redis and not settings.queue_in_memory
    in_worker = run_jobs is None and settings.worker_process and embedded_file
    runs_jobs = (not settings.uses_redis) if run_jobs is None else run_jobs
    runtime = Runtime(settings, runs_jobs, clock, worker_process=in_worker)
    app[RUNTIME] = runtime
    app.router.add_post("/webhook", handle_webhook)
    app.router.add_post("/gitcode/webhook", handle_gitcode_webhook)
    app.router.add_get("/healthz", healthz)
    app.router.add_get("/metrics", metrics_handler)
    app.router.add_get("/", pages.status_page)
    app.router.add_get("/status.json", pages.status_json)
    setup_token = ""
    if not settings.serving:
        setup_token = settings.setup_token.reveal() if settings.setup_token else secrets.token_urlsafe(24)
        setup.add_routes(app, setup_token)

    async def lifecycle(app: web.Application) -> AsyncIterator[None]:
        runtime.session = aiohttp.ClientSession(timeout=HTTP_TIMEOUT)
        if runtime.run_jobs and not runtime.worker_process:
            all_rules()  # import every rule now, not on the first review's path
        if settings.serving:
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
            if runtime.services.worker is not None:
                # Its drain, then up to 10 s for the reviews it cancelled to conclude their check runs.
                await runtime.services.worker.stop(SHUTDOWN_DEADLINE_S + 15)
            else:
                await runtime.services.jobs.drain(SHUTDOWN_DEADLINE_S)

    app.cleanup_ctx.append(lifecycle)
    app.on_shutdown.append(on_shutdown)
    return app
