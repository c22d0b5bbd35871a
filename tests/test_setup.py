"""The setup page and the status page in-process: who may register, what is stored, what the status page shows.

The whole flow in a real browser is tests/test_browser.py; these pin the refusals and the exact payloads.
"""

from __future__ import annotations

import html
import json
import re
import stat
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from aiohttp.test_utils import TestClient, TestServer

from npu_review.bot.app import create_app
from npu_review.bot.credentials import load_credentials, write_credentials
from npu_review.bot.settings import AppCredentials, Secret, SettingsError, from_env
from npu_review.bot.setup import build_manifest, shipped_manifest
from tests.fakegithub import FakeGitHub, KeyPair, sign

SETUP_TOKEN = "setup-token-for-tests"
STATUS_TOKEN = "status-token-for-tests"


@pytest.fixture
async def blank_fake(aiohttp_server, app_key_pair: KeyPair) -> AsyncIterator[FakeGitHub]:  # type: ignore[no-untyped-def]
    """A fake GitHub with no App installed anywhere yet (the setup page is about to make one)."""
    fake = FakeGitHub(1, app_key_pair.public_pem)
    server = await aiohttp_server(fake.app)
    fake.base_url = str(server.make_url("")).rstrip("/")
    yield fake


@pytest.fixture
async def unregistered(blank_fake: FakeGitHub, tmp_path: Path) -> AsyncIterator[tuple[TestClient, Path]]:  # type: ignore[type-arg]
    creds = tmp_path / "state" / "app.json"
    settings = from_env(
        {
            "GITHUB_API_URL": blank_fake.base_url,
            "GITHUB_URL": blank_fake.base_url,
            "NPU_REVIEW_CREDENTIALS_FILE": str(creds),
            "NPU_REVIEW_SETUP_TOKEN": SETUP_TOKEN,
            "NPU_REVIEW_STATUS_TOKEN": STATUS_TOKEN,
            "NPU_REVIEW_QUEUE": f"sqlite:///{tmp_path}/queue.sqlite3",  # not the default, in the working directory
        }
    )
    assert not settings.registered
    client = TestClient(TestServer(create_app(settings)))
    await client.start_server()
    yield client, creds
    await client.close()


def _form(page: str, form_id: str) -> tuple[str, dict[str, str]]:
    form = re.search(rf'<form method="(?:get|post)" action="([^"]*)" id="{form_id}">(.*?)</form>', page, re.S)
    assert form is not None, page
    fields = dict(re.findall(r'<input type="hidden" name="([^"]+)" value="([^"]*)">', form.group(2)))
    return html.unescape(form.group(1)), {k: html.unescape(v) for k, v in fields.items()}


async def _register(client: TestClient, fake: FakeGitHub, org: str = "") -> Any:  # type: ignore[type-arg]
    """Drive the flow as a browser would, without one: form, GitHub's form, the redirect back."""
    query = {"token": SETUP_TOKEN, "account": "org" if org else "user", "org": org, "name": "npu-review"}
    confirm = await client.get("/setup/confirm", params=query)
    assert confirm.status == 200
    action, fields = _form(await confirm.text(), "manifest-form")
    async with client.session.post(action, data=fields, allow_redirects=False) as r:
        assert r.status == 200
        confirm_id = re.search(r"name='confirm' value='([^']+)'", await r.text())
    assert confirm_id is not None
    async with client.session.post(
        f"{fake.base_url}/settings/apps/new/create", data={"confirm": confirm_id.group(1)}, allow_redirects=False
    ) as r:
        assert r.status == 302
        back = r.headers["Location"]
    parts = urlsplit(back)
    assert parts.path == "/setup/callback"
    return await client.get(f"/setup/callback?{parts.query}")


async def test_setup_page_needs_the_setup_token(unregistered: tuple[TestClient, Path]) -> None:  # type: ignore[type-arg]
    client, _ = unregistered
    for path in ("/setup", "/setup?token=wrong", "/setup/confirm?token=nope&account=user&name=x"):
        r = await client.get(path)
        assert r.status == 403, path
        assert "Setup token needed" in await r.text()
    r = await client.get(f"/setup?token={SETUP_TOKEN}")
    assert r.status == 200
    text = await r.text()
    # The webhook address defaults to the page's own.
    assert f'value="http://{client.host}:{client.port}"' in text
    # Before registration the webhook refuses deliveries, and health says so.
    r = await client.post("/webhook", data=b"{}", headers={"Content-Type": "application/json"})
    assert r.status == 503
    assert (await client.get("/healthz")).status == 200
    assert await (await client.get("/healthz")).json() == {"status": "awaiting registration"}


