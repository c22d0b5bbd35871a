"""End to end for GitCode merge requests: signed GitCode deliveries → the App as a real server process → the fake
GitCode (tests/fakegitcode.py), beside the fake GitHub (the same server takes both)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from npu_review.bot.gitcode_review import SUMMARY_MARKER, diff_positions
from npu_review.bot.reporters import parse_marker
from tests.app_harness import AS_DEPLOYED, AppProcess, settle, start_app, wait_until
from tests.conftest import FAKE_APP_ID, FAKE_WEBHOOK_SECRET
from tests.fakegitcode import FakeGitCode, MergeRequest, file_diff, position_line
from tests.fakegithub import FakeGitHub, KeyPair
from tests.test_app_e2e import BASE, DOCKERFILE, HEAD, HEAD_DOCKERFILE

SECRET = "gitcode-webhook-secret"
REPO = "Ascend/torchair"
MR_HOOK = "Merge Request Hook"
NOTE_HOOK = "Note Hook"


@pytest.fixture
async def fake_gitcode(aiohttp_server) -> AsyncIterator[FakeGitCode]:  # type: ignore[no-untyped-def]
    fake = FakeGitCode()
    server = await aiohttp_server(fake.app)
    fake.base_url = str(server.make_url("")).rstrip("/")
    yield fake


def gitcode_env(fake: FakeGitCode, **extra: str) -> dict[str, str]:
    return {
        "GITCODE_TOKEN": fake.token,
        "GITCODE_WEBHOOK_SECRET": SECRET,
        "GITCODE_API_URL": fake.base_url,
        **extra,
    }


@pytest.fixture
async def app(
    fake_github: FakeGitHub, fake_gitcode: FakeGitCode, app_key_pair: KeyPair, tmp_path: Path
) -> AsyncIterator[AppProcess]:
    proc = await start_app(
        fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, gitcode_env(fake_gitcode)
    )
    yield proc
    await proc.session.close()
    await proc.stop()


async def post(app: AppProcess, delivery: tuple[bytes, dict[str, str]]) -> tuple[int, str]:
    body, headers = delivery
    async with app.session.post(app.url + "/gitcode/webhook", data=body, headers=headers) as r:
        return r.status, await r.text()


async def open_mr(fake: FakeGitCode, app: AppProcess, mr: MergeRequest, action: str = "open") -> None:
    status, _ = await post(app, fake.delivery(MR_HOOK, fake.merge_request_hook(mr, action), SECRET))
    assert status == 202
    await wait_until(lambda: summary(fake, mr) is not None, 20, "the summary comment")
    await settle(app)


def summary(fake: FakeGitCode, mr: MergeRequest) -> str | None:
    found = [c for c in fake.bot_comments(mr) if SUMMARY_MARKER in c.body]
    assert len(found) <= 1
    return found[0].body if found else None


def inline(fake: FakeGitCode, mr: MergeRequest) -> dict[int, str]:
    return {c.line: c.body for c in fake.bot_comments(mr) if c.line is not None}


def test_diff_positions_match_the_fakes_reading_of_the_diff() -> None:
    old = "".join(f"l{i}\n" for i in range(1, 40))
    new = old.replace("l3\n", "l3\nadded\n").replace("l30\n", "changed\n")
    diff = file_diff(old, new)
    positions = diff_positions(diff)
    assert positions and all(position_line(diff, p) == line for line, p in positions.items())
    assert positions[4] == 4  # the added line: 3 context lines above it in the first hunk


async def test_an_mr_with_an_ascend_mistake_gets_comments_summary_and_fail_label_once(
    fake_gitcode: FakeGitCode, app: AppProcess
) -> None:
    fake = fake_gitcode
    mr = fake.add_merge_request(REPO, BASE, HEAD)
    delivery = fake.delivery(MR_HOOK, fake.merge_request_hook(mr), SECRET)
    status, _ = await post(app, delivery)
    assert status == 202
    await wait_until(lambda: summary(fake, mr) is not None, 20, "the summary comment")
    await settle(app)
    comments = inline(fake, mr)
    assert sorted(comments) == [4, 5, 7]  # the fake resolved each position to its head line
    assert comments[4].startswith("⚠️ **NPU301** `tls-verification-disabled` (warning)")
    assert comments[5].startswith("🛑 **NPU306** `missing-and-in-continued-run` (error)")
    assert comments[7].startswith("⚠️ **NPU302** `global-build-parallelism-env` (warning)")
    assert all(parse_marker(b) for b in comments.values())
    text = summary(fake, mr)
    assert text is not None and "### npu-review: 1 error, 2 warnings" in text and "label `npu-review: fail`" in text
    assert mr.labels == ["npu-review: fail"]
    posts = len(fake.calls("POST", "/comments"))
    assert posts == 4  # three inline comments and the summary

    # The same delivery again (GitCode's retry, or a replay): taken once.
    status, _ = await post(app, delivery)
    assert status == 200
    await settle(app)
    assert len(fake.calls("POST", "/comments")) == posts and len(fake.calls("GET", "/files")) == 1


async def test_a_fix_deletes_or_edits_stale_comments_and_sets_the_pass_label(
    fake_gitcode: FakeGitCode, app: AppProcess
) -> None:
    fake = fake_gitcode
    mr = fake.add_merge_request(REPO, BASE, HEAD)
    await open_mr(fake, app, mr)
    by_line = {c.line: c for c in fake.bot_comments(mr) if c.line is not None}
    fake.reply(mr, by_line[4], "We need this mirror, fixing.")
    fixed = (
        HEAD_DOCKERFILE.replace("--no-check-certificate ", "")
        .replace("RUN git clone https://example.com/x.git \\\n", "RUN git clone https://example.com/x.git && \\\n")
        .replace("ENV MAX_JOBS=1\n", "")
    )
    fake.push(mr, {**HEAD, DOCKERFILE: fixed})
    await post(app, fake.delivery(MR_HOOK, fake.merge_request_hook(mr, "update"), SECRET))
    await wait_until(lambda: "npu-review: pass" in mr.labels, 20, "the pass label")
    await settle(app)
    ids = {c.id: c for c in fake.bot_comments(mr)}
    assert by_line[5].id not in ids and by_line[7].id not in ids  # nobody replied: deleted
    kept = ids[by_line[4].id]  # replied: edited to say so, the conversation kept
    assert kept.body.startswith(f"✅ **Fixed** in {mr.head_sha[:12]}: this finding is gone.")
    assert mr.labels == ["npu-review: pass"]
    text = summary(fake, mr)
    assert text is not None and "### No Ascend NPU issues found" in text
    assert len([c for c in fake.bot_comments(mr) if SUMMARY_MARKER in c.body]) == 1  # edited in place
    assert len(fake.calls("PATCH", f"/pulls/comments/{kept.id}")) == 1


async def test_recheck_from_a_member_reruns_and_from_anyone_else_does_nothing(
    fake_gitcode: FakeGitCode, app: AppProcess
) -> None:
    fake = fake_gitcode
    mr = fake.add_merge_request(REPO, BASE, HEAD)
    fake.members[(REPO, "maintainer")] = "write"
    fake.members[(REPO, "reader")] = "read"
    await open_mr(fake, app, mr)
    files = len(fake.calls("GET", "/files"))

    for login in ("passer-by", "reader"):  # not a member; a member who may only read
        status, _ = await post(app, fake.delivery(NOTE_HOOK, fake.note_hook(mr, "/recheck", login), SECRET))
        assert status == 202
        await settle(app)
    assert len(fake.calls("GET", "/files")) == files
    assert len(fake.calls("GET", "/collaborators/passer-by/permission")) == 1

    status, _ = await post(app, fake.delivery(NOTE_HOOK, fake.note_hook(mr, "/recheck", "maintainer"), SECRET))
    assert status == 202
    await wait_until(lambda: len(fake.calls("GET", "/files")) == files + 1, 20, "the re-run")
    await settle(app)
    assert len(inline(fake, mr)) == 3  # nothing posted twice

    # Not a command: quoted, in code, or another word.
    for note in ("> /recheck", "```\n/recheck\n```", "/recheck please"):
        status, _ = await post(app, fake.delivery(NOTE_HOOK, fake.note_hook(mr, note, "maintainer"), SECRET))
        assert status == 202
    await settle(app)
    assert len(fake.calls("GET", "/files")) == files + 1


async def test_unsigned_wrongly_signed_and_password_deliveries_are_refused(
    fake_gitcode: FakeGitCode, app: AppProcess
) -> None:
    fake = fake_gitcode
    mr = fake.add_merge_request(REPO, BASE, HEAD)
    payload = fake.merge_request_hook(mr)
    for delivery in (
        fake.delivery(MR_HOOK, payload, None),
        fake.delivery(MR_HOOK, payload, "not-the-secret"),
        fake.delivery(MR_HOOK, payload, None, password=SECRET),  # password mode is off unless allowed
    ):
        status, _ = await post(app, delivery)
        assert status == 401
    await asyncio.sleep(0.2)
    assert fake.requests == []


async def test_password_mode_only_when_allowed_and_with_a_warning(
    fake_github: FakeGitHub, fake_gitcode: FakeGitCode, app_key_pair: KeyPair, tmp_path: Path
) -> None:
    fake = fake_gitcode
    env = gitcode_env(fake, GITCODE_ALLOW_PASSWORD="1")
    app = await start_app(fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env)
    try:
        mr = fake.add_merge_request(REPO, BASE, HEAD)
        status, _ = await post(app, fake.delivery(MR_HOOK, fake.merge_request_hook(mr), None, password="wrong"))
        assert status == 401
        status, _ = await post(app, fake.delivery(MR_HOOK, fake.merge_request_hook(mr), None, password=SECRET))
        assert status == 202
        await wait_until(lambda: summary(fake, mr) is not None, 20, "the summary comment")
        await settle(app)
        assert "accepted by its password (GITCODE_ALLOW_PASSWORD=1)" in app.log()
    finally:
        await app.session.close()
        await app.stop()


async def test_a_too_large_patch_is_read_from_the_repository_and_a_failed_write_is_retried(
    fake_gitcode: FakeGitCode, app: AppProcess
) -> None:
    """GitCode leaves the diff of a too large file out: its added lines come from its contents at both commits
    (its findings in the summary; no diff position to comment on). A comment GitCode fails with 502 is posted
    once it answers, and nothing twice."""
    fake = fake_gitcode
    other = "docker/ascend/Dockerfile.ascend_9.1.0_a3"
    base = {**BASE, other: BASE[DOCKERFILE]}
    head = {**HEAD, other: HEAD_DOCKERFILE}
    mr = fake.add_merge_request(REPO, base, head, too_large={other})
    fake.fail("POST", "/pulls/1/comments", 502, times=2)
    await open_mr(fake, app, mr)
    text = summary(fake, mr)
    assert text is not None and f"`{other}:4`" in text and f"`{other}:5`" in text and f"`{other}:7`" in text
    assert sorted(inline(fake, mr)) == [4, 5, 7]  # the other Dockerfile's; the big one's are in the summary
    assert {c.path for c in fake.bot_comments(mr) if c.line} == {DOCKERFILE}
    markers = [parse_marker(c.body) for c in fake.bot_comments(mr) if c.line]
    assert len(markers) == len(set(markers)) == 3
    assert fake.calls("GET", "/contents/" + ".github/npu-review.yml")  # the config, from the target commit
    assert [r.status for r in fake.calls("POST", "/pulls/1/comments")][:2] == [502, 502]


async def test_gitcode_only_without_the_github_app(
    fake_github: FakeGitHub, fake_gitcode: FakeGitCode, app_key_pair: KeyPair, tmp_path: Path
) -> None:
    """No GitHub App credentials: GitCode is served, GitHub's endpoint takes nothing (no secret to check)."""
    fake = fake_gitcode
    app = await start_app(
        fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, gitcode_env(fake),
        credentials=False,
    )  # fmt: skip
    try:
        mr = fake.add_merge_request(REPO, BASE, HEAD)
        await open_mr(fake, app, mr)
        assert sorted(inline(fake, mr)) == [4, 5, 7] and mr.labels == ["npu-review: fail"]
        async with aiohttp.ClientSession() as s, s.post(app.url + "/webhook", data=b"{}") as r:
            assert r.status in (400, 404)
        assert "setup?token=" not in app.log()
    finally:
        await app.session.close()
        await app.stop()


