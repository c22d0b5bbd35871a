"""Shared pytest fixtures. Each block is owned by one part of the suite; add yours as a new marked block."""

from __future__ import annotations

import os
import tempfile
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

# The CLI's cache folder (checks.diskcache): one of the session's own, not the user's ~/.cache, so that what one
# run of the suite keeps never meets another's or a user's reviews. The CLI's tests then run with a cache, as
# users do.
os.environ.setdefault("NPU_REVIEW_CACHE_DIR", tempfile.mkdtemp(prefix="npu-review-test-cache-"))

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


# ---------------------------------------------------------------------------------------------------------
# Redis (tests/test_app_queue.py, tests/test_app_redis.py): a real redis-server. .ci/run starts one and sets
# NPU_REVIEW_TEST_REDIS_URL; otherwise one is started here on a free loopback port for the session. Without
# redis-server installed these tests fail (they are never skipped): `apt-get install redis-server`.
# ---------------------------------------------------------------------------------------------------------
import os  # noqa: E402
import shutil  # noqa: E402
import socket  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402
from collections.abc import Iterator  # noqa: E402


@pytest.fixture(scope="session")
def redis_url() -> Iterator[str]:
    url = os.environ.get("NPU_REVIEW_TEST_REDIS_URL")
    if url:
        yield url
        return
    binary = shutil.which("redis-server")
    if binary is None:
        pytest.fail("redis-server is not installed (apt-get install redis-server), or set NPU_REVIEW_TEST_REDIS_URL")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    workdir = tempfile.mkdtemp(prefix="npu-review-redis-")
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no", "--dir", workdir],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2) as c:
                c.sendall(b"PING\r\n")
                if c.recv(16).startswith(b"+PONG"):
                    break
        except OSError:
            pass
        if time.monotonic() > deadline or proc.poll() is not None:
            proc.kill()
            pytest.fail("redis-server did not start")
        time.sleep(0.05)
    yield f"redis://127.0.0.1:{port}/0"
    proc.terminate()
    proc.wait(timeout=10)
    shutil.rmtree(workdir, ignore_errors=True)


# ------------------------------------------------------------------------------------ end of Redis block


# ---------------------------------------------------------------------------------------------------------
# Per-rule modules (tests/rules/): their shared tests and helpers live in tests/rules/support.py, whose asserts
# are rewritten as a test module's. The fixture trees (tests/fixtures/*/*/head/...) are data, never tests.
# ---------------------------------------------------------------------------------------------------------
pytest.register_assert_rewrite("tests.rules.support", "tests.fixture_support")
collect_ignore = ["fixtures"]


# ---------------------------------------------------------------------------------------------------------
# Slow end-to-end groups (marked `slow`): hours of App time on an injected clock, each try real HTTP. The default
# run leaves them out (it stays within a few minutes on 2 cores); .ci/run runs them as its second step with
# NPU_REVIEW_SLOW_TESTS=1 (or run `NPU_REVIEW_SLOW_TESTS=1 python -m pytest -m slow`).
# ---------------------------------------------------------------------------------------------------------
def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "slow: a long end-to-end scenario, run by .ci/run's second step")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if os.environ.get("NPU_REVIEW_SLOW_TESTS") == "1":
        return
    skip = pytest.mark.skip(reason="slow end-to-end scenario: .ci/run's second step runs it (NPU_REVIEW_SLOW_TESTS=1)")
    for item in items:
        if item.get_closest_marker("slow") is not None:
            item.add_marker(skip)


# ------------------------------------------------------------------------------------ end of slow block


# ---------------------------------------------------------------------------------------------------------
# The repository root stays as the tests found it (a queue's SQLite file was once left there).
# ---------------------------------------------------------------------------------------------------------
_ROOT = Path(__file__).resolve().parent.parent
# What a run may leave, all ignored by git: pytest's and hypothesis's caches, coverage data, the browser tests'
# screenshots, and what building the package writes beside the sources.
_RUN_OUTPUTS = (".pytest_cache", ".hypothesis", ".coverage", "test-artifacts", "build", ".mypy_cache")


@pytest.fixture(scope="session", autouse=True)
def _the_repository_root_is_left_clean() -> Iterator[None]:
    before = {p.name for p in _ROOT.iterdir()}
    yield
    left = sorted(
        name
        for name in {p.name for p in _ROOT.iterdir()} - before
        if not name.startswith(_RUN_OUTPUTS) and not name.endswith(".egg-info")
    )
    assert not left, f"the tests left {left} in the repository root"


# ---------------------------------------------------------------------- end of the repository root block


# ---------------------------------------------------------------------------------------------------------
# The documentation site (mkdocs.yml, docs/): built once per session, strictly, into a temporary directory.
# ---------------------------------------------------------------------------------------------------------


@pytest.fixture(scope="session")
def docs_site(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The built site's directory (tests/test_docs.py reads its pages, tests/test_browser.py shows one)."""
    import sys

    site = tmp_path_factory.mktemp("site")
    proc = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=_ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return site


# ------------------------------------------------------------------------- end of the documentation block


# ---------------------------------------------------------------------------------------------------------
# What the engine keeps between reviews (checks.diskcache): each test starts with no stores held in memory, as
# a fresh process does. The App's review code turns in-memory stores on for its process (engine_pool); a test
# that runs it in this process must not leave them on for the tests after it.
# ---------------------------------------------------------------------------------------------------------
@pytest.fixture(autouse=True)
def _fresh_kept_values(monkeypatch: pytest.MonkeyPatch) -> None:
    from npu_review.checks import diskcache

    monkeypatch.setattr(diskcache, "_memory_limit", 0)
    monkeypatch.setattr(diskcache, "_stores", {})
