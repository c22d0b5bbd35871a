"""The setup page and the status page end to end, as a person goes through them: Debian's headless Chromium,
driven by Selenium, against `npu-review serve` (a real process, started with no credentials) and the fake GitHub.

Each page is saved as a screenshot under test-artifacts/browser/ (git-ignored) to look at.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shutil
import stat
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from tests.app_harness import AS_DEPLOYED, ROOT, AppProcess, settle, start_app, wait_completed, wait_until
from tests.fakegithub import FakeGitHub, KeyPair

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHROMEDRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
ARTIFACTS = ROOT / "test-artifacts" / "browser"
STATUS_TOKEN = "browser-test-status-token"

DOCKERFILE = "docker/ascend/Dockerfile.ascend_9.1.0_a2"
BASE_DOCKERFILE = "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\nARG MAX_JOBS=8\n"
HEAD_DOCKERFILE = BASE_DOCKERFILE + (
    "RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n"  # 3: NPU301
    "ENV MAX_JOBS=1\n"  # 4: NPU302
)

if not (Path(CHROMIUM).exists() and Path(CHROMEDRIVER).exists()):
    if os.environ.get("CI"):
        raise RuntimeError("CI must have Debian's chromium and chromium-driver (.ci/run installs them)")
    pytest.skip(
        "needs Debian's chromium and chromium-driver (apt-get install chromium chromium-driver)",
        allow_module_level=True,
    )

from selenium import webdriver  # noqa: E402
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException  # noqa: E402
from selenium.webdriver.chrome.service import Service  # noqa: E402
from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import WebDriverWait  # noqa: E402


@pytest.fixture(scope="module")
def browser() -> Iterator[webdriver.Chrome]:
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--disable-gpu", "--window-size=1100,900"):
        options.add_argument(arg)
    driver = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(30)
    try:
        yield driver
    finally:
        driver.quit()


@pytest.fixture
async def blank_fake(aiohttp_server, app_key_pair: KeyPair) -> AsyncIterator[FakeGitHub]:  # type: ignore[no-untyped-def]
    fake = FakeGitHub(1, app_key_pair.public_pem)
    server = await aiohttp_server(fake.app)
    fake.base_url = str(server.make_url("")).rstrip("/")
    yield fake


@pytest.fixture
async def app(blank_fake: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path) -> AsyncIterator[AppProcess]:
    proc = await start_app(
        blank_fake,
        app_key_pair.private_pem,
        0,
        "",
        tmp_path,
        extra_env={**AS_DEPLOYED, "NPU_REVIEW_STATUS_TOKEN": STATUS_TOKEN},
        credentials=False,
    )
    yield proc
    await proc.session.close()
    await proc.stop()


async def run(fn: Any, *args: Any) -> Any:
    """Selenium blocks: it runs in a thread so that the fake GitHub in this event loop can answer the browser."""
    return await asyncio.to_thread(fn, *args)


def heading(driver: webdriver.Chrome, text: str) -> None:
    """Wait until the page that a click led to is there (a click returns before the navigation ends)."""

    def shown(d: webdriver.Chrome) -> bool:
        found = d.find_elements(By.TAG_NAME, "h1")
        try:
            return bool(found) and found[0].text == text
        except WebDriverException as exc:
            # Chromium's way of saying stale while the next page replaces the document: look again.
            if "does not belong to the document" in str(exc):
                return False
            raise

    # The old page's heading may go stale between finding it and reading it: look again.
    WebDriverWait(driver, 15, ignored_exceptions=(StaleElementReferenceException,)).until(
        shown, f"a page headed {text!r}"
    )


def shot(driver: webdriver.Chrome, name: str) -> None:
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    driver.save_screenshot(str(ARTIFACTS / f"{name}.png"))


async def test_register_install_review_and_status_in_a_browser(
    browser: webdriver.Chrome, blank_fake: FakeGitHub, app: AppProcess, tmp_path: Path
) -> None:
    fake = blank_fake
    # 1. The setup URL the server logged (its one-time token included).
    await wait_until(lambda: "/setup?token=" in app.log(), 10, "the setup URL in the log")
    found = re.search(r"open (http://\S+/setup\?token=\S+)", app.log())
    assert found is not None
    setup_url = found.group(1).replace("localhost", "127.0.0.1")

    def fill_setup_form() -> None:
        browser.get(setup_url)
        assert browser.find_element(By.ID, "public_url").get_attribute("value") == app.url
        browser.find_element(By.ID, "account-org").click()
        browser.find_element(By.ID, "org").send_keys("octo-org")
        shot(browser, "1-setup")
        browser.find_element(By.ID, "continue").click()
        heading(browser, "Create the App on GitHub")
        shot(browser, "2-confirm")
        browser.find_element(By.ID, "create").click()
        # GitHub's own confirmation page (the fake's).
        heading(browser, "Create GitHub App for octo-org")
        shot(browser, "3-github-create-app")
        browser.find_element(By.ID, "create-github-app").click()
        # GitHub's redirect back to the setup page, which exchanged the code.
        heading(browser, "Registered")
        shot(browser, "4-registered")

    await run(fill_setup_form)

    # 2. What GitHub received: the manifest from app.yaml with this server's URLs, for the organisation.
    (posted,) = fake.manifest_flow.posted
    assert (posted.account, posted.account_type) == ("octo-org", "Organization")
    assert posted.manifest == {
        "name": "npu-review",
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
        "hook_attributes": {"url": f"{app.url}/webhook", "active": True},
        "redirect_url": f"{app.url}/setup/callback",
    }
    (created,) = fake.manifest_flow.created
    (conversion,) = fake.calls("apps/create-from-manifest")
    assert conversion.status == 201

    # 3. The credentials, for the server's user only; never in the log nor on a page.
    creds_file = tmp_path / "state" / "app-credentials.json"
    assert stat.S_IMODE(creds_file.stat().st_mode) == 0o600
    stored = json.loads(creds_file.read_text())
    assert (stored["app_id"], stored["private_key"], stored["webhook_secret"]) == (
        created.id,
        created.private_pem,
        created.webhook_secret,
    )
    pem_body = created.private_pem.splitlines()[1]
    registered_page = await run(lambda: browser.page_source)
    for secret in (pem_body, created.webhook_secret, created.client_secret):
        assert secret not in app.log() and secret not in registered_page

    # 4. The setup page is gone; the install link leads to the App's installation page.
    async with app.session.get(setup_url) as r:
        assert r.status == 404

    def install() -> None:
        browser.find_element(By.ID, "install-link").click()
        heading(browser, "Install npu-review")
        browser.find_element(By.ID, "install").click()
        WebDriverWait(browser, 15).until(lambda d: d.find_elements(By.ID, "installed"), "the installed page")
        assert browser.find_element(By.ID, "installed").text.startswith("Installed npu-review")
        shot(browser, "5-installed")

    await run(install)
    (installation,) = fake.installations.values()
    assert installation.account.login == "octo-org"

    # 5. A signed delivery (the new App's secret) is accepted and reviewed, without a restart.
    repo = fake.add_repo("octo-org/verl", files={DOCKERFILE: BASE_DOCKERFILE, "README.md": "# verl\n"})
    pull = fake.add_pull(repo, head_files={DOCKERFILE: HEAD_DOCKERFILE, "README.md": "# verl\n"})
    delivery = fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), created.webhook_secret)
    status, _ = await app.post(delivery)
    assert status == 202
    run_ = await wait_completed(fake, pull)
    await settle(app)
    assert run_.conclusion == "neutral"
    assert [(a["start_line"], a["title"]) for a in run_.annotations] == [
        (3, "NPU301 tls-verification-disabled"),
        (4, "NPU302 global-build-parallelism-env"),
    ]
    assert fake.violations == [] and fake.response_errors == []

    # 6. The status page: summary counts for everyone, the review itself with the status token.
    async with aiohttp.ClientSession() as anonymous, anonymous.get(app.url + "/") as r:
        summary = await r.text()
    assert "octo-org" not in summary and pull.head_sha[:12] not in summary

    def status_page() -> list[list[str]]:
        browser.get(f"{app.url}/?token={STATUS_TOKEN}")
        assert browser.current_url == f"{app.url}/"  # the token left the address bar
        shot(browser, "6-status")
        assert browser.find_element(By.ID, "reviews-total").text.split("\n")[0] == "1"
        assert browser.find_element(By.ID, "installations").text.split("\n")[0] == "1"
        assert browser.find_element(By.ID, "queue-depth").text.split("\n")[0] == "0"
        rows = browser.find_elements(By.CSS_SELECTOR, "#review-table tr")
        return [[td.text for td in row.find_elements(By.TAG_NAME, "td")] for row in rows[1:]]

    rows = await run(status_page)
    assert len(rows) == 1
    when, repo_name, number, head, conclusion, findings, duration = rows[0]
    assert (repo_name, number, head, conclusion, findings) == (
        "octo-org/verl",
        "#1",
        pull.head_sha[:12],
        "neutral",
        "2",
    )
    assert when.endswith(" ago") and re.fullmatch(r"\d+\.\d s", duration)

    def summary_page() -> str:
        browser.delete_all_cookies()
        browser.get(f"{app.url}/")
        shot(browser, "7-status-summary")
        assert not browser.find_elements(By.ID, "review-table")
        return str(browser.find_element(By.ID, "details-hint").text)

    assert (await run(summary_page)) == "Installations and the last reviews are shown with the status token."


def test_a_rule_page_of_the_documentation_site(browser: webdriver.Chrome, docs_site: Path) -> None:
    """The built site, served over HTTP as a person reads it: NPU301's page, with its sections and its example."""
    import functools
    import http.server
    import threading

    handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(docs_site))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        browser.get(f"http://127.0.0.1:{server.server_address[1]}/rules/NPU301/")
        WebDriverWait(browser, 20).until(lambda d: d.find_elements(By.CSS_SELECTOR, "article h1"))
        assert browser.find_element(By.CSS_SELECTOR, "article h1").text == "NPU301 tls-verification-disabled"
        headings = [h.text for h in browser.find_elements(By.CSS_SELECTOR, "article h2")]
        assert headings == ["Why", "Bad", "Good", "Fix", "Calibration", "Configure"]
        code = browser.find_elements(By.CSS_SELECTOR, "article pre code")[0].text
        assert code.startswith("RUN wget --no-check-certificate https://example.com/Ascend-cann-toolkit_9.1.0")
        assert "NPU301" in browser.title
        shot(browser, "docs-rule-NPU301")
    finally:
        server.shutdown()
        server.server_close()