async def test_the_webhook_is_registered_on_a_repository(fake_gitcode: FakeGitCode) -> None:
    import os
    import sys

    fake = fake_gitcode
    fake.add_merge_request(REPO, BASE, HEAD)
    env = {**os.environ, **gitcode_env(fake)}
    url = "https://review.example.com/gitcode/webhook"
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "npu_review", "gitcode-hook", REPO, "--url", url, env=env,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
    )  # fmt: skip
    out, err = await proc.communicate()
    assert proc.returncode == 0, err.decode()
    assert out.decode() == f"npu-review gitcode-hook: webhook 9529 on {REPO} -> {url} (merge requests, comments)\n"
    (call,) = fake.calls("POST", f"/repos/{REPO}/hooks")
    assert call.body == {
        "url": "https://review.example.com/gitcode/webhook",
        "encryption_type": 1,
        "password": SECRET,
        "merge_requests_events": True,
        "note_events": True,
        "push_events": False,
        "tag_push_events": False,
        "issues_events": False,
    }


async def test_as_deployed_the_worker_process_reviews_merge_requests(
    fake_github: FakeGitHub, fake_gitcode: FakeGitCode, app_key_pair: KeyPair, tmp_path: Path
) -> None:
    """`npu-review serve` as deployed: the server only accepts, its worker process reviews (the settings it hands
    over carry GitCode's too)."""
    fake = fake_gitcode
    env = {**AS_DEPLOYED, **gitcode_env(fake)}
    app = await start_app(fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env)
    try:
        mr = fake.add_merge_request(REPO, BASE, HEAD)
        await open_mr(fake, app, mr)
        assert sorted(inline(fake, mr)) == [4, 5, 7] and mr.labels == ["npu-review: fail"]
        assert "worker process ready" in app.log()
    finally:
        await app.session.close()
        await app.stop()


