"""The webhook endpoint in-process: hostile or malformed deliveries are refused before any work."""

from __future__ import annotations

import json
from typing import Any

import pytest

from npu_review.bot.app import create_app
from npu_review.bot.settings import Secret, Settings
from npu_review.bot.webhook import MAX_BODY_BYTES
from tests.conftest import FAKE_APP_ID, FAKE_WEBHOOK_SECRET
from tests.fakegithub import FakeGitHub, KeyPair, sign


@pytest.fixture
async def client(aiohttp_client, fake_github: FakeGitHub, app_key_pair: KeyPair):  # type: ignore[no-untyped-def]
    settings = Settings(
        app_id=str(FAKE_APP_ID),
        private_key=Secret(app_key_pair.private_pem),
        webhook_secret=Secret(FAKE_WEBHOOK_SECRET),
        api_url=fake_github.base_url,
    )
    return await aiohttp_client(create_app(settings))


def headers(body: bytes, event: str = "pull_request", **over: str) -> dict[str, str]:
    h = {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": "d-1",
        "X-Hub-Signature-256": sign(body, FAKE_WEBHOOK_SECRET),
    }
    h.update(over)
    return {k: v for k, v in h.items() if v}


@pytest.mark.parametrize(
    ("body", "over", "status"),
    [
        (b'{"action": "opened"}', {"Content-Type": "text/plain"}, 400),
        (b'{"action": "opened"}', {"X-GitHub-Event": ""}, 400),
        (b'{"action": "opened"}', {"X-GitHub-Delivery": ""}, 400),
        (b'{"action": "opened"}', {"X-Hub-Signature-256": ""}, 401),
        (b'{"action": "opened"}', {"X-Hub-Signature-256": "sha256=" + "0" * 64}, 401),
        (b'{"action": "opened"}', {"X-Hub-Signature-256": "sha1=abc"}, 401),
        (b"{not json", {}, 400),
        (b"[1, 2]", {}, 400),
    ],
)
async def test_bad_deliveries_are_refused(
    client: Any, fake_github: FakeGitHub, body: bytes, over: dict[str, str], status: int
) -> None:
    resp = await client.post("/webhook", data=body, headers=headers(body, **over))
    assert resp.status == status
    assert "error" in await resp.json()
    assert fake_github.requests == []


async def test_oversized_body_is_refused(client: Any, fake_github: FakeGitHub) -> None:
    body = b'{"x": "' + b"a" * (MAX_BODY_BYTES + 10) + b'"}'
    resp = await client.post("/webhook", data=body, headers=headers(body))
    assert resp.status == 413
    assert fake_github.requests == []


async def test_ping_and_unknown_events(client: Any, fake_github: FakeGitHub) -> None:
    body = json.dumps({"zen": "Keep it logically awesome.", "hook_id": 1}).encode()
    resp = await client.post("/webhook", data=body, headers=headers(body, event="ping"))
    assert resp.status == 200 and (await resp.json())["zen"] == "Keep it logically awesome."
    body = b'{"action": "created"}'
    resp = await client.post("/webhook", data=body, headers=headers(body, event="star", **{"X-GitHub-Delivery": "d2"}))
    assert resp.status == 202 and (await resp.json()) == {"ignored": "star"}
    assert fake_github.requests == []


async def test_healthz_and_metrics(client: Any) -> None:
    resp = await client.get("/healthz")
    assert resp.status == 200 and (await resp.json()) == {"status": "ok"}
    body = json.dumps({"zen": "z"}).encode()
    await client.post("/webhook", data=body, headers=headers(body, event="ping"))
    text = await (await client.get("/metrics")).text()
    assert 'npu_review_deliveries_total{event="ping",outcome="ok"} 1' in text
    assert "npu_review_queue_depth 0" in text
