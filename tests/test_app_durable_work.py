"""The App loses nothing it accepted: refused tokens, outages of more than an hour across a restart, gone
installations and repositories, `/recheck` floods, a store that cannot write. The whole path each time: a signed
delivery, the 202, the fault in the fake GitHub, the recovery, and exactly one completed check run per head with
no comment posted twice. Hours pass on a FakeClock; nothing waits on them."""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path

import pytest

from npu_review.bot.jobs import RETRY_WINDOW_S
from npu_review.bot.reporters import parse_marker
from npu_review.bot.review import RECHECK_COOLDOWN_S
from tests.app_harness import LiveApp, ride_out, start_live_app, wait_until
from tests.conftest import FAKE_APP_ID, FAKE_INSTALLATION_ID, FAKE_WEBHOOK_SECRET
from tests.fakeclock import FakeClock
from tests.fakegithub import FakeGitHub, Fault, KeyPair
from tests.fakegithub.state import Pull
from tests.test_app_e2e import BASE, EXPECTED_ANNOTATIONS, HEAD, bot_comments

STATUS_TOKEN = "status-token-for-tests"


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture(params=["sqlite", "redis"])
def queue_settings(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, str]:
    if request.param == "sqlite":
        return {"queue_url": f"sqlite:///{tmp_path}/queue.sqlite3"}
    url = request.getfixturevalue("redis_url")
    return {"queue_url": url, "redis_prefix": f"test-{uuid.uuid4().hex[:8]}"}


@pytest.fixture
async def apps(fake_github: FakeGitHub, app_key_pair: KeyPair, clock: FakeClock, queue_settings: dict[str, str]):  # type: ignore[no-untyped-def]
    """Starts the App on the test's store (again: a restart on the same store); closes what it started."""
    started: list[LiveApp] = []

    async def start() -> LiveApp:
        from npu_review.bot.settings import Secret

        app = await start_live_app(
            fake_github,
            app_key_pair.private_pem,
            FAKE_APP_ID,
            FAKE_WEBHOOK_SECRET,
            clock,
            status_token=Secret(STATUS_TOKEN),
            **queue_settings,
        )
        started.append(app)
        return app

    yield start
    for app in started:
        await app.close()


def seed(fake: FakeGitHub, name: str = "octo-org/verl") -> Pull:
    repo = fake.add_repo(name, files=BASE)
    return fake.add_pull(repo, head_files=HEAD)


async def open_pr(fake: FakeGitHub, app: LiveApp, pull: Pull) -> None:
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202


def completed(fake: FakeGitHub, pull: Pull) -> list:  # type: ignore[type-arg]
    return [r for r in fake.check_runs_for(pull.repo, pull.head_sha, "npu-review") if r.status == "completed"]


