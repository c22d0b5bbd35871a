"""What the running server holds: its settings, the HTTP session, and the services once the App is registered.

A server started without App credentials has no services until the setup page registers the App; `activate`
then builds them in place, so the server switches to normal operation without a restart.
"""

from __future__ import annotations

import logging
import time
from importlib import metadata

import aiohttp
from aiohttp import web

from npu_review.bot.assemble import build_services, make_store
from npu_review.bot.bodies import UnverifiedBytes
from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.embedded import EmbeddedWorker
from npu_review.bot.metrics import Metrics
from npu_review.bot.queue_sqlite import SqliteStore
from npu_review.bot.services import Services
from npu_review.bot.settings import Settings

log = logging.getLogger(__name__)


def version() -> str:
    try:
        return metadata.version("npu-review")
    except metadata.PackageNotFoundError:  # run from a checkout that was never installed
        return "0+unknown"


class Runtime:
    def __init__(
        self, settings: Settings, run_jobs: bool, clock: Clock = SYSTEM_CLOCK, worker_process: bool = False
    ) -> None:
        self.settings = settings
        # Whether this server's jobs run (here, or with worker_process in the worker process it supervises).
        self.run_jobs = run_jobs
        self.worker_process = worker_process
        self.clock = clock
        self.session: aiohttp.ClientSession | None = None
        self.services: Services | None = None
        self.shutting_down = False
        self.started_at = time.time()
        # Made before the services, so that /metrics answers while the setup page waits.
        self.metrics = Metrics()
        # Bytes held for webhook bodies whose signature is not checked yet, over every connection.
        self.unverified = UnverifiedBytes()

    async def activate(self, settings: Settings) -> Services:
        """Build the services of a registered App (at start-up, or when the setup page registered it)."""
        assert settings.serving and self.session is not None and self.services is None
        self.settings = settings
        # With a worker process, the worker checkpoints the queue file (no fsync on the acknowledging loop).
        store = make_store(settings, self.clock, checkpoints=not self.worker_process)
        services = build_services(settings, self.session, store, self.metrics, self.clock)
        if self.worker_process:
            assert isinstance(store, SqliteStore)
            worker = EmbeddedWorker(settings, services.history, self.clock)
            services.worker = worker
            store.jobs.on_submit = worker.kick
            await store.jobs.open(None)
            worker.start()
        else:
            if self.run_jobs:
                await services.reviewer.engine.start()
            await store.jobs.open(services.run_job if self.run_jobs else None)
        self.services = services  # deliveries are taken from now on
        if settings.registered:
            log.info("npu-review App %s ready, GitHub API at %s", settings.app_id, settings.api_url)
        if settings.gitcode:
            log.info("GitCode merge requests: POST /gitcode/webhook, GitCode API at %s", settings.gitcode_api_url)
        return services


RUNTIME: web.AppKey[Runtime] = web.AppKey("runtime", Runtime)
