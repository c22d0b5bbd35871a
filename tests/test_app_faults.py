"""Fault injection: GitHub failing, rate-limiting, slow or dropping connections; every PR event still ends in
exactly one completed check run per run and exactly one comment per finding."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from npu_review.bot.github import MAX_ATTEMPTS
from npu_review.bot.reporters import parse_marker
from tests.app_harness import AppProcess, settle, start_app, wait_completed, wait_until
from tests.conftest import FAKE_APP_ID, FAKE_INSTALLATION_ID, FAKE_WEBHOOK_SECRET
from tests.fakegithub import FakeGitHub, Fault, KeyPair
from tests.test_app_e2e import BASE, EXPECTED_ANNOTATIONS, HEAD, bot_comments

# Faults hit the longer path: the check run created in progress at once, then updated (tests/test_app_e2e.py
# covers the quick review's single creation).
SLOW_PATH = {"NPU_REVIEW_QUICK_S": "0"}


@pytest.fixture
async def app(fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path) -> AsyncIterator[AppProcess]:
    proc = await start_app(
        fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, extra_env=SLOW_PATH
    )
    yield proc
    await proc.session.close()
    await proc.stop()


def seed(fake: FakeGitHub):  # type: ignore[no-untyped-def]
    repo = fake.add_repo("octo-org/verl", files=BASE)
    return fake.add_pull(repo, head_files=HEAD)


def assert_one_clean_run(fake: FakeGitHub, pull) -> None:  # type: ignore[no-untyped-def]
    runs = fake.check_runs_for(pull.repo, pull.head_sha, "npu-review")
    assert len(runs) == 1 and runs[0].status == "completed" and runs[0].conclusion == "failure"
    assert [(a["start_line"], a["annotation_level"], a["title"]) for a in runs[0].annotations] == EXPECTED_ANNOTATIONS
    fps = [parse_marker(c.body) for c in bot_comments(fake) if c.pull is pull]
    assert len(fps) == 3 and len(set(fps)) == 3
    assert fake.violations == []


async def deliver(fake: FakeGitHub, app: AppProcess, pull):  # type: ignore[no-untyped-def]
    d = fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    status, _ = await app.post(d)
    assert status == 202
    return d


TRANSIENT = [
    ("502-everywhere", "*", Fault.server_error(502), 4),
    ("503-pr", "pulls/get", Fault.server_error(503), 2),
    ("dropped-blob-query", "graphql/post", Fault.dropped(), 2),
    ("502-blob-query", "graphql/post", Fault.server_error(502), 2),
    ("secondary-limit-blob-query", "graphql/post", Fault.secondary_rate_limit(retry_after=1), 1),
    ("502-update", "checks/update", Fault.server_error(502), 2),
    ("secondary-limit", "pulls/create-review", Fault.secondary_rate_limit(retry_after=1), 1),
    ("429-create", "checks/create", Fault.too_many_requests(retry_after=1), 1),
    ("slow-tree", "git/get-tree", Fault.slow(0.5), 2),
    ("500-token", "apps/create-installation-access-token", Fault.server_error(500), 1),
]


async def test_transient_failures_are_retried(fake_github: FakeGitHub, app: AppProcess) -> None:
    """Each fault against one App, one after the other, each case in an installation and repository of its
    own (no token, limit or head of one case is another's), from its delivery to its settled queue."""
    fake = fake_github
    for i, (case, route, fault, times) in enumerate(TRANSIENT):
        installation = fake.add_installation(FAKE_INSTALLATION_ID + 100 + i, account=f"org{i}")
        repo = fake.add_repo(f"org{i}/verl", installation=installation, files=BASE)
        pull = fake.add_pull(repo, head_files=HEAD)
        seen = len(fake.requests)
        fake.inject(route, fault, times=times)
        await deliver(fake, app, pull)
        await wait_completed(fake, pull, timeout=40)
        await settle(app, timeout=30)
        assert_one_clean_run(fake, pull)
        assert any(r.fault for r in fake.requests[seen:]), case  # the fault did happen


async def test_blob_queries_failing_after_every_retry_are_read_through_rest(
    fake_github: FakeGitHub, app: AppProcess
) -> None:
    fake = fake_github
    pull = seed(fake)
    fake.inject("graphql/post", Fault.server_error(502), times=2 * MAX_ATTEMPTS)  # head and base queries
    await deliver(fake, app, pull)
    await wait_completed(fake, pull, timeout=40)
    await settle(app, timeout=30)
    assert_one_clean_run(fake, pull)
    assert [r.status for r in fake.calls("graphql/post")] == [502] * (2 * MAX_ATTEMPTS)
    assert fake.calls("git/get-blob")  # the same blobs, through REST


async def test_lost_answers_to_creations_do_not_duplicate(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    for i, route in enumerate(["pulls/create-review", "checks/create"]):
        repo = fake.add_repo(f"octo-org/verl{i}", files=BASE)
        pull = fake.add_pull(repo, head_files=HEAD)
        fake.inject(route, Fault.dropped(after=True), times=1)  # GitHub does the work, the answer is lost
        await deliver(fake, app, pull)
        await wait_completed(fake, pull, timeout=40)
        await settle(app, timeout=30)
        assert_one_clean_run(fake, pull)
        assert len([r for r in fake.reviews.values() if r.pull is pull]) == 1, route


async def test_primary_rate_limit_is_waited_out(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    pull = seed(fake)
    fake.set_rate_limit(0, reset_in=1)
    await deliver(fake, app, pull)
    await wait_completed(fake, pull, timeout=40)
    await settle(app, timeout=30)
    assert_one_clean_run(fake, pull)


async def test_a_review_github_cannot_serve_waits_and_completes_once(fake_github: FakeGitHub, app: AppProcess) -> None:
    """GitHub fails every retry of a call for two whole attempts of the job: the job is not concluded neutral
    nor dropped, it waits (the status page says so) and completes the check run it made, once, when GitHub
    answers again."""
    fake = fake_github
    pull = seed(fake)
    fake.inject("git/get-tree", Fault.server_error(500), times=4 * MAX_ATTEMPTS)
    await deliver(fake, app, pull)
    waiting_seen: list[int] = []

    async def look() -> None:
        async with app.session.get(app.url + "/status.json") as r:
            waiting_seen.append((await r.json())["waiting_on_github"])

    while not any(r.status == "completed" for r in fake.check_runs_for(pull.repo, pull.head_sha)):
        await look()
        await asyncio.sleep(0.02)
    await settle(app, timeout=30)
    assert max(waiting_seen) == 1
    assert_one_clean_run(fake, pull)
    assert len(fake.reviews) == 1
    assert "it waits and is tried again" in app.log()
    assert fake.calls("git/get-tree")[-1].status == 200


async def test_a_failed_delivery_runs_again_when_redelivered(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    pull = seed(fake)
    # Not GitHub being down (that is waited out): refused for good, so the run ends and the delivery fails.
    refused = {"message": "Resource not accessible by integration", "documentation_url": "https://docs.github.com"}
    fake.inject("pulls/create-review", Fault(status=403, body=refused), times=100)
    d = await deliver(fake, app, pull)
    run = await wait_completed(fake, pull, timeout=60)
    await settle(app, timeout=30)
    # The check run carries every finding even though the comments could not be posted.
    assert run.conclusion == "failure" and len(run.annotations) == 3
    assert "Inline comments could not be posted" in run.output["summary"]
    assert bot_comments(fake) == []
    fake.faults.clear()
    status, _ = await app.post(d)  # GitHub's "Redeliver" sends the same delivery id
    assert status == 202
    await wait_completed(fake, pull, count=2, timeout=40)
    await settle(app, timeout=30)
    assert len(bot_comments(fake)) == 3
    assert fake.violations == []


async def test_a_burst_of_pushes_ends_in_one_run_for_the_newest_head(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    pull = seed(fake)
    fake.inject("git/get-tree", Fault.slow(0.5), times=2)  # the first run is still busy when the pushes come
    await deliver(fake, app, pull)
    heads = [pull.head_sha]
    for i in range(4):
        before = pull.head_sha
        fake.push(pull, {**HEAD, "README.md": f"# verl {i}\n"})
        heads.append(pull.head_sha)
        payload = fake.pull_request_payload(pull, "synchronize", before=before)
        status, _ = await app.post(fake.delivery("pull_request", payload, FAKE_WEBHOOK_SECRET))
        assert status == 202
    await wait_completed(fake, pull, timeout=40)
    await settle(app, timeout=30)
    reviewed = [sha for sha in heads if fake.check_runs_for(pull.repo, sha, "npu-review")]
    # The first head (already running) and the newest; the three in between were coalesced away.
    assert reviewed == [heads[0], heads[-1]]
    for sha in reviewed:
        (run,) = fake.check_runs_for(pull.repo, sha, "npu-review")
        assert run.status == "completed"
    fps = [parse_marker(c.body) for c in bot_comments(fake)]
    assert len(fps) == 3 and len(set(fps)) == 3
    # No comment was made for an old head after the newer one was known.
    assert {c.commit_id for c in bot_comments(fake)} <= {heads[0], heads[-1]}
    assert fake.violations == []


async def test_sigterm_finishes_running_reviews(fake_github: FakeGitHub, app: AppProcess) -> None:
    import signal

    fake = fake_github
    pull = seed(fake)
    fake.inject("git/get-tree", Fault.slow(1.0), times=2)
    await deliver(fake, app, pull)
    await wait_until(lambda: bool(fake.check_runs_for(pull.repo, pull.head_sha)), 10, "the check run to start")
    code = await app.stop(signal.SIGTERM)
    assert code == 0
    assert_one_clean_run(fake, pull)


async def test_a_check_run_github_would_not_conclude_is_concluded_when_it_answers(
    fake_github: FakeGitHub, app: AppProcess
) -> None:
    fake = fake_github
    pull = seed(fake)
    # Every attempt of the run's final update fails, for two attempts of the job.
    fake.inject("checks/update", Fault.server_error(500), times=2 * MAX_ATTEMPTS)
    await deliver(fake, app, pull)
    run = await wait_completed(fake, pull, timeout=60)
    await settle(app, timeout=30)
    # The run made at the start, completed by the third attempt with its findings; nothing posted twice.
    assert_one_clean_run(fake, pull)
    assert run.conclusion == "failure" and len(fake.reviews) == 1
    assert [r.status for r in fake.calls("checks/update")] == [500] * (2 * MAX_ATTEMPTS) + [200]