async def test_a_broken_config_or_a_refused_write_is_said_in_the_summary(
    fake_gitcode: FakeGitCode, app: AppProcess
) -> None:
    """What a neutral check run says on GitHub: a broken config on the target commit (nothing reviewed), or a
    write GitCode refuses for good (400: not tried again)."""
    fake = fake_gitcode
    broken = fake.add_merge_request(REPO, {**BASE, ".github/npu-review.yml": "rules:\n  NPU999: off\n"}, HEAD)
    await open_mr(fake, app, broken)
    assert summary(fake, broken) == (
        f"{SUMMARY_MARKER}\n### npu-review could not complete\n\nThe review did not finish: the repo config is "
        "invalid: .github/npu-review.yml on the target branch: rules: unknown rule id 'NPU999' (see `npu-review "
        "rules`)\n\nComment `/recheck` to try again."
    )
    assert inline(fake, broken) == {} and broken.labels == []

    refused = fake.add_merge_request(REPO, BASE, HEAD, number=2)
    fake.fail("POST", "/pulls/2/labels", 400, times=1)
    await open_mr(fake, app, refused)
    await wait_until(lambda: "could not complete" in (summary(fake, refused) or ""), 20, "the failure's summary")
    assert "an internal error stopped it (GitCodeError)" in (summary(fake, refused) or "")
    assert sorted(inline(fake, refused)) == [4, 5, 7]  # posted before the label was refused


