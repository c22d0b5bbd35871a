"""GET / (the status page) and GET /status.json, with the status token deciding how much they show.

The token (NPU_REVIEW_STATUS_TOKEN) is presented as `Authorization: Bearer <token>`, or once as `/?token=<token>`
in a browser, which sets an HttpOnly, SameSite=Strict cookie and redirects to `/` so that the token leaves the
address bar (and the history). Without it, or with a wrong one, the page shows the summary counts only.
"""

from __future__ import annotations

import hmac
import time

from aiohttp import web

from npu_review.bot.jobs import StorageUnavailable, Waiting
from npu_review.bot.runtime import RUNTIME, Runtime, version
from npu_review.bot.status import StatusInput, render_status, status_document

COOKIE = "npu_review_status"


def _presented(request: web.Request) -> str | None:
    auth = request.headers.get("Authorization", "")
    if auth.lower().startswith("bearer "):
        return auth[7:].strip()
    return request.cookies.get(COOKIE)


def is_detailed(request: web.Request, runtime: Runtime) -> bool:
    token = runtime.settings.status_token
    given = _presented(request)
    return token is not None and given is not None and hmac.compare_digest(given.encode(), token.reveal().encode())


async def _gather(runtime: Runtime) -> StatusInput:
    services = runtime.services
    settings = runtime.settings
    name = ""
    depth: int | None = 0
    waiting: list[Waiting] | None = []
    if services is not None:
        name = settings.app_slug or f"App {settings.app_id}"
        await services.refresh()
        try:
            depth = await services.jobs.depth()
            waiting = await services.jobs.waiting_on_github()
        except StorageUnavailable:
            depth = waiting = None
    return StatusInput(
        version=version(),
        registered=services is not None,
        started_at=runtime.started_at,
        now=time.time(),
        queue_depth=depth,
        by_conclusion=dict(services.history.by_conclusion) if services is not None else {},
        reviews=services.history.recent() if services is not None else [],
        budgets=services.rate_budgets() if services is not None else {},
        installations=await services.installations() if services is not None else [],
        app_name=name,
        app_html_url=settings.app_html_url,
        runs_jobs=runtime.run_jobs,
        waiting=waiting,
    )


def _token_login(request: web.Request, runtime: Runtime) -> web.HTTPSeeOther | None:
    """`/?token=…` from a browser: keep the token in a cookie, then show `/` without it in the address."""
    given = request.query.get("token")
    token = runtime.settings.status_token
    if given is None or token is None or not hmac.compare_digest(given.encode(), token.reveal().encode()):
        return None
    response = web.HTTPSeeOther("/")
    response.set_cookie(
        COOKIE, given, httponly=True, samesite="Strict", secure=request.secure, path="/", max_age=30 * 86400
    )
    return response


async def status_page(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    login = _token_login(request, runtime)
    if login is not None:
        raise login
    text = render_status(
        await _gather(runtime), is_detailed(request, runtime), runtime.settings.status_token is not None
    )
    return web.Response(
        text=text,
        content_type="text/html",
        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer", "X-Frame-Options": "DENY"},
    )


async def status_json(request: web.Request) -> web.Response:
    runtime = request.app[RUNTIME]
    doc = status_document(await _gather(runtime), is_detailed(request, runtime))
    return web.json_response(doc, headers={"Cache-Control": "no-store"})