async def test_confirm_page_posts_the_exact_manifest_to_the_org_form(
    unregistered: tuple[TestClient, Path],  # type: ignore[type-arg]
    blank_fake: FakeGitHub,
) -> None:
    client, _ = unregistered
    query = {"token": SETUP_TOKEN, "account": "org", "org": "octo-org", "name": "npu-review-ci"}
    r = await client.get("/setup/confirm", params={**query, "public_url": "https://review.example.org/"})
    action, fields = _form(await r.text(), "manifest-form")
    parts = urlsplit(action)
    assert f"{parts.scheme}://{parts.netloc}{parts.path}" == (
        f"{blank_fake.base_url}/organizations/octo-org/settings/apps/new"
    )
    (state,) = parse_qs(parts.query)["state"]
    assert len(state) >= 32
    assert json.loads(fields["manifest"]) == {
        "name": "npu-review-ci",
        "url": "https://github.com/npu-review/npu-review",
        "description": "Reviews pull requests for Ascend NPU mistakes (launch scripts, CI image tags, Dockerfiles).",
        "public": False,
        "default_permissions": {
            "checks": "write",
            "pull_requests": "write",
            "contents": "read",
            "issues": "write",
            "metadata": "read",
        },
        "default_events": ["pull_request", "issue_comment", "check_run", "check_suite"],
        "hook_attributes": {"url": "https://review.example.org/webhook", "active": True},
        "redirect_url": "https://review.example.org/setup/callback",
    }
    bad = await client.get("/setup/confirm", params={**query, "org": "not an org!", "name": ""})
    assert bad.status == 400
    assert re.findall(r"<li>(.*?)</li>", await bad.text()) == [
        "the organisation login is not a GitHub login",
        "the App name must have 1 to 34 characters",
    ]


async def test_registration_stores_the_credentials_and_goes_live(
    unregistered: tuple[TestClient, Path],  # type: ignore[type-arg]
    blank_fake: FakeGitHub,
) -> None:
    client, creds_path = unregistered
    r = await _register(client, blank_fake)
    page = await r.text()
    assert r.status == 200, page
    (app,) = blank_fake.manifest_flow.created
    assert app.owner == "octocat" and app.slug == "npu-review"
    assert blank_fake.violations == [] and blank_fake.response_errors == []
    # The conversion went out exactly once, unauthenticated, with no body.
    (conversion,) = blank_fake.calls("apps/create-from-manifest")
    assert conversion.status == 201 and conversion.body is None and "authorization" not in conversion.headers
    # Stored for the server's user only, and never shown.
    assert stat.S_IMODE(creds_path.stat().st_mode) == 0o600
    assert stat.S_IMODE(creds_path.parent.stat().st_mode) == 0o700
    stored = json.loads(creds_path.read_text())
    assert stored == {
        "version": 1,
        "app_id": app.id,
        "slug": "npu-review",
        "name": "npu-review",
        "html_url": f"{blank_fake.base_url}/apps/npu-review",
        "owner": "octocat",
        "private_key": app.private_pem,
        "webhook_secret": app.webhook_secret,
    }
    assert app.webhook_secret not in page and "PRIVATE KEY" not in page and app.client_secret not in stored.values()
    assert f'href="{blank_fake.base_url}/apps/npu-review/installations/new"' in page
    # Live without a restart: the webhook takes deliveries signed with the new secret; the setup is gone.
    body = json.dumps({"zen": "Design for failure.", "hook_id": 1}).encode()
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": "ping",
        "X-GitHub-Delivery": "p-1",
        "X-Hub-Signature-256": sign(body, app.webhook_secret),
    }
    r = await client.post("/webhook", data=body, headers=headers)
    assert r.status == 200 and (await r.json())["zen"] == "Design for failure."
    for path in (f"/setup?token={SETUP_TOKEN}", "/setup/confirm", "/setup/callback?code=x&state=y"):
        assert (await client.get(path)).status == 404, path
    assert await (await client.get("/healthz")).json() == {"status": "ok"}