async def test_with_redis_a_receiver_takes_and_a_worker_reviews_merge_requests(
    fake_github: FakeGitHub, fake_gitcode: FakeGitCode, app_key_pair: KeyPair, tmp_path: Path, redis_url: str
) -> None:
    """Replicas: `npu-review serve` only receives, `npu-review worker` runs the merge request's review from Redis;
    a second receiver given the same delivery takes it as a duplicate."""
    import uuid

    from tests.app_harness import start_worker

    fake = fake_gitcode
    env = {**gitcode_env(fake), "NPU_REVIEW_QUEUE": redis_url, "NPU_REVIEW_REDIS_PREFIX": f"t-{uuid.uuid4().hex[:8]}"}
    key = app_key_pair.private_pem
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = await start_app(fake_github, key, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path / "a", env)
    second = await start_app(fake_github, key, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path / "b", env)
    worker = await start_worker(fake_github, key, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env, "0")
    try:
        mr = fake.add_merge_request(REPO, BASE, HEAD)
        delivery = fake.delivery(MR_HOOK, fake.merge_request_hook(mr), SECRET)
        assert (await post(first, delivery))[0] == 202
        assert (await post(second, delivery))[0] == 200
        await wait_until(lambda: mr.labels == ["npu-review: fail"], 20, "the fail label")
        assert sorted(inline(fake, mr)) == [4, 5, 7] and summary(fake, mr) is not None
        # The label is the review's last call to GitCode; the worker logs the review's end just after it.
        await wait_until(lambda: "review done: failure" in worker.log(), 10, "the worker's log of the review")
    finally:
        for app in (first, second):
            await app.session.close()
            await app.stop()
        await worker.stop()
