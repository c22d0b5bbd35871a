"""Shared pytest fixtures. Each block is owned by one part of the suite; add yours as a new marked block."""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest

# ---------------------------------------------------------------------------------------------------------
# Fake GitHub (tests/fakegithub): App key pair, the fake served in the test's event loop.
# ---------------------------------------------------------------------------------------------------------
from tests.fakegithub import FakeGitHub, KeyPair, generate_key_pair

FAKE_APP_ID = 424242
FAKE_INSTALLATION_ID = 7001
FAKE_WEBHOOK_SECRET = "fake-webhook-secret"


@pytest.fixture(scope="session")
def app_key_pair() -> KeyPair:
    """The App's RSA key pair, made once per session (generation costs ~0.1 s)."""
    return generate_key_pair()


@pytest.fixture
async def fake_github(aiohttp_server, app_key_pair: KeyPair) -> AsyncIterator[FakeGitHub]:  # type: ignore[no-untyped-def]
    """A running fake GitHub on 127.0.0.1:<free port>, with the App (FAKE_APP_ID) installed as
    FAKE_INSTALLATION_ID on the "octo-org" account (no repositories yet: seed with fake.add_repo / add_pull).
    `fake.base_url` is the API root."""
    fake = FakeGitHub(FAKE_APP_ID, app_key_pair.public_pem)
    fake.add_installation(FAKE_INSTALLATION_ID, account="octo-org")
    server = await aiohttp_server(fake.app)
    fake.base_url = str(server.make_url("")).rstrip("/")
    yield fake


# ------------------------------------------------------------------------------- end of fake GitHub block
