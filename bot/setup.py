"""The setup page: register the App on GitHub from its manifest (app.yaml) when the server has no credentials.

GitHub's manifest flow: the browser posts the manifest to GitHub (a personal account's or an organisation's
"new App" form), the user confirms there, GitHub redirects back to `/setup/callback?code=…&state=…`, and the server
exchanges the code for the App's id, private key and webhook secret (`POST /app-manifests/{code}/conversions`).
https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest

Who may register: whoever opens the setup URL the server logs at start-up (it carries a one-time setup token, as
Jupyter's does), so a server reachable from the internet cannot be registered by a passer-by; GitHub's redirect
is matched to the attempt by its `state`. Once registered, every setup route answers 404.
"""

from __future__ import annotations

import asyncio
import hmac
import html
import json
import logging
import re
import secrets
import time
from dataclasses import dataclass, field
from importlib import resources
from typing import Any
from urllib.parse import quote, urlencode

import aiohttp
import yaml
from aiohttp import web
from gidgethub import GitHubException

from npu_review.bot.credentials import credentials_from_conversion, write_credentials
from npu_review.bot.github import convert_manifest
from npu_review.bot.runtime import RUNTIME
from npu_review.bot.status import page

log = logging.getLogger(__name__)

# GitHub's manifest codes expire after an hour; an attempt's state is kept as long.
STATE_TTL_S = 3600.0
# A GitHub login: alphanumerics and single hyphens, at most 39 characters.
LOGIN = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}$")
# GitHub App names: at most 34 characters.
MAX_APP_NAME = 34
# What the manifest carries from app.yaml (GitHub's documented manifest parameters).
MANIFEST_KEYS = (
    "name",
    "url",
    "description",
    "public",
    "default_permissions",
    "default_events",
    "hook_attributes",
    "request_oauth_on_install",
    "setup_on_update",
)


