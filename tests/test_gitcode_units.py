"""GitCode's pure parts and its client against the fake: settings, which deliveries ask for a review, retries."""

from __future__ import annotations

from collections.abc import AsyncIterator

import aiohttp
import pytest

from npu_review.bot.gitcode import GitCodeClient, GitCodeGone, GitCodeUnavailable
from npu_review.bot.gitcode_webhook import MERGE_REQUEST_HOOK, NOTE_HOOK, _request
from npu_review.bot.github import GONE, RETRY_LATER, failure_kind
from npu_review.bot.settings import Secret, SettingsError, from_env
from tests.fakegitcode import FakeGitCode
from tests.test_app_e2e import BASE, HEAD

REPO = "Ascend/torchair"


def test_gitcode_settings_need_the_token_and_the_secret_together() -> None:
    base = {"NPU_REVIEW_CREDENTIALS_FILE": "/nonexistent/creds.json"}
    s = from_env({**base, "GITCODE_TOKEN": "t", "GITCODE_WEBHOOK_SECRET": "s"})
    assert s.gitcode and s.serving and not s.registered
    assert s.gitcode_api_url == "https://api.gitcode.com" and not s.gitcode_allow_password
    assert (s.gitcode_pass_label, s.gitcode_fail_label) == ("npu-review: pass", "npu-review: fail")
    assert "'t'" not in repr(s) and "'s'" not in repr(s)
    for env in ({"GITCODE_TOKEN": "t"}, {"GITCODE_WEBHOOK_SECRET": "s"}):
        with pytest.raises(SettingsError, match="need both GITCODE_TOKEN and GITCODE_WEBHOOK_SECRET"):
            from_env({**base, **env})
    with pytest.raises(SettingsError, match="must differ"):
        from_env(
            {**base, "GITCODE_TOKEN": "t", "GITCODE_WEBHOOK_SECRET": "s", "NPU_REVIEW_GITCODE_PASS_LABEL": "x",
             "NPU_REVIEW_GITCODE_FAIL_LABEL": "x"}
        )  # fmt: skip
    s = from_env({**base, "GITCODE_TOKEN": "t", "GITCODE_WEBHOOK_SECRET": "s", "GITCODE_ALLOW_PASSWORD": "1"})
    assert s.gitcode_allow_password
    assert not from_env(base).serving


def test_which_deliveries_ask_for_a_review() -> None:
    fake = FakeGitCode()
    mr = fake.add_merge_request(REPO, BASE, HEAD, number=7)
    req = _request(MERGE_REQUEST_HOOK, fake.merge_request_hook(mr, "open"), "d1")
    assert req is not None and (req.owner, req.repo, req.number, req.head_sha) == ("Ascend", "torchair", 7, mr.head_sha)
    assert req.key == "gitcode:ascend/torchair#7" and req.platform == "gitcode"
    assert _request(MERGE_REQUEST_HOOK, fake.merge_request_hook(mr, "update"), "d2") is not None
    for action in ("merge", "close"):
        assert _request(MERGE_REQUEST_HOOK, fake.merge_request_hook(mr, action), "d3") is None
    note = _request(NOTE_HOOK, fake.note_hook(mr, "Looks odd.\n/recheck\n", "maintainer"), "d4")
    assert note is not None and note.requested_by == "maintainer" and note.head_sha is None and note.number == 7
    assert _request(NOTE_HOOK, fake.note_hook(mr, "`/recheck`", "maintainer"), "d5") is None
    system = fake.note_hook(mr, "/recheck", "maintainer")
    system["object_attributes"]["system"] = True
    assert _request(NOTE_HOOK, system, "d6") is None
    broken = fake.merge_request_hook(mr)
    del broken["project"]
    with pytest.raises(ValueError, match="path_with_namespace"):
        _request(MERGE_REQUEST_HOOK, broken, "d7")
    assert _request("Push Hook", {}, "d8") is None