def assert_reviewed_once(fake: FakeGitHub, pull: Pull) -> None:
    (run,) = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
    assert run.status == "completed" and run.conclusion == "failure"
    assert [(a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == EXPECTED_ANNOTATIONS
    fps = [parse_marker(c.body) for c in bot_comments(fake) if c.pull is pull]
    assert len(fps) == 3 and len(set(fps)) == 3
    assert len([r for r in fake.reviews.values() if r.pull is pull]) == 1


async def test_a_revoked_token_is_dropped_and_a_new_one_made_at_once(fake_github: FakeGitHub, apps) -> None:  # type: ignore[no-untyped-def]
    fake = fake_github
    app = await apps()
    first, second = seed(fake), fake.add_pull(fake.repo("octo-org/verl"), head_files={**HEAD, "README.md": "# 2\n"})
    await open_pr(fake, app, first)
    await wait_until(lambda: bool(completed(fake, first)), 20, "the first review")
    assert len(fake.tokens) == 1
    fake.revoke_tokens()  # GitHub revoked it (or it expired early): the App's cache still has it
    await open_pr(fake, app, second)
    await wait_until(lambda: bool(completed(fake, second)), 20, "the second review")
    assert_reviewed_once(fake, second)
    assert len(fake.tokens) == 2  # one new token, made once
    # The calls in flight with the revoked token were each refused once and tried again with the new one.
    refused = [r for r in fake.requests if r.status == 401]
    assert refused and all(r.response["message"] == "Bad credentials" for r in refused)
    minted = [i for i, r in enumerate(fake.requests) if r.operation == "apps/create-installation-access-token"]
    assert len(minted) == 2 and all(fake.requests.index(r) < minted[1] for r in refused)
    assert (await app.services.jobs.waiting_on_github()) == []
    assert fake.violations == []


async def test_a_token_github_keeps_refusing_is_retried_later_not_dropped(
    fake_github: FakeGitHub,
    apps,
    clock: FakeClock,  # type: ignore[no-untyped-def]
) -> None:
    fake = fake_github
    app = await apps()
    pull = seed(fake)
    fake.revoke_tokens()
    # Every token made for the next while is refused too (GitHub's token service lagging behind).
    fake.outage(Fault(status=401, body={"message": "Bad credentials", "documentation_url": "https://docs.github.com"}))
    await open_pr(fake, app, pull)
    await wait_until(lambda: bool(fake.requests), 20, "a first try")
    await ride_out(app, clock, 60)
    # The last try may have just handed the job back to the queue: wait (in real time, the clock stopped) until it
    # is at rest, waiting on GitHub again, before reading it (reading in between raced: 7 in 41 runs).
    waiting_now = []
    for _ in range(500):
        waiting_now = await app.services.jobs.waiting_on_github()
        if waiting_now and app.services.jobs.running() == 0:
            break
        await asyncio.sleep(0.01)
    (waiting,) = waiting_now
    assert waiting.error == "BadRequest 401" and waiting.retries >= 2
    assert fake.check_runs == {}
    fake.end_outage()
    fake.faults.clear()
    await ride_out(app, clock, 600, done=lambda: bool(completed(fake, pull)))
    assert_reviewed_once(fake, pull)
    assert (await app.services.jobs.waiting_on_github()) == []


@pytest.mark.slow
async def test_an_outage_of_more_than_an_hour_across_a_restart_ends_in_one_check_run(
    fake_github: FakeGitHub,
    apps,
    clock: FakeClock,  # type: ignore[no-untyped-def]
) -> None:
    fake = fake_github
    app = await apps()
    pull = seed(fake)
    fake.outage()  # before the check run exists: every call, the token's included, answers 503
    await open_pr(fake, app, pull)
    await ride_out(app, clock, 40 * 60)
    status, public = await app.get_json("/status.json")
    assert status == 200 and public["waiting_on_github"] == 1 and "waiting_list" not in public
    _, detailed = await app.get_json("/status.json", STATUS_TOKEN)
    (row,) = detailed["waiting_list"]
    assert row["pull_request"] == "octo-org/verl#1" and row["head_sha"] == pull.head_sha
    assert row["last_error"] == "GitHubBroken 503" and row["tries"] >= 8
    async with app.session.get(app.url + "/") as r:
        assert 'id="waiting-on-github"><b>1</b>waiting on GitHub' in await r.text()
    await app.close()  # a deploy in the middle of the outage

    app = await apps()
    await ride_out(app, clock, 40 * 60)
    assert fake.check_runs == {} and fake.reviews == {}
    (waiting,) = await app.services.jobs.waiting_on_github()
    assert clock.time() - waiting.failing_since > 3600  # more than an hour down, and still waiting
    tries = waiting.retries
    assert 15 <= tries <= 60
    fake.end_outage()
    await ride_out(app, clock, 600, done=lambda: bool(completed(fake, pull)))
    await wait_until(lambda: app.services.jobs.running() == 0, 10, "the review to end")
    assert_reviewed_once(fake, pull)
    assert (await app.services.jobs.waiting_on_github()) == [] and await app.services.jobs.depth() == 0
    assert fake.violations == []


# The window is the runner's (bot/services.py), the same for both stores: one is enough for six hours.
@pytest.mark.slow
@pytest.mark.parametrize("queue_settings", ["sqlite"], indirect=True)
async def test_a_job_waiting_longer_than_the_window_is_given_up_with_its_check_run_concluded(
    fake_github: FakeGitHub,
    apps,
    clock: FakeClock,  # type: ignore[no-untyped-def]
) -> None:
    fake = fake_github
    app = await apps()
    pull = seed(fake)
    fake.outage()
    await open_pr(fake, app, pull)
    await ride_out(app, clock, RETRY_WINDOW_S - 400)
    assert await app.services.jobs.depth() == 1
    fake.end_outage()
    # GitHub answers again, but not for the trees: the first try that fails past the window gives the job up
    # and concludes its check run with the reason.
    fake.inject("git/get-tree", Fault.server_error(503), times=1000)
    await ride_out(app, clock, 900, done=lambda: bool(completed(fake, pull)))
    (run,) = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
    assert run.conclusion == "neutral" and "GitHub was unavailable for more than 6 hours" in run.output["summary"]
    await wait_until(lambda: app.services.jobs.running() == 0, 10, "the job to end")
    assert await app.services.jobs.depth() == 0


@pytest.mark.parametrize("gone", ["installation", "repository"])
async def test_a_job_whose_installation_or_repository_is_gone_ends_with_a_log_line(
    fake_github: FakeGitHub,
    apps,
    caplog: pytest.LogCaptureFixture,
    gone: str,  # type: ignore[no-untyped-def]
) -> None:
    fake = fake_github
    app = await apps()
    pull = seed(fake)
    if gone == "installation":
        fake.uninstall(FAKE_INSTALLATION_ID)
    else:
        fake.delete_repo("octo-org/verl")
    with caplog.at_level(logging.WARNING, logger="npu_review.bot.services"):
        await open_pr(fake, app, pull)
        await wait_until(lambda: any("dropping job" in r.getMessage() for r in caplog.records), 20, "the log line")
    await wait_until(lambda: app.services.jobs.running() == 0, 10, "the job to end")
    assert await app.services.jobs.depth() == 0 and await app.services.jobs.waiting_on_github() == []
    (line,) = [r.getMessage() for r in caplog.records if "dropping job" in r.getMessage()]
    if gone == "installation":
        assert line.endswith(f"installation {FAKE_INSTALLATION_ID}: GitHub answered 404 for its token")
    else:
        assert line.endswith(": BadRequest 404: Not Found")
    assert fake.check_runs == {}


async def test_a_recheck_flood_by_the_author_re_reviews_an_unchanged_head_once(
    fake_github: FakeGitHub,
    apps,
    clock: FakeClock,  # type: ignore[no-untyped-def]
) -> None:
    fake = fake_github
    app = await apps()
    pull = seed(fake)
    await open_pr(fake, app, pull)
    await wait_until(lambda: len(completed(fake, pull)) == 1, 20, "the first review")
    comments = [fake.add_issue_comment(pull, "/recheck", user=pull.user.login) for _ in range(100)]
    statuses = []
    for c in comments:
        status, _ = await app.post(fake.delivery("issue_comment", fake.issue_comment_payload(c), FAKE_WEBHOOK_SECRET))
        statuses.append(status)
    assert statuses == [202] * 100
    await wait_until(lambda: app.services.jobs.running() == 0, 20, "the rechecks")
    await wait_until(lambda: len(completed(fake, pull)) >= 2, 20, "the re-review")
    await ride_out(app, clock, 5)
    assert len(completed(fake, pull)) == 2  # one re-review of the unchanged head, not 100 (nor 36)
    assert [r.content for r in fake.reactions] == ["+1"]
    assert len(fake.reviews) == 1 and len(bot_comments(fake)) == 3  # nothing new to say, nothing said twice
    # A maintainer is not held by the author's cooldown, nor by the PR's budget the author spent.
    fake.set_role(pull.repo, "maintainer", "write")
    member = fake.add_issue_comment(pull, "/recheck", user="maintainer", author_association="MEMBER")
    status, _ = await app.post(fake.delivery("issue_comment", fake.issue_comment_payload(member), FAKE_WEBHOOK_SECRET))
    assert status == 202
    await wait_until(lambda: len(completed(fake, pull)) == 3, 20, "the maintainer's re-review")
    # After the cooldown, and the author's budget refilled, the author may ask once more.
    await clock.advance(600 + RECHECK_COOLDOWN_S)
    again = fake.add_issue_comment(pull, "/recheck", user=pull.user.login)
    status, _ = await app.post(fake.delivery("issue_comment", fake.issue_comment_payload(again), FAKE_WEBHOOK_SECRET))
    assert status == 202
    await wait_until(lambda: len(completed(fake, pull)) == 4, 20, "the author's later re-review")
    assert len(fake.reviews) == 1 and fake.violations == []