def shipped_manifest() -> dict[str, Any]:
    data = yaml.safe_load(resources.files("bot").joinpath("app.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def build_manifest(base: dict[str, Any], public_url: str, name: str) -> dict[str, Any]:
    """app.yaml's manifest for this server: its webhook and redirect URLs, the name the user chose."""
    manifest = {k: base[k] for k in MANIFEST_KEYS if k in base}
    manifest["name"] = name
    manifest["hook_attributes"] = {**base.get("hook_attributes", {}), "url": f"{public_url}/webhook"}
    manifest["redirect_url"] = f"{public_url}/setup/callback"
    return manifest


def github_form_url(web_url: str, org: str, state: str) -> str:
    """Where the browser posts the manifest: the user's or the organisation's "new GitHub App" page."""
    where = f"/organizations/{quote(org)}/settings/apps/new" if org else "/settings/apps/new"
    return f"{web_url}{where}?{urlencode({'state': state})}"


def own_address(request: web.Request) -> str:
    """The address the browser used to reach this page (behind a proxy: what it forwarded)."""
    scheme = request.headers.get("X-Forwarded-Proto", request.scheme).split(",")[0].strip()
    host = request.headers.get("X-Forwarded-Host", request.host).split(",")[0].strip()
    return f"{scheme}://{host}"


@dataclass
class SetupFlow:
    token: str
    states: dict[str, float] = field(default_factory=dict)  # state -> created (monotonic)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    def token_ok(self, given: str | None) -> bool:
        return given is not None and hmac.compare_digest(given.encode(), self.token.encode())

    def new_state(self) -> str:
        now = time.monotonic()
        for old in [s for s, t in self.states.items() if now - t > STATE_TTL_S]:
            del self.states[old]
        state = secrets.token_urlsafe(24)
        self.states[state] = now
        return state

    def take_state(self, state: str | None) -> bool:
        created = self.states.pop(state or "", None)
        return created is not None and time.monotonic() - created <= STATE_TTL_S


SETUP: web.AppKey[SetupFlow] = web.AppKey("setup", SetupFlow)


def _gone(request: web.Request) -> SetupFlow:
    """The flow, or 404 once the App is registered (nobody can register it again)."""
    if request.app[RUNTIME].services is not None or SETUP not in request.app:
        raise web.HTTPNotFound(text="404: the App is registered; there is nothing to set up.")
    return request.app[SETUP]


def _forbidden() -> web.Response:
    body = (
        "<h1>Setup token needed</h1><p>Open the setup URL that the server printed in its log when it started "
        "(<code>/setup?token=…</code>).</p>"
    )
    return web.Response(status=403, text=page("npu-review setup", body), content_type="text/html")


def _html(body: str, status: int = 200) -> web.Response:
    return web.Response(
        status=status,
        text=page("npu-review setup", body),
        content_type="text/html",
        headers={"Cache-Control": "no-store", "Referrer-Policy": "no-referrer"},
    )


async def setup_page(request: web.Request) -> web.Response:
    flow = _gone(request)
    token = request.query.get("token")
    if not flow.token_ok(token):
        return _forbidden()
    settings = request.app[RUNTIME].settings
    public = settings.public_url or own_address(request)
    name = str(shipped_manifest().get("name", "npu-review"))
    e = html.escape
    body = f"""<h1>Register npu-review on GitHub</h1>
<p>This server has no GitHub App credentials yet. Registering creates a GitHub App from the manifest in
<code>app.yaml</code> (its permissions and events), on your personal account or on an organisation you own;
GitHub then sends you back here, and the server keeps the App's id, private key and webhook secret in
<code>{e(str(settings.credentials_file))}</code>, readable by the server's user only.</p>
<form method="get" action="/setup/confirm" id="setup-form">
<input type="hidden" name="token" value="{e(token or "")}">
<label>Register it for</label>
<label><input type="radio" name="account" value="user" checked id="account-user"> my personal account</label>
<label><input type="radio" name="account" value="org" id="account-org"> the organisation
<input type="text" name="org" id="org" placeholder="organisation login"></label>
<label for="name">App name (unique on GitHub)</label>
<input type="text" name="name" id="name" value="{e(name)}" maxlength="{MAX_APP_NAME}">
<label for="public_url">This server's public address (GitHub sends webhooks to it + <code>/webhook</code>)</label>
<input type="url" name="public_url" id="public_url" value="{e(public)}">
<button type="submit" id="continue">Continue</button>
</form>"""
    return _html(body)


async def setup_confirm(request: web.Request) -> web.Response:
    flow = _gone(request)
    q = request.query
    if not flow.token_ok(q.get("token")):
        return _forbidden()
    settings = request.app[RUNTIME].settings
    org = q.get("org", "").strip() if q.get("account") == "org" else ""
    name = q.get("name", "").strip()
    public = (q.get("public_url", "").strip() or settings.public_url or own_address(request)).rstrip("/")
    problems = []
    if q.get("account") == "org" and not LOGIN.match(org):
        problems.append("the organisation login is not a GitHub login")
    if not name or len(name) > MAX_APP_NAME:
        problems.append(f"the App name must have 1 to {MAX_APP_NAME} characters")
    if not re.match(r"^https?://[^/\s]+(/[^\s]*)?$", public):
        problems.append("the public address must be an http(s) URL")
    if problems:
        items = "".join(f"<li>{html.escape(p)}</li>" for p in problems)
        back = f"/setup?{urlencode({'token': q.get('token', '')})}"
        return _html(f'<h1>Check the form</h1><ul id="problems">{items}</ul><p><a href="{back}">Back</a></p>', 400)
    manifest = build_manifest(shipped_manifest(), public, name)
    state = flow.new_state()
    action = github_form_url(settings.web_url, org, state)
    e = html.escape
    where = f"the organisation <b>{e(org)}</b>" if org else "your personal account"
    body = f"""<h1>Create the App on GitHub</h1>
<p>GitHub will create <b>{e(name)}</b> on {where}, sending webhooks to <code>{e(public)}/webhook</code>, and
bring you back to <code>{e(public)}/setup/callback</code>.</p>
<form method="post" action="{e(action)}" id="manifest-form">
<input type="hidden" name="manifest" value="{e(json.dumps(manifest))}">
<button type="submit" id="create">Create the App on GitHub</button>
</form>
<details><summary>The manifest</summary><pre>{e(json.dumps(manifest, indent=2))}</pre></details>"""
    return _html(body)


async def setup_callback(request: web.Request) -> web.Response:
    flow = _gone(request)
    runtime = request.app[RUNTIME]
    code, state = request.query.get("code", ""), request.query.get("state")
    async with flow.lock:  # a double-clicked redirect: one conversion
        if runtime.services is not None:
            raise web.HTTPNotFound(text="404: the App is registered; there is nothing to set up.")
        if not code or not flow.take_state(state):
            return _html(
                "<h1>Unknown or expired attempt</h1><p>This link does not belong to a registration started here "
                "in the last hour. Start again from the setup URL in the server's log.</p>",
                400,
            )
        assert runtime.session is not None
        try:
            data = await convert_manifest(runtime.session, runtime.settings.api_url, code)
            creds = credentials_from_conversion(data)
        except (TimeoutError, GitHubException, aiohttp.ClientError, ValueError, OSError) as exc:
            log.warning("the manifest conversion failed: %s", type(exc).__name__)
            return _html(
                f"<h1>GitHub did not hand out the App</h1><p>{html.escape(type(exc).__name__)}: the code may have "
                "expired or been used. Start again from the setup URL in the server's log.</p>",
                502,
            )
        saved_to = runtime.settings.credentials_file
        warning = ""
        try:
            assert saved_to is not None
            write_credentials(saved_to, creds)
        except OSError as exc:
            log.error("could not store the App's credentials in %s: %s", saved_to, exc.strerror)
            warning = (
                f'<p class="error" id="not-saved">The credentials could not be saved to '
                f"<code>{html.escape(str(saved_to))}</code> ({html.escape(exc.strerror or 'error')}): the App works "
                "until this server stops. Set <code>NPU_REVIEW_CREDENTIALS_FILE</code> to a writable path, then "
                "generate a new private key on the App's settings page and configure it by hand.</p>"
            )
        await runtime.activate(runtime.settings.with_credentials(creds))  # from now on, _gone() answers 404
    log.info("registered the GitHub App %s (id %s) through the setup page", creds.slug, creds.app_id)
    e = html.escape
    install = f"{creds.html_url}/installations/new"
    body = f"""<h1>Registered</h1>
<p>The GitHub App <b id="app-name">{e(creds.name)}</b> exists and this server now receives its webhooks.
Its credentials are stored in <code>{e(str(saved_to))}</code> (mode 0600).</p>{warning}
<p><a href="{e(install)}" id="install-link">Install it on your repositories</a>, then open a pull request.</p>
<p><a href="/" id="status-link">Status page</a></p>"""
    return _html(body)


def add_routes(app: web.Application, token: str) -> None:
    app[SETUP] = SetupFlow(token)
    app.router.add_get("/setup", setup_page)
    app.router.add_get("/setup/confirm", setup_confirm)
    app.router.add_get("/setup/callback", setup_callback)
