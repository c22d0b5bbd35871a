"""Builds what a running App holds, once: the store (queue backend) and the services over it. The server
(bot/runtime.py, bot/app.py) and `npu-review worker` (bot/worker.py) both start from here."""

from __future__ import annotations

import asyncio
import signal

import aiohttp

from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.engine_pool import Engine, default_processes
from npu_review.bot.gitcode import GitCodeClient
from npu_review.bot.gitcode_review import GitCodeReviewer, Labels
from npu_review.bot.github import GitHubApp
from npu_review.bot.jobs import Store
from npu_review.bot.limits import LocalWindows
from npu_review.bot.metrics import Metrics
from npu_review.bot.review import Reviewer
from npu_review.bot.services import Services
from npu_review.bot.settings import Settings

# Timeout for one GitHub API request (connect + read), so a hung connection cannot stall a review.
HTTP_TIMEOUT = aiohttp.ClientTimeout(total=30, connect=10)


def make_store(settings: Settings, clock: Clock = SYSTEM_CLOCK, checkpoints: bool = True) -> Store:
    """`checkpoints` False: a receiver whose worker process copies the SQLite WAL back into the file."""
    if settings.uses_redis:
        from npu_review.bot.queue_redis import RedisStore

        return RedisStore(
            settings.queue_url,
            prefix=settings.redis_prefix,
            concurrency=settings.max_concurrent_reviews,
            visibility_timeout_s=settings.visibility_timeout_s,
            clock=clock,
            retry_base_s=settings.retry_base_s,
        )
    from npu_review.bot.queue_sqlite import SqliteStore, path_from_url

    return SqliteStore(
        path_from_url(settings.queue_url),
        settings.max_concurrent_reviews,
        clock=clock,
        retry_base_s=settings.retry_base_s,
        checkpoints=checkpoints,
    )


def build_services(
    settings: Settings,
    session: aiohttp.ClientSession,
    store: Store,
    metrics: Metrics | None = None,
    clock: Clock = SYSTEM_CLOCK,
) -> Services:
    metrics = metrics or Metrics()
    github = GitHubApp(settings, session, metrics, shared=store.shared)
    processes = settings.review_processes
    engine = Engine(default_processes(settings.max_concurrent_reviews) if processes < 0 else processes)
    reviewer = Reviewer(github, store.heads, engine, settings.review_timeout_s, settings.quick_review_s, clock)
    budgets = store.shared.windows if store.shared is not None else LocalWindows(clock.monotonic)
    gitcode = None
    if settings.gitcode:
        assert settings.gitcode_token is not None
        client = GitCodeClient(session, settings.gitcode_token, settings.gitcode_api_url, settings.backoff_base_s)
        labels = Labels(settings.gitcode_pass_label, settings.gitcode_fail_label)
        gitcode = GitCodeReviewer(
            client,
            store.heads,
            engine,
            budgets,
            labels,
            settings.gitcode_writes_per_minute,
            settings.review_timeout_s,
            clock,
        )
    return Services(
        gitcode=gitcode,
        settings=settings,
        github=github,
        reviewer=reviewer,
        store=store,
        metrics=metrics,
        clock=clock,
        budgets=budgets,
    )


async def start_reviewing(
    settings: Settings, session: aiohttp.ClientSession, store: Store
) -> tuple[Services, asyncio.Event]:
    """What a process that runs reviews (the worker, the embedded worker) does first: the services, every rule
    imported now (not on the first review's clock), the engine started, and an event SIGTERM and SIGINT set. Where
    the reviews run in this process (no review processes), a small change is reviewed once first (warm_up)."""
    from npu_review.checks.engine import warm_up
    from npu_review.checks.rule import all_rules

    services = build_services(settings, session, store)
    if services.reviewer.engine.processes <= 0:
        warm_up()
    else:
        all_rules()  # what the server reads before a review: the rules' kinds (needed_paths)
    await services.reviewer.engine.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    return services, stop
