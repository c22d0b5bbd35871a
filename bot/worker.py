"""`npu-review worker`: run queued reviews from Redis (NPU_REVIEW_QUEUE=redis://...) until SIGTERM, then drain."""

from __future__ import annotations

import asyncio
import logging
import sys

import aiohttp

from npu_review.bot import logs
from npu_review.bot.app import SHUTDOWN_DEADLINE_S
from npu_review.bot.assemble import HTTP_TIMEOUT, make_store, start_reviewing
from npu_review.bot.settings import Settings, SettingsError, from_env

log = logging.getLogger(__name__)


async def run_worker(settings: Settings) -> None:
    session = aiohttp.ClientSession(timeout=HTTP_TIMEOUT)
    store = make_store(settings)
    services, stop = await start_reviewing(settings, session, store)
    await store.jobs.open(services.run_job)
    log.info("npu-review worker ready: %d reviews at once", settings.max_concurrent_reviews)
    await stop.wait()
    log.info("stopping: finishing running reviews (up to %.0f s)", SHUTDOWN_DEADLINE_S)
    await store.jobs.drain(SHUTDOWN_DEADLINE_S)
    await services.reviewer.engine.close()
    await store.close()
    await session.close()


def work() -> int:
    try:
        settings = from_env()
    except SettingsError as exc:
        print(f"npu-review worker: {exc}", file=sys.stderr)
        return 2
    if not settings.serving:
        print(
            "npu-review worker: no App credentials (set GITHUB_APP_ID, GITHUB_PRIVATE_KEY, GITHUB_WEBHOOK_SECRET, "
            "or register the App through `npu-review serve`'s setup page and share its credentials file; or "
            "GITCODE_TOKEN and GITCODE_WEBHOOK_SECRET)",
            file=sys.stderr,
        )
        return 2
    if not settings.uses_redis:
        print(
            "npu-review worker: NPU_REVIEW_QUEUE must be a redis:// URL (with the embedded queue, "
            "`npu-review serve` runs the reviews itself)",
            file=sys.stderr,
        )
        return 2
    logs.setup(json_lines=settings.log_json)
    asyncio.run(run_worker(settings))
    return 0
