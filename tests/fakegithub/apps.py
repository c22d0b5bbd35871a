"""GitHub's App manifest flow in the fake: the web pages a browser goes through, and the conversion's state.

Web pages (github.com, not the REST API, so outside the API description):
* `POST /settings/apps/new?state=S` and `POST /organizations/{org}/settings/apps/new?state=S`, a form field
  `manifest` (JSON): the manifest is checked against GitHub's documented manifest parameters (violations recorded
  like any other), then a confirmation page with a "Create GitHub App" button;
* that button: the App is waiting for its conversion; GitHub redirects to the manifest's `redirect_url` with
  `?code=C&state=S` (the state as it came);
* `GET /apps/{slug}/installations/new` and its form: install the new App on the account that made it.
`POST /app-manifests/{code}/conversions` (in the description) then creates the App: a fresh RSA key pair, a new
App id and webhook secret. The fake becomes that App (its JWTs are checked with the new public key).
https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest
"""

from __future__ import annotations

import html
import json
import re
import secrets
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlencode

from aiohttp import web
from jsonschema import Draft4Validator

if TYPE_CHECKING:
    from .server import FakeGitHub

# A code from the manifest flow "expires after one hour" and works once.
CODE_LIFETIME_S = 3600.0
# GitHub's "GitHub App manifest parameters" (callback_urls: "up to 10").
MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["url"],
    "additionalProperties": False,
    "properties": {
        "name": {"type": "string", "minLength": 1, "maxLength": 34},
        "url": {"type": "string", "pattern": "^https?://"},
        "hook_attributes": {
            "type": "object",
            "required": ["url"],
            "additionalProperties": False,
            "properties": {"url": {"type": "string", "pattern": "^https?://"}, "active": {"type": "boolean"}},
        },
        "redirect_url": {"type": "string", "pattern": "^https?://"},
        "callback_urls": {"type": "array", "maxItems": 10, "items": {"type": "string"}},
        "setup_url": {"type": "string"},
        "description": {"type": "string"},
        "public": {"type": "boolean"},
        "default_events": {"type": "array", "items": {"type": "string"}},
        "default_permissions": {
            "type": "object",
            "additionalProperties": {"type": "string", "enum": ["read", "write", "admin"]},
        },
        "request_oauth_on_install": {"type": "boolean"},
        "setup_on_update": {"type": "boolean"},
    },
}
# The permission an event needs before an App may subscribe to it (any of; GitHub's webhook events docs).
EVENT_NEEDS = {
    "pull_request": ("pull_requests",),
    "issue_comment": ("issues", "pull_requests"),
    "check_run": ("checks",),
    "check_suite": ("checks",),
    "push": ("contents",),
    "issues": ("issues",),
}


@dataclass
class PostedManifest:
    account: str  # the user or organisation the App is made for
    account_type: str  # "User" | "Organization"
    manifest: dict[str, Any]
    state: str | None


@dataclass
class CreatedApp:
    id: int
    slug: str
    name: str
    owner: str
    manifest: dict[str, Any]
    private_pem: str
    webhook_secret: str
    client_secret: str


@dataclass
class ManifestFlow:
    posted: list[PostedManifest] = field(default_factory=list)
    pending: dict[str, PostedManifest] = field(default_factory=dict)  # confirmation id -> manifest
    codes: dict[str, tuple[PostedManifest, float]] = field(default_factory=dict)  # code -> (manifest, issued)
    created: list[CreatedApp] = field(default_factory=list)


