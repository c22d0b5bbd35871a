"""`npu-review serve` / `python -m npu_review.bot`: read the settings, start the webhook server."""

from __future__ import annotations

import sys
from dataclasses import replace

from aiohttp import web

from npu_review.bot import logs
from npu_review.bot.app import SHUTDOWN_DEADLINE_S, create_app
from npu_review.bot.settings import SettingsError, from_env


def serve(host: str = "0.0.0.0", port: int | None = None) -> int:
    try:
        settings = from_env()
    except SettingsError as exc:
        print(f"npu-review serve: {exc}", file=sys.stderr)
        return 2
    if port is not None:
        settings = replace(settings, port=port)
    logs.setup(json_lines=settings.log_json)
    web.run_app(
        create_app(settings),
        host=host,
        port=settings.port,
        shutdown_timeout=SHUTDOWN_DEADLINE_S + 5,
        # aiohttp closes a connection whose request head has not arrived this long after it opened (and an
        # idle keep-alive one): the header read timeout. The body's is in bot/webhook.py.
        keepalive_timeout=settings.header_timeout_s,
        # A body not read in time (408) is not waited for further: the connection closes with the answer.
        lingering_time=0,
        print=None,
        access_log=None,
    )
    return 0


if __name__ == "__main__":
    sys.exit(serve())
