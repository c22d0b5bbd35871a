"""Hostile deliveries against the real server: deep JSON, slow or half-open connections, forged metric labels."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from npu_review.bot.webhook import MAX_JSON_DEPTH, parse_json
from tests.app_harness import AppProcess, start_app
from tests.conftest import FAKE_APP_ID, FAKE_WEBHOOK_SECRET
from tests.fakegithub import FakeGitHub, KeyPair, sign

TIMEOUTS = {"NPU_REVIEW_HEADER_TIMEOUT_S": "1", "NPU_REVIEW_BODY_TIMEOUT_S": "1"}


@pytest.fixture
async def app(fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path) -> AsyncIterator[AppProcess]:
    proc = await start_app(
        fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, extra_env=TIMEOUTS
    )
    yield proc
    await proc.session.close()
    await proc.stop()


def nested(depth: int) -> bytes:
    return b'{"zen": "deep", "x": ' + b"[" * (depth - 1) + b"]" * (depth - 1) + b"}"


async def post_signed(app: AppProcess, body: bytes, event: str, delivery: str) -> tuple[int, dict[str, object]]:
    headers = {
        "Content-Type": "application/json",
        "X-GitHub-Event": event,
        "X-GitHub-Delivery": delivery,
        "X-Hub-Signature-256": sign(body, FAKE_WEBHOOK_SECRET),
    }
    async with app.session.post(app.url + "/webhook", data=body, headers=headers) as r:
        return r.status, await r.json()


async def metrics(app: AppProcess) -> str:
    async with app.session.get(app.url + "/metrics") as r:
        return await r.text()


def test_depth_is_measured_without_recursion() -> None:
    assert parse_json(nested(MAX_JSON_DEPTH))["zen"] == "deep"
    with pytest.raises(ValueError, match="nested deeper than 400 levels"):
        parse_json(nested(MAX_JSON_DEPTH + 1))


async def test_deep_json_is_refused_with_400(app: AppProcess, fake_github: FakeGitHub) -> None:
    status, answer = await post_signed(app, nested(100_000), "pull_request", "deep-1")
    assert (status, answer) == (400, {"error": "body is nested deeper than 400 levels"})
    status, answer = await post_signed(app, nested(MAX_JSON_DEPTH + 1), "ping", "deep-2")
    assert (status, answer) == (400, {"error": "body is nested deeper than 400 levels"})
    status, answer = await post_signed(app, nested(MAX_JSON_DEPTH), "ping", "deep-3")
    assert (status, answer) == (200, {"ok": True, "zen": "deep"})
    assert "Traceback" not in app.log()
    assert fake_github.requests == []


async def _until_closed(reader: asyncio.StreamReader, limit: float) -> bytes:
    data = b""
    while True:
        chunk = await asyncio.wait_for(reader.read(1024), limit)
        if not chunk:
            return data
        data += chunk


async def test_a_slow_body_is_answered_408_and_closed_within_the_timeout(app: AppProcess) -> None:
    port = int(app.url.rsplit(":", 1)[1])
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        "POST /webhook HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n"
        "X-GitHub-Event: ping\r\nX-GitHub-Delivery: slow-1\r\nX-Hub-Signature-256: sha256=" + "0" * 64 + "\r\n\r\n"
    )
    writer.write(head.encode())
    started = time.monotonic()

    async def trickle() -> None:  # one byte every 0.4 s, the body never complete
        for _ in range(20):
            await asyncio.sleep(0.4)
            try:
                writer.write(b"{")
                await writer.drain()
            except (ConnectionError, RuntimeError):
                return

    sender = asyncio.ensure_future(trickle())
    answer = await _until_closed(reader, 5)
    elapsed = time.monotonic() - started
    sender.cancel()
    writer.close()
    assert answer.startswith(b"HTTP/1.1 408 ")
    assert b'{"error": "request body not received in time"}' in answer
    assert 0.9 < elapsed < 2.5


async def test_half_open_connections_are_closed_after_the_header_timeout(app: AppProcess) -> None:
    port = int(app.url.rsplit(":", 1)[1])
    conns = [await asyncio.open_connection("127.0.0.1", port) for _ in range(50)]
    started = time.monotonic()
    for i, (_, writer) in enumerate(conns):
        if i % 2:  # half of them send part of a request head, the others nothing at all
            writer.write(b"POST /webhook HTTP/1.1\r\nHost: x\r\n")
    answers = await asyncio.gather(*(_until_closed(reader, 5) for reader, _ in conns))
    elapsed = time.monotonic() - started
    for _, writer in conns:
        writer.close()
    assert answers == [b""] * 50  # closed by the server, no answer
    assert elapsed < 2.5
    async with app.session.get(app.url + "/healthz") as r:  # and the server still serves
        assert r.status == 200


async def test_unverified_deliveries_leave_the_metrics_unchanged(app: AppProcess) -> None:
    before = await metrics(app)
    body = json.dumps({"action": "opened"}).encode()
    forged = 'x"} npu_review_runs_total{conclusion="success"} 99'
    for i in range(20):
        headers = {
            "Content-Type": "application/json",
            "X-GitHub-Event": f"{forged}-{i}" if i % 2 else f"random-{i}",
            "X-GitHub-Delivery": f"u-{i}",
        }
        if i % 3 == 0:
            headers["X-Hub-Signature-256"] = sign(body, "not-the-secret")
        async with app.session.post(app.url + "/webhook", data=body, headers=headers) as r:
            assert r.status == 401
    assert await metrics(app) == before
    # A verified delivery of an event the App does not know is counted under one fixed label.
    status, _ = await post_signed(app, body, forged, "v-1")
    assert status == 202
    after = await metrics(app)
    assert 'npu_review_deliveries_total{event="other",outcome="ignored"} 1' in after
    assert "random" not in after and "99" not in after