def slugify(name: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", name.lower()).strip("-") or "app"


def check_manifest(manifest: Any) -> list[str]:
    """What GitHub would refuse in a manifest (an empty list: it is fine)."""
    if not isinstance(manifest, dict):
        return ["the manifest is not a JSON object"]
    problems = [
        f"{'/'.join(str(p) for p in e.absolute_path) or 'manifest'}: {e.message}"
        for e in Draft4Validator(MANIFEST_SCHEMA).iter_errors(manifest)
    ]
    permissions = manifest.get("default_permissions") or {}
    for event in manifest.get("default_events") or []:
        needs = EVENT_NEEDS.get(event)
        if needs is not None and isinstance(permissions, dict) and not any(p in permissions for p in needs):
            problems.append(f"default_events: {event} needs the {' or '.join(needs)} permission")
    return problems


def _page(title: str, body: str, status: int = 200) -> web.Response:
    head = f"<head><meta charset='utf-8'><title>{html.escape(title)}</title></head>"
    text = f"<!doctype html><html>{head}<body>{body}</body></html>"
    return web.Response(status=status, text=text, content_type="text/html")


async def handle_web(fake: FakeGitHub, request: web.Request) -> web.StreamResponse | None:
    """The manifest flow's pages, or None when the request is not one of them."""
    path = request.path
    if path == "/favicon.ico":  # browsers ask for it; GitHub has one, the fake does not
        return web.Response(status=404)
    m = re.fullmatch(r"/organizations/([^/]+)/settings/apps/new", path)
    if request.method == "POST" and (path == "/settings/apps/new" or m):
        return await _new_app_form(fake, request, m.group(1) if m else None)
    if request.method == "POST" and path == "/settings/apps/new/create":
        return await _create(fake, request)
    m = re.fullmatch(r"/apps/([^/]+)/installations/new", path)
    if m and request.method in ("GET", "POST"):
        return await _install(fake, request, m.group(1))
    return None


async def _new_app_form(fake: FakeGitHub, request: web.Request, org: str | None) -> web.Response:
    form = await request.post()
    raw = form.get("manifest")
    where = f"POST {request.path}"
    if not isinstance(raw, str):
        fake.web_violation(where, "no manifest form field")
        return _page("Error", "<p>Invalid manifest</p>", 422)
    try:
        manifest = json.loads(raw)
    except ValueError:
        fake.web_violation(where, "the manifest field is not JSON")
        return _page("Error", "<p>Invalid manifest</p>", 422)
    problems = check_manifest(manifest)
    for problem in problems:
        fake.web_violation(where, problem)
    if problems:
        return _page("Error", "<p>Invalid GitHub App configuration</p>", 422)
    account = org or fake.signed_in_user
    posted = PostedManifest(account, "Organization" if org else "User", manifest, request.query.get("state"))
    fake.user(account, type=posted.account_type)
    fake.manifest_flow.posted.append(posted)
    confirm = secrets.token_hex(8)
    fake.manifest_flow.pending[confirm] = posted
    name = html.escape(str(manifest.get("name", "")))
    body = (
        f"<h1>Create GitHub App for {html.escape(account)}</h1><p id='app-name'>{name}</p>"
        f"<form method='post' action='/settings/apps/new/create'>"
        f"<input type='hidden' name='confirm' value='{confirm}'>"
        "<button type='submit' id='create-github-app'>Create GitHub App</button></form>"
    )
    return _page("Create GitHub App", body)


async def _create(fake: FakeGitHub, request: web.Request) -> web.StreamResponse:
    form = await request.post()
    posted = fake.manifest_flow.pending.pop(str(form.get("confirm", "")), None)
    if posted is None:
        return _page("Error", "<p>Unknown request</p>", 404)
    code = secrets.token_hex(10)
    fake.manifest_flow.codes[code] = (posted, time.time())
    target = posted.manifest.get("redirect_url")
    if not target:
        return _page("Created", f"<p>Created; code {code}</p>")
    query = {"code": code, **({"state": posted.state} if posted.state is not None else {})}
    sep = "&" if "?" in target else "?"
    raise web.HTTPFound(f"{target}{sep}{urlencode(query)}")


async def _install(fake: FakeGitHub, request: web.Request, slug: str) -> web.Response:
    app = next((a for a in fake.manifest_flow.created if a.slug == slug), None)
    if app is None:
        return _page("Not found", "<p>No such App</p>", 404)
    if request.method == "GET":
        body = (
            f"<h1>Install {html.escape(app.name)}</h1><form method='post'>"
            f"<p>on <b>{html.escape(app.owner)}</b>, all repositories</p>"
            "<button type='submit' id='install'>Install</button></form>"
        )
        return _page("Install", body)
    inst = fake.add_installation(account=app.owner)
    return _page("Installed", f"<h1 id='installed'>Installed {html.escape(app.name)} (installation {inst.id})</h1>")


def take_code(flow: ManifestFlow, code: str) -> PostedManifest | None:
    """The manifest a code was issued for, once, within the hour."""
    found = flow.codes.pop(code, None)
    if found is None or time.time() - found[1] > CODE_LIFETIME_S:
        return None
    return found[0]
