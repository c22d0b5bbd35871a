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