async def test_a_callback_not_started_here_is_refused(
    unregistered: tuple[TestClient, Path],  # type: ignore[type-arg]
    blank_fake: FakeGitHub,
) -> None:
    client, creds_path = unregistered
    r = await client.get("/setup/callback?code=abc&state=made-up")
    assert r.status == 400 and "Unknown or expired attempt" in await r.text()
    assert blank_fake.calls("apps/create-from-manifest") == [] and not creds_path.exists()


async def test_status_page_shows_names_only_with_the_status_token(
    unregistered: tuple[TestClient, Path],  # type: ignore[type-arg]
    blank_fake: FakeGitHub,
) -> None:
    client, _ = unregistered
    await _register(client, blank_fake, org="octo-org")
    blank_fake.add_installation(account="octo-org")
    anonymous = await client.get("/status.json")
    doc = await anonymous.json()
    assert doc["status"] == "running" and doc["installations"] == 1 and doc["detailed"] is False
    assert doc["reviews"] == {"total": 0} and doc["queue_depth"] == 0
    assert "installation_list" not in doc and "octo-org" not in json.dumps(doc)
    assert "octo-org" not in await (await client.get("/")).text()
    detailed = await (await client.get("/status.json", headers={"Authorization": f"Bearer {STATUS_TOKEN}"})).json()
    assert detailed["detailed"] is True
    assert [(i["account"], i["type"], i["repository_selection"]) for i in detailed["installation_list"]] == [
        ("octo-org", "Organization", "all")
    ]
    wrong = await (await client.get("/status.json", headers={"Authorization": "Bearer guess"})).json()
    assert wrong["detailed"] is False
    # A browser presents it once in the address; it comes back as a cookie and leaves the address.
    r = await client.get(f"/?token={STATUS_TOKEN}", allow_redirects=False)
    assert r.status == 303 and r.headers["Location"] == "/"
    cookie = r.cookies["npu_review_status"]
    assert cookie["httponly"] and cookie["samesite"] == "Strict"
    assert blank_fake.violations == [] and blank_fake.response_errors == []


def _creds() -> AppCredentials:
    pem, hook = Secret("PEM-TEXT"), Secret("hook-secret-value")
    return AppCredentials(7, "x", "x", "https://github.com/apps/x", "o", pem, hook)


def test_credentials_file_is_0600_whatever_the_umask(tmp_path: Path) -> None:
    import os

    old = os.umask(0)
    try:
        write_credentials(tmp_path / "c.json", _creds())
    finally:
        os.umask(old)
    assert stat.S_IMODE((tmp_path / "c.json").stat().st_mode) == 0o600
    assert load_credentials(tmp_path / "c.json") == _creds()
    assert [p.name for p in tmp_path.iterdir()] == ["c.json"]  # no temporary file left behind


def test_a_credentials_file_others_can_read_stops_start_up(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    write_credentials(path, _creds())
    path.chmod(0o644)
    with pytest.raises(SettingsError, match=r"readable by other users \(mode 644\): run `chmod 600 "):
        from_env({"NPU_REVIEW_CREDENTIALS_FILE": str(path)})
    path.chmod(0o600)
    settings = from_env({"NPU_REVIEW_CREDENTIALS_FILE": str(path)})
    assert settings.registered and settings.app_id == "7" and settings.webhook_secret.reveal() == "hook-secret-value"
    assert "hook-secret-value" not in repr(settings) and "PEM-TEXT" not in repr(settings)
    path.write_text("{not json")
    with pytest.raises(SettingsError, match="is not valid"):
        from_env({"NPU_REVIEW_CREDENTIALS_FILE": str(path)})


def test_environment_credentials_win_over_the_file(tmp_path: Path) -> None:
    path = tmp_path / "c.json"
    write_credentials(path, _creds())
    key = "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"
    env = {"GITHUB_APP_ID": "99", "GITHUB_PRIVATE_KEY": key, "GITHUB_WEBHOOK_SECRET": "s"}
    env["NPU_REVIEW_CREDENTIALS_FILE"] = str(path)
    assert from_env(env).app_id == "99"


def test_manifest_is_app_yaml_with_this_servers_urls() -> None:
    base = shipped_manifest()
    m = build_manifest(base, "https://h.example", "n")
    assert m["hook_attributes"] == {"url": "https://h.example/webhook", "active": True}
    assert m["redirect_url"] == "https://h.example/setup/callback"
    assert {k: v for k, v in m.items() if k not in ("name", "hook_attributes", "redirect_url")} == {
        k: v for k, v in base.items() if k not in ("name", "hook_attributes", "redirect_url")
    }