@pytest.fixture
async def client(aiohttp_server) -> AsyncIterator[tuple[FakeGitCode, GitCodeClient]]:  # type: ignore[no-untyped-def]
    fake = FakeGitCode()
    server = await aiohttp_server(fake.app)
    async with aiohttp.ClientSession() as session:
        c = GitCodeClient(session, Secret(fake.token), str(server.make_url("")).rstrip("/"), backoff_base_s=0)
        slept: list[float] = []

        async def sleep(s: float) -> None:
            slept.append(s)

        c.sleep = sleep  # type: ignore[method-assign]
        c.slept = slept  # type: ignore[attr-defined]
        yield fake, c


async def test_the_client_retries_5xx_and_429_and_says_what_is_gone(client: tuple[FakeGitCode, GitCodeClient]) -> None:
    fake, c = client
    mr = fake.add_merge_request(REPO, BASE, HEAD)
    fake.fail("GET", "/pulls/1", 502, times=2)
    assert (await c.get_pull("Ascend", "torchair", 1))["head"]["sha"] == mr.head_sha
    assert [r.status for r in fake.calls("GET", "/pulls/1")] == [502, 502, 200]
    fake.fail("GET", "/pulls/1/files", 429, times=5)
    with pytest.raises(GitCodeUnavailable) as unavailable:
        await c.pull_files("Ascend", "torchair", 1)
    assert failure_kind(unavailable.value) == RETRY_LATER  # the job waits in the queue
    with pytest.raises(GitCodeGone) as gone:
        await c.get_pull("Ascend", "nope", 1)
    assert failure_kind(gone.value) == GONE
    # A creation is tried once: the caller looks for it before trying again.
    fake.fail("POST", "/pulls/1/comments", 503, times=1)
    with pytest.raises(GitCodeUnavailable):
        await c.create_comment("Ascend", "torchair", 1, "hello")
    assert len(fake.calls("POST", "/pulls/1/comments")) == 1
    assert await c.permission("Ascend", "torchair", "stranger") == ""
    assert await c.file("Ascend", "torchair", "no/such/file", mr.base_sha) is None


async def test_the_runner_hands_a_job_to_its_platform_and_gives_up_on_gitcode_after_the_window() -> None:
    """Services.run_job through bot/platform.py: a GitCode job GitCode does not serve waits (RETRY) and, past
    the retry window, is concluded by GitCode's reviewer with the reason; a job for a host not configured is
    dropped."""
    import dataclasses

    from npu_review.bot.assemble import build_services, make_store
    from npu_review.bot.jobs import RETRY, RETRY_WINDOW_S, Job
    from npu_review.bot.review import Outcome, ReviewRequest
    from npu_review.bot.settings import Settings
    from tests.fakeclock import FakeClock

    calls: list[tuple[str, str, bool]] = []

    class Down:
        async def review(self, req: ReviewRequest, external_id: str | None = None, resumed: bool = False) -> Outcome:
            raise GitCodeUnavailable("GET", "/pulls/1", "answered 503")

        async def conclude_abandoned(
            self, req: ReviewRequest, external_id: str, reason: str = "", create: bool = False
        ) -> None:
            calls.append((external_id, reason, create))

    clock = FakeClock()
    settings = Settings(
        app_id="", private_key=Secret(""), webhook_secret=Secret(""), gitcode_token=Secret("t"),
        gitcode_webhook_secret=Secret("s"), review_processes=0,
    )  # fmt: skip
    async with aiohttp.ClientSession() as session:
        services = build_services(settings, session, make_store(settings, clock), clock=clock)
        assert services.gitcode is not None and services.platform(ReviewRequest(0, "a", "b", 1)) is services.reviewer
        services.gitcode = Down()  # type: ignore[assignment]
        req = ReviewRequest(0, "Ascend", "torchair", 1, head_sha="abc", platform="gitcode")
        job = Job("j1", req.key, "abc", False, req.to_json())
        assert (await services.run_job(job)).verdict == RETRY
        late = dataclasses.replace(job, retries=30, failing_since=clock.time() - RETRY_WINDOW_S - 1)
        assert (await services.run_job(late)).verdict != RETRY
        assert calls == [("j1", "GitCode was unavailable for more than 6 hours", True)]
        other = ReviewRequest(0, "a", "b", 1, platform="gitea")
        assert services.platform(other) is None
        assert (await services.run_job(Job("j2", other.key, None, True, other.to_json()))).verdict != RETRY
