"""The fake GitHub itself: it must refuse what GitHub refuses and answer in GitHub's shape."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import hmac
import json
import time
from collections.abc import AsyncIterator
from typing import Any

import aiohttp
import gidgethub
import jwt
import pytest
from aiohttp import web
from gidgethub.aiohttp import GitHubAPI
from gidgethub.apps import get_installation_access_token

from tests.conftest import FAKE_APP_ID, FAKE_INSTALLATION_ID
from tests.fakegithub import (
    FakeGitHub,
    FakeGitHubProcess,
    Fault,
    KeyPair,
    PullFile,
    adjust,
    load_example,
    make_app_jwt,
    sign,
)
from tests.fakegithub.diff import FileDiff, make_patch
from tests.fakegithub.state import git_sha

REPO = "octo-org/trainer"
BASE_FILES = {
    "README.md": "# trainer\n",
    "scripts/run_npu.sh": "".join(f"echo step {i}\n" for i in range(1, 41)),
    "docker/Dockerfile": "FROM ubuntu:22.04\nRUN apt-get update\n",
}
HEAD_FILES = {
    **BASE_FILES,
    # line 3 changed, line 30 changed: two hunks far apart
    "scripts/run_npu.sh": "".join(
        ("export HCCL_CONNECT_TIMEOUT=1200\n" if i == 3 else "torchrun train.py\n" if i == 30 else f"echo step {i}\n")
        for i in range(1, 41)
    ),
    "docker/Dockerfile": "FROM ubuntu:22.04\nRUN apt-get update\nRUN pip install torch-npu\n",
    "new.py": "print('hi')\n",
}


@pytest.fixture
async def fake(fake_github: FakeGitHub) -> AsyncIterator[FakeGitHub]:
    """The shared fake, checked afterwards: its own answers must match GitHub's description."""
    yield fake_github
    assert fake_github.response_errors == [], "\n".join(fake_github.response_errors)


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession() as s:
        yield s


async def app_token(fake: FakeGitHub, session: aiohttp.ClientSession, keys: KeyPair) -> str:
    gh = GitHubAPI(session, "npu-review-tests", base_url=fake.base_url)
    data = await get_installation_access_token(
        gh, installation_id=str(FAKE_INSTALLATION_ID), app_id=str(FAKE_APP_ID), private_key=keys.private_pem
    )
    return str(data["token"])


async def installation_api(fake: FakeGitHub, session: aiohttp.ClientSession, keys: KeyPair) -> GitHubAPI:
    return GitHubAPI(
        session, "npu-review-tests", oauth_token=await app_token(fake, session, keys), base_url=fake.base_url
    )


def seed_pull(fake: FakeGitHub, **kwargs: Any) -> Any:
    repo = fake.add_repo(REPO, files=BASE_FILES)
    return fake.add_pull(repo, head_files=HEAD_FILES, **kwargs)


# ----------------------------------------------------------------------------------------------- auth


async def test_installation_token_flow_with_gidgethub(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    data = await gh.getitem(f"/repos/{REPO}/pulls/{pull.number}")
    assert data["head"]["sha"] == pull.head_sha
    assert data["base"]["ref"] == "main"
    assert data["url"] == f"{fake.base_url}/repos/{REPO}/pulls/{pull.number}"
    assert fake.violations == []
    token_call = fake.calls("apps/create-installation-access-token")[0]
    assert token_call.headers["authorization"] == "bearer <redacted>"
    assert token_call.status == 201
    assert fake.calls("GET /repos/{owner}/{repo}/pulls/{pull_number}")[0].headers["authorization"] == "token <redacted>"


@pytest.mark.parametrize(
    "make_token, complaint",
    [
        (lambda keys: "not-a-jwt", "could not be decoded"),
        (
            lambda keys: jwt.encode(
                {"iat": int(time.time()) - 60, "exp": int(time.time()) + 500, "iss": "1"},
                keys.private_pem,
                algorithm="RS256",
            ),
            "Issuer",
        ),
        (lambda keys: make_app_jwt(keys.private_pem, FAKE_APP_ID, lifetime=3600), "too far in the future"),
        (lambda keys: make_app_jwt(keys.private_pem, FAKE_APP_ID, iat=int(time.time()) - 2000), "exp"),
        (
            lambda keys: jwt.encode(
                {"iat": int(time.time()) - 60, "exp": int(time.time()) + 500, "iss": str(FAKE_APP_ID)},
                "a-shared-secret-long-enough-for-hs256",
                algorithm="HS256",
            ),
            "could not be decoded",
        ),
        (lambda keys: make_app_jwt(keys.private_pem, FAKE_APP_ID)[:-4] + "AAAA", "could not be decoded"),
    ],
    ids=["garbage", "wrong-iss", "too-long", "expired", "hs256", "bad-signature"],
)
async def test_bad_app_jwt_is_refused(fake, session, app_key_pair, make_token, complaint):
    url = f"{fake.base_url}/app/installations/{FAKE_INSTALLATION_ID}/access_tokens"
    headers = {"Authorization": f"Bearer {make_token(app_key_pair)}", "User-Agent": "t"}
    async with session.post(url, headers=headers) as resp:
        assert resp.status == 401
        assert "message" in await resp.json()
    assert [v.kind for v in fake.violations] == ["auth"]
    assert complaint in fake.violations[0].message
    assert fake.tokens == {}


async def test_expired_token_is_refused_and_is_a_violation(fake, session, app_key_pair):
    seed_pull(fake)
    fake.token_lifetime = 0.5
    gh = await installation_api(fake, session, app_key_pair)
    token_response = fake.calls("apps/create-installation-access-token")[0].response
    assert token_response["expires_at"].endswith("Z")
    await gh.getitem(f"/repos/{REPO}/pulls/1")
    await asyncio.sleep(0.6)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.getitem(f"/repos/{REPO}/pulls/1")
    assert info.value.status_code == 401
    assert [v.kind for v in fake.violations] == ["expired-token"]


async def test_revoked_token_is_refused_without_violation(fake, session, app_key_pair):
    seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    fake.revoke_tokens()
    with pytest.raises(gidgethub.BadRequest):
        await gh.getitem(f"/repos/{REPO}/pulls/1")
    assert fake.violations == []


async def test_token_is_scoped_to_the_installation(fake, session, app_key_pair):
    seed_pull(fake)
    other = fake.add_installation(9, account="someone-else")
    fake.add_repo("someone-else/private", installation=other, files={"a": "b"})
    gh = await installation_api(fake, session, app_key_pair)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.getitem("/repos/someone-else/private/contents/a")
    assert info.value.status_code == 404
    assert [v.kind for v in fake.violations] == ["scope"]


async def test_missing_permission_is_403(fake, session, app_key_pair):
    fake.installations[FAKE_INSTALLATION_ID].permissions = {"metadata": "read", "pull_requests": "read"}
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha})
    assert info.value.status_code == 403
    assert fake.violations[0].kind == "permission"


async def test_missing_auth_and_user_agent(fake, session):
    seed_pull(fake)
    async with session.get(f"{fake.base_url}/repos/{REPO}/pulls/1", headers={"User-Agent": "t"}) as resp:
        assert resp.status == 401
    async with session.get(f"{fake.base_url}/repos/{REPO}/pulls/1", skip_auto_headers=["User-Agent"]) as resp:
        assert resp.status == 403
    assert [v.kind for v in fake.violations] == ["auth", "user-agent"]


# ------------------------------------------------------------------------------ validation by the spec


async def test_bad_body_is_a_violation_and_422(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.post(
            f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha, "status": "done"}
        )
    assert info.value.status_code == 422
    assert [v.kind for v in fake.violations] == ["invalid-body"]
    assert "status" in fake.violations[0].message
    assert fake.check_runs == {}


async def test_unknown_field_is_a_violation_but_accepted(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha, "colour": "red"})
    assert [v.kind for v in fake.violations] == ["unknown-field"]
    assert len(fake.check_runs) == 1


async def test_unknown_route_wrong_method_and_bad_params(fake, session, app_key_pair):
    seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    for call in (
        gh.getitem(f"/repos/{REPO}/pulls/1/reviews"),  # not in the description
        gh.delete(f"/repos/{REPO}/pulls/1"),  # wrong method
        gh.getitem(f"/repos/{REPO}/pulls/one"),  # pull_number must be an integer
    ):
        with pytest.raises(gidgethub.BadRequest) as info:
            await call
        assert info.value.status_code == 404
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.getitem(f"/repos/{REPO}/pulls/1/files?per_page=many")
    assert info.value.status_code == 422
    await gh.getitem(f"/repos/{REPO}/pulls/1/files?perpage=5")
    assert [v.kind for v in fake.violations] == [
        "unknown-route",
        "unknown-route",
        "invalid-path-param",
        "invalid-query",
        "unknown-query-param",
    ]


# ---------------------------------------------------------------------------------------- check runs


async def test_check_run_lifecycle_history_and_list(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    created = await gh.post(
        f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha, "status": "in_progress"}
    )
    assert created["status"] == "in_progress" and created["conclusion"] is None
    assert [p["number"] for p in created["pull_requests"]] == [pull.number]
    annotations = [
        {"path": "new.py", "start_line": 1, "end_line": 1, "annotation_level": "warning", "message": f"m{i}"}
        for i in range(50)
    ]
    await gh.patch(created["url"], data={"output": {"title": "t", "summary": "s", "annotations": annotations}})
    done = await gh.patch(
        f"/repos/{REPO}/check-runs/{created['id']}",
        data={"conclusion": "neutral", "output": {"title": "t", "summary": "s2", "annotations": annotations[:3]}},
    )
    assert done["status"] == "completed" and done["conclusion"] == "neutral"
    assert done["output"]["annotations_count"] == 53
    run = fake.check_runs[created["id"]]
    assert [action for action, _ in run.history] == ["create", "update", "update"]
    assert run.updates[2]["conclusion"] == "neutral"
    # a second run with another name, then list with a filter
    await gh.post(f"/repos/{REPO}/check-runs", data={"name": "other", "head_sha": pull.head_sha})
    listed = await gh.getitem(f"/repos/{REPO}/commits/{pull.head_sha}/check-runs?check_name=npu-review")
    assert listed["total_count"] == 1 and listed["check_runs"][0]["id"] == created["id"]
    by_branch = await gh.getitem(f"/repos/{REPO}/commits/{pull.head_ref}/check-runs")
    assert by_branch["total_count"] == 2
    assert fake.violations == []


@pytest.mark.parametrize(
    "body",
    [
        {"status": "completed"},
        {"status": "completed", "completed_at": "2024-01-01T00:00:00Z"},
    ],
)
async def test_completed_check_run_needs_conclusion(fake, session, app_key_pair, body):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha, **body})
    assert info.value.status_code == 422
    created = await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha})
    with pytest.raises(gidgethub.BadRequest):
        await gh.patch(f"/repos/{REPO}/check-runs/{created['id']}", data={"status": "completed"})
    assert [v.kind for v in fake.violations] == ["semantic", "invalid-body"]
    assert len(fake.check_runs[created["id"]].history) == 1


async def test_check_run_on_unknown_sha_is_422(fake, session, app_key_pair):
    seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": "0" * 40})
    assert info.value.status_code == 422
    assert fake.violations[0].kind == "semantic"


# -------------------------------------------------------------------------------------------- reviews


def comment(path: str, line: int, **extra: Any) -> dict[str, Any]:
    return {"path": path, "line": line, "side": "RIGHT", "body": f"finding at {path}:{line}", **extra}


async def test_review_with_comments_in_the_diff(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    review = await gh.post(
        f"/repos/{REPO}/pulls/{pull.number}/reviews",
        data={
            "commit_id": pull.head_sha,
            "event": "COMMENT",
            "body": "npu-review found 3 problems",
            "comments": [
                comment("scripts/run_npu.sh", 3),  # added line
                comment("scripts/run_npu.sh", 5),  # context line in the first hunk
                comment("scripts/run_npu.sh", 31, start_line=29),  # multi-line, inside the second hunk
                comment("docker/Dockerfile", 3),
            ],
        },
    )
    assert review["state"] == "COMMENTED" and review["user"]["login"] == "npu-review[bot]"
    listed = await gh.getitem(f"/repos/{REPO}/pulls/{pull.number}/comments")
    assert [(c["path"], c["line"], c["start_line"]) for c in listed] == [
        ("scripts/run_npu.sh", 3, None),
        ("scripts/run_npu.sh", 5, None),
        ("scripts/run_npu.sh", 31, 29),
        ("docker/Dockerfile", 3, None),
    ]
    assert listed[0]["diff_hunk"].splitlines()[-1] == "+export HCCL_CONNECT_TIMEOUT=1200"
    assert all(c["pull_request_review_id"] == review["id"] for c in listed)
    assert fake.violations == []


@pytest.mark.parametrize(
    "bad",
    [
        comment("scripts/run_npu.sh", 15),  # between the two hunks
        comment("scripts/run_npu.sh", 31, start_line=4),  # spans two hunks
        comment("README.md", 1),  # a file the pull request does not touch
        comment("new.py", 2),  # past the end of an added file
        comment("scripts/run_npu.sh", 30, start_line=30),  # start_line must precede line
    ],
    ids=["between-hunks", "across-hunks", "untouched-file", "past-end", "empty-range"],
)
async def test_review_with_one_comment_outside_the_diff_is_rejected_whole(fake, session, app_key_pair, bad):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.post(
            f"/repos/{REPO}/pulls/{pull.number}/reviews",
            data={"event": "COMMENT", "body": "x", "comments": [comment("new.py", 1), bad]},
        )
    assert info.value.status_code == 422
    assert fake.reviews == {} and fake.review_comments == {}
    assert [v.kind for v in fake.violations] == ["semantic"]


async def test_left_side_comment_on_a_removed_line(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    await gh.post(
        f"/repos/{REPO}/pulls/{pull.number}/reviews",
        data={"event": "COMMENT", "body": "x", "comments": [comment("scripts/run_npu.sh", 3, side="LEFT")]},
    )
    assert fake.violations == []


async def test_review_comments_update_delete_and_pagination(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    await gh.post(
        f"/repos/{REPO}/pulls/{pull.number}/reviews",
        data={"event": "COMMENT", "body": "x", "comments": [comment("scripts/run_npu.sh", n) for n in range(1, 7)]},
    )
    listed = [c async for c in gh.getiter(f"/repos/{REPO}/pulls/{pull.number}/comments?per_page=4")]
    assert [c["line"] for c in listed] == [1, 2, 3, 4, 5, 6]
    first, second = listed[0]["id"], listed[1]["id"]
    edited = await gh.patch(f"/repos/{REPO}/pulls/comments/{first}", data={"body": "fixed now"})
    assert edited["body"] == "fixed now"
    await gh.delete(f"/repos/{REPO}/pulls/comments/{second}")
    assert second not in fake.review_comments
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.delete(f"/repos/{REPO}/pulls/comments/{second}")
    assert info.value.status_code == 404
    # someone else's comment: allowed by GitHub, but the App must not touch it
    human = fake.add_review_comment(pull, "I disagree", in_reply_to=first, user="alice")
    await gh.patch(f"/repos/{REPO}/pulls/comments/{human.id}", data={"body": "edited by the bot"})
    assert [v.kind for v in fake.violations] == ["foreign-comment"]


# ------------------------------------------------------------------------------- files, diff, contents


async def test_pull_files_pagination_matches_github(fake, session, app_key_pair):
    repo = fake.add_repo(REPO, files={"README.md": "x\n"})
    head = {"README.md": "x\n", **{f"f{i:03}.txt": f"{i}\n" for i in range(250)}}
    pull = fake.add_pull(repo, head_files=head)
    gh = await installation_api(fake, session, app_key_pair)
    url = f"{fake.base_url}/repos/{REPO}/pulls/{pull.number}/files?per_page=100&page=2"
    token = await app_token(fake, session, app_key_pair)
    async with session.get(url, headers={"Authorization": f"token {token}", "User-Agent": "t"}) as resp:
        assert resp.status == 200
        page = await resp.json()
        link = resp.headers["Link"]
    base = f"{fake.base_url}/repositories/{repo.id}/pulls/{pull.number}/files"
    assert link == (
        f'<{base}?per_page=100&page=1>; rel="prev", <{base}?per_page=100&page=3>; rel="next", '
        f'<{base}?per_page=100&page=3>; rel="last", <{base}?per_page=100&page=1>; rel="first"'
    )
    assert [f["filename"] for f in page][:2] == ["f100.txt", "f101.txt"]
    # gidgethub follows the Link headers (through /repositories/{id}/...) to the end
    files = [f async for f in gh.getiter(f"/repos/{REPO}/pulls/{pull.number}/files?per_page=100")]
    assert len(files) == 250 and files[0]["status"] == "added" and files[0]["patch"] == "@@ -0,0 +1 @@\n+0"
    # per_page is capped at 100; the default is 30; a single page has no Link
    async with session.get(
        f"{fake.base_url}/repos/{REPO}/pulls/{pull.number}/files?per_page=500",
        headers={"Authorization": f"token {token}", "User-Agent": "t"},
    ) as resp:
        assert len(await resp.json()) == 100
    assert len(await gh.getitem(f"/repos/{REPO}/pulls/{pull.number}/files")) == 30
    small = fake.add_pull(repo, head_files={"README.md": "y\n"})
    async with session.get(
        f"{fake.base_url}/repos/{REPO}/pulls/{small.number}/files",
        headers={"Authorization": f"token {token}", "User-Agent": "t"},
    ) as resp:
        assert "Link" not in resp.headers
    assert fake.violations == []


async def test_pull_diff_media_type_and_too_large(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    diff = await gh.getitem(f"/repos/{REPO}/pulls/{pull.number}", accept="application/vnd.github.diff")
    assert "diff --git a/new.py b/new.py\nnew file mode 100644" in diff
    assert "+RUN pip install torch-npu" in diff
    pull.diff_too_large = True
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.getitem(f"/repos/{REPO}/pulls/{pull.number}", accept="application/vnd.github.diff")
    assert info.value.status_code == 406
    assert "too_large" in json.dumps(fake.requests[-1].response)
    assert fake.violations == []


async def test_contents_trees_and_blobs(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    content = await gh.getitem(f"/repos/{REPO}/contents/docker/Dockerfile?ref={pull.head_sha}")
    data = HEAD_FILES["docker/Dockerfile"].encode()
    assert base64.b64decode(content["content"]) == data
    assert content["sha"] == git_sha("blob", data) == hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
    base = await gh.getitem(f"/repos/{REPO}/contents/docker/Dockerfile?ref=main")
    assert base64.b64decode(base["content"]) == BASE_FILES["docker/Dockerfile"].encode()
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.getitem(f"/repos/{REPO}/contents/.github/npu-review.yml?ref=main")
    assert info.value.status_code == 404
    listing = await gh.getitem(f"/repos/{REPO}/contents/scripts?ref={pull.head_sha}")
    assert [e["name"] for e in listing] == ["run_npu.sh"]
    tree = await gh.getitem(f"/repos/{REPO}/git/trees/{pull.head_sha}?recursive=1")
    assert not tree["truncated"]
    paths = {e["path"]: e for e in tree["tree"]}
    assert set(paths) == {"README.md", "docker", "docker/Dockerfile", "new.py", "scripts", "scripts/run_npu.sh"}
    assert paths["docker"]["type"] == "tree" and paths["docker"]["mode"] == "040000"
    top = await gh.getitem(f"/repos/{REPO}/git/trees/{pull.head_sha}")
    assert {e["path"] for e in top["tree"]} == {"README.md", "docker", "new.py", "scripts"}
    blob = await gh.getitem(paths["new.py"]["url"])
    assert base64.b64decode(blob["content"]) == b"print('hi')\n"
    assert fake.violations == []


async def test_fork_pull_request(fake, session, app_key_pair):
    repo = fake.add_repo(REPO, files=BASE_FILES)
    fork = fake.add_repo("alice/trainer", installed=False)
    pull = fake.add_pull(repo, head_repo=fork, head_files=HEAD_FILES, user="alice")
    gh = await installation_api(fake, session, app_key_pair)
    data = await gh.getitem(f"/repos/{REPO}/pulls/{pull.number}")
    assert data["head"]["repo"]["full_name"] == "alice/trainer" and data["base"]["repo"]["full_name"] == REPO
    # the head commit is readable through the base repository, as on GitHub
    await gh.getitem(f"/repos/{REPO}/contents/new.py?ref={pull.head_sha}")
    run = await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha})
    assert run["pull_requests"] == []  # GitHub leaves fork pull requests out
    assert fake.violations == []


# ------------------------------------------------------------------------------- conversation, people


async def test_issue_comment_reaction_and_permission(fake, session, app_key_pair):
    pull = seed_pull(fake)
    fake.set_role(REPO, "maintainer", "maintain")
    recheck = fake.add_issue_comment(pull, "/recheck", user="maintainer", author_association="MEMBER")
    gh = await installation_api(fake, session, app_key_pair)
    first = await gh.post(f"/repos/{REPO}/issues/comments/{recheck.id}/reactions", data={"content": "eyes"})
    again = await gh.post(f"/repos/{REPO}/issues/comments/{recheck.id}/reactions", data={"content": "eyes"})
    assert first["id"] == again["id"]
    assert [c.status for c in fake.calls("reactions/create-for-issue-comment")] == [201, 200]
    reply = await gh.post(f"/repos/{REPO}/issues/{pull.number}/comments", data={"body": "Re-running."})
    assert reply["user"]["type"] == "Bot"
    perm = await gh.getitem(f"/repos/{REPO}/collaborators/maintainer/permission")
    assert (perm["permission"], perm["role_name"]) == ("write", "maintain")
    stranger = await gh.getitem(f"/repos/{REPO}/collaborators/{pull.user.login}/permission")
    assert stranger["permission"] == "read"
    with pytest.raises(gidgethub.BadRequest):
        await gh.post(f"/repos/{REPO}/issues/comments/{recheck.id}/reactions", data={"content": "party"})
    assert [v.kind for v in fake.violations] == ["invalid-body"]


# -------------------------------------------------------------------------------------------- GraphQL

THREADS_QUERY = """
query($owner: String!, $name: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $name) {
    pullRequest(number: $number) {
      reviewThreads(first: 2, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id isResolved
          comments(first: 50) { nodes { databaseId body author { login } } }
        }
      }
    }
  }
}"""
RESOLVE = "mutation($id: ID!) { resolveReviewThread(input: {threadId: $id}) { thread { id isResolved } } }"


async def test_graphql_lists_and_resolves_review_threads(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    await gh.post(
        f"/repos/{REPO}/pulls/{pull.number}/reviews",
        data={"event": "COMMENT", "body": "x", "comments": [comment("new.py", 1), comment("docker/Dockerfile", 3)]},
    )
    bot_comment = next(iter(fake.review_comments.values()))
    fake.add_review_comment(pull, "why?", in_reply_to=bot_comment, user="alice")
    fake.add_review_comment(pull, "a human thread", path="scripts/run_npu.sh", line=30, user="alice")
    endpoint = f"{fake.base_url}/graphql"
    threads, cursor = [], None
    while True:
        data = await gh.graphql(
            THREADS_QUERY, endpoint=endpoint, owner="octo-org", name="trainer", number=pull.number, cursor=cursor
        )
        page = data["repository"]["pullRequest"]["reviewThreads"]
        threads += page["nodes"]
        if not page["pageInfo"]["hasNextPage"]:
            break
        cursor = page["pageInfo"]["endCursor"]
    assert len(threads) == 3
    first = threads[0]
    assert [(c["author"]["login"], c["body"]) for c in first["comments"]["nodes"]] == [
        ("npu-review", "finding at new.py:1"),  # GraphQL gives bots their login without [bot]
        ("alice", "why?"),
    ]
    assert first["comments"]["nodes"][0]["databaseId"] == bot_comment.id
    result = await gh.graphql(RESOLVE, endpoint=endpoint, id=first["id"])
    assert result["resolveReviewThread"]["thread"] == {"id": first["id"], "isResolved": True}
    assert bot_comment.thread.resolved
    assert fake.violations == []


async def test_graphql_bad_queries_are_violations(fake, session, app_key_pair):
    seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    endpoint = f"{fake.base_url}/graphql"
    with pytest.raises(gidgethub.GraphQLException):
        await gh.graphql('query { repository(owner: "octo-org", name: "trainer") { nope } }', endpoint=endpoint)
    with pytest.raises(gidgethub.GraphQLException):
        await gh.graphql(
            'query { repository(owner: "octo-org", name: "trainer") { pullRequest(number: 1) '
            "{ reviewThreads { nodes { id } } } } }",
            endpoint=endpoint,
        )
    with pytest.raises(gidgethub.GraphQLException):
        await gh.graphql(RESOLVE, endpoint=endpoint, id="PRRT_nope")
    assert [v.kind for v in fake.violations] == ["graphql", "graphql"]
    assert "MISSING_PAGINATION_BOUNDARIES" in json.dumps(fake.calls("graphql/post")[1].response)
    assert "NOT_FOUND" in json.dumps(fake.calls("graphql/post")[2].response)


BLOBS = """
query($owner: String!, $name: String!, $oid: GitObjectID!, $expr: String!, $missing: GitObjectID!) {
  repository(owner: $owner, name: $name) {
    byOid: object(oid: $oid) {
      __typename abbreviatedOid oid id commitUrl commitResourcePath repository { nameWithOwner }
      ... on Blob { byteSize isBinary isTruncated text }
    }
    byPath: object(expression: $expr) { ... on Blob { oid text } }
    missing: object(oid: $missing) { oid }
    commit: object(expression: "main") { oid }
  }
}"""


async def test_graphql_blobs(fake, session, app_key_pair):
    pull = seed_pull(fake)
    big, binary, latin = b"y" * 512_001 + "\u00e9".encode(), b"PK\x03\x04\x00\x00", "caf\u00e9\n".encode("latin-1")
    fake.push(pull, {**HEAD_FILES, "big.txt": big, "a.bin": binary, "latin.txt": latin})
    gh = await installation_api(fake, session, app_key_pair)
    endpoint = f"{fake.base_url}/graphql"

    async def blobs(oid: str, expr: str) -> Any:
        return (
            await gh.graphql(
                BLOBS, endpoint=endpoint, owner="octo-org", name="trainer", oid=oid, expr=expr, missing="0" * 40
            )
        )["repository"]

    new_py = git_sha("blob", b"print('hi')\n")
    got = await blobs(new_py, f"{pull.head_sha}:docker/Dockerfile")
    assert got["byOid"] == {
        "__typename": "Blob",
        "abbreviatedOid": new_py[:7],
        "oid": new_py,
        "id": got["byOid"]["id"],
        "commitUrl": f"https://github.com/{REPO}/commit/{new_py}",
        "commitResourcePath": f"/{REPO}/commit/{new_py}",
        "repository": {"nameWithOwner": REPO},
        "byteSize": 12,
        "isBinary": False,
        "isTruncated": False,
        "text": "print('hi')\n",
    }
    assert got["byPath"]["text"] == HEAD_FILES["docker/Dockerfile"]
    assert got["missing"] is None and got["commit"] is None  # only blobs are served
    assert (await blobs(new_py, ":docker/Dockerfile"))["byPath"]["text"] == BASE_FILES["docker/Dockerfile"]
    large = (await blobs(git_sha("blob", big), f"{pull.head_sha}:nope"))["byOid"]
    assert (large["byteSize"], large["isTruncated"], large["text"]) == (512_003, True, "y" * 512_000)
    assert (await blobs(new_py, f"{pull.head_sha}:nope"))["byPath"] is None
    for data, is_binary in ((binary, True), (latin, None)):  # None: the encoding cannot be told
        node = (await blobs(git_sha("blob", data), "main:README.md"))["byOid"]
        assert (node["isBinary"], node["text"], node["isTruncated"]) == (is_binary, None, False)
    assert fake.violations == []
    fake.installations[FAKE_INSTALLATION_ID].permissions = {"metadata": "read", "pull_requests": "write"}
    gh = await installation_api(fake, session, app_key_pair)
    with pytest.raises(gidgethub.GraphQLException, match="Resource not accessible by integration"):
        await blobs(new_py, "main:README.md")
    # one per object field of the query
    assert [v.message for v in fake.violations] == ["reading a git object needs contents: read"] * 4


# ---------------------------------------------------------------------------------- faults, rate limits


async def test_fault_injection(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    path = f"/repos/{REPO}/pulls/{pull.number}"
    fake.inject("pulls/get", Fault.server_error(502), times=2)
    fake.inject("pulls/get", Fault.secondary_rate_limit(retry_after=7))
    fake.inject("GET /repos/{owner}/{repo}/pulls/{pull_number}", Fault.too_many_requests(retry_after=3))
    for _ in range(2):
        with pytest.raises(gidgethub.GitHubBroken):
            await gh.getitem(path)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.getitem(path)
    assert info.value.status_code == 403 and "secondary rate limit" in str(info.value)
    with pytest.raises(gidgethub.BadRequest) as info:
        await gh.getitem(path)
    assert info.value.status_code == 429
    assert (await gh.getitem(path))["number"] == pull.number
    faulted = fake.calls("pulls/get")
    assert [(c.status, c.fault) for c in faulted] == [
        (502, "502"),
        (502, "502"),
        (403, "403"),
        (429, "429"),
        (200, None),
    ]
    assert [c.status for c in fake.calls("pulls/get")][:3] == [502, 502, 403]

    # a dropped connection; then one that is dropped after the work was done
    fake.inject("checks/create", Fault.dropped())
    fake.inject("checks/create", Fault.dropped(after=True))
    for _ in range(2):
        with pytest.raises(aiohttp.ClientError):
            await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha})
    assert len(fake.check_runs) == 1

    # a slow answer
    fake.inject("*", Fault.slow(0.2))
    started = time.monotonic()
    await gh.getitem(path)
    assert time.monotonic() - started >= 0.2
    assert fake.violations == []


async def test_retry_after_header_and_rate_limit_headers(fake, session, app_key_pair):
    seed_pull(fake)
    token = await app_token(fake, session, app_key_pair)
    headers = {"Authorization": f"token {token}", "User-Agent": "t"}
    fake.inject("pulls/get", Fault.secondary_rate_limit(retry_after=7))
    async with session.get(f"{fake.base_url}/repos/{REPO}/pulls/1", headers=headers) as resp:
        assert resp.status == 403 and resp.headers["Retry-After"] == "7"
    async with session.get(f"{fake.base_url}/repos/{REPO}/pulls/1", headers=headers) as resp:
        remaining = int(resp.headers["X-RateLimit-Remaining"])
        assert int(resp.headers["X-RateLimit-Limit"]) == 5000 and remaining < 5000
        assert int(resp.headers["X-RateLimit-Reset"]) > time.time()
    fake.set_rate_limit(0, reset_in=30)
    gh = GitHubAPI(session, "t", oauth_token=token, base_url=fake.base_url)
    with pytest.raises(gidgethub.RateLimitExceeded):
        await gh.getitem(f"/repos/{REPO}/pulls/1")
    assert fake.violations == []


# ------------------------------------------------------------------------------------------- webhooks


def test_signed_delivery_from_state(app_key_pair):
    fake = FakeGitHub(FAKE_APP_ID, app_key_pair.public_pem)
    fake.add_installation(FAKE_INSTALLATION_ID, account="octo-org")
    fake.base_url = "http://127.0.0.1:9"
    pull = seed_pull(fake, user="alice")
    before = pull.head_sha
    fake.push(pull, {**HEAD_FILES, "new.py": "print('bye')\n"})
    payload = fake.pull_request_payload(pull, "synchronize", before=before)
    assert payload["action"] == "synchronize" and payload["number"] == pull.number
    assert payload["before"] == before and payload["after"] == pull.head_sha == payload["pull_request"]["head"]["sha"]
    assert payload["installation"]["id"] == FAKE_INSTALLATION_ID
    assert payload["repository"]["full_name"] == REPO
    assert payload["pull_request"]["url"].startswith("http://127.0.0.1:9/repos/")
    delivery = fake.delivery("pull_request", payload, "s3cret")
    expected = "sha256=" + hmac.new(b"s3cret", delivery.body, hashlib.sha256).hexdigest()
    assert delivery.headers["X-Hub-Signature-256"] == expected == sign(delivery.body, "s3cret")
    assert delivery.headers["X-GitHub-Event"] == "pull_request"
    assert len(delivery.headers["X-GitHub-Delivery"]) == 36
    assert json.loads(delivery.body) == payload

    bot_comment = fake.add_issue_comment(
        pull, "/recheck", user="other-bot[bot]", user_type="Bot", author_association="NONE"
    )
    event = fake.issue_comment_payload(bot_comment)
    assert event["comment"]["body"] == "/recheck" and event["sender"]["type"] == "Bot"
    assert event["issue"]["pull_request"]["url"].endswith(f"/pulls/{pull.number}")


def test_adjust_raw_example():
    raw = load_example("issue_comment.created.on-pr.DERIVED")
    out = adjust(
        raw,
        repo="octo-org/trainer",
        number=5,
        comment_body="/recheck",
        author_association="COLLABORATOR",
        sender_login="dependabot[bot]",
        sender_type="Bot",
        installation_id=3,
        api_url="http://x",
    )
    assert out["repository"]["full_name"] == "octo-org/trainer"
    assert out["issue"]["number"] == 5 and out["comment"]["body"] == "/recheck"
    assert out["comment"]["author_association"] == "COLLABORATOR"
    assert out["sender"]["type"] == "Bot" and out["comment"]["user"]["login"] == "dependabot[bot]"
    assert out["issue"]["pull_request"]["url"] == "http://x/repos/octo-org/trainer/pulls/1"
    assert out["installation"]["id"] == 3
    assert raw["comment"]["body"] != "/recheck"  # the example itself is untouched


# ----------------------------------------------------------------------------------------- diff logic


def test_patch_generation_and_commentable_lines():
    old = "".join(f"line{i}\n" for i in range(1, 21))
    new = old.replace("line3\n", "three\n").replace("line17\n", "")
    patch, additions, deletions = make_patch(old, new)
    assert (additions, deletions) == (1, 2)
    assert patch.splitlines()[0] == "@@ -1,6 +1,6 @@"
    diff = FileDiff(patch)
    assert diff.locate("RIGHT", 3) is not None and diff.locate("RIGHT", 7) is None
    assert diff.locate("LEFT", 17) is not None and diff.locate("RIGHT", 10) is None
    assert make_patch("a", "a\n")[0] == "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a"


def test_explicit_files_override(app_key_pair):
    fake = FakeGitHub(FAKE_APP_ID, app_key_pair.public_pem)
    repo = fake.add_repo(REPO, files=BASE_FILES)
    pull = fake.add_pull(repo, head_files=HEAD_FILES, files=[PullFile("big.bin", "added", None)])
    assert [f.filename for f in pull.files] == ["big.bin"]


# ------------------------------------------------------------------------------------------ own process


async def test_fake_in_its_own_process(session, app_key_pair):
    seed = {
        "installations": [{"id": 55, "account": "octo-org"}],
        "repos": [{"full_name": REPO, "files": BASE_FILES}],
        "pulls": [{"repo": REPO, "number": 3, "head_files": HEAD_FILES}],
    }
    with FakeGitHubProcess(FAKE_APP_ID, app_key_pair.public_pem, seed) as proc:
        gh = GitHubAPI(session, "t", base_url=proc.url)
        token = await get_installation_access_token(
            gh, installation_id="55", app_id=str(FAKE_APP_ID), private_key=app_key_pair.private_pem
        )
        gh = GitHubAPI(session, "t", oauth_token=token["token"], base_url=proc.url)
        pull = await gh.getitem(f"/repos/{REPO}/pulls/3")
        assert pull["head"]["sha"] == proc.seeded["pulls"][f"{REPO}#3"]["head_sha"]
        proc.inject("checks/create", Fault.server_error(503))
        with pytest.raises(gidgethub.GitHubBroken):
            await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull["head"]["sha"]})
        await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull["head"]["sha"]})
        with pytest.raises(gidgethub.BadRequest):
            await gh.getitem(f"/repos/{REPO}/pulls/3/nothing")
        assert [v["kind"] for v in proc.violations()] == ["unknown-route"]
        assert len(proc.state()["check_runs"]) == 1
        payload = proc.payload("pull_request", repo=REPO, number=3)
        assert payload["pull_request"]["head"]["sha"] == pull["head"]["sha"]


async def test_push_outdates_threads_and_check_events(fake, session, app_key_pair):
    pull = seed_pull(fake)
    gh = await installation_api(fake, session, app_key_pair)
    await gh.post(
        f"/repos/{REPO}/pulls/{pull.number}/reviews",
        data={"event": "COMMENT", "body": "x", "comments": [comment("new.py", 1), comment("docker/Dockerfile", 3)]},
    )
    run = await gh.post(f"/repos/{REPO}/check-runs", data={"name": "npu-review", "head_sha": pull.head_sha})
    before = pull.head_sha
    # new.py keeps its line 1; the Dockerfile change is reverted, so that thread is outdated
    fake.push(pull, {**HEAD_FILES, "docker/Dockerfile": BASE_FILES["docker/Dockerfile"]})
    by_path = {t.path: t for t in fake.threads_of(pull)}
    assert by_path["new.py"].line == 1 and by_path["docker/Dockerfile"].line is None
    listed = await gh.getitem(f"/repos/{REPO}/pulls/{pull.number}/comments")
    assert [(c["path"], c["line"], c["original_line"]) for c in listed] == [
        ("new.py", 1, 1),
        ("docker/Dockerfile", None, 3),
    ]
    sync = fake.pull_request_payload(pull, "synchronize", before=before)
    assert (sync["before"], sync["after"]) == (before, pull.head_sha)
    rerun = fake.check_run_payload(fake.check_runs[run["id"]], "rerequested")
    assert rerun["check_run"]["head_sha"] == before and rerun["check_run"]["check_suite"]["head_sha"] == before
    action = fake.check_run_payload(fake.check_runs[run["id"]], "requested_action", identifier="fix")
    assert action["requested_action"] == {"identifier": "fix"}
    suite = fake.check_suite_payload(fake.repo(REPO), pull.head_sha)
    assert suite["check_suite"]["head_sha"] == pull.head_sha
    assert [p["number"] for p in suite["check_suite"]["pull_requests"]] == [pull.number]
    assert suite["installation"]["id"] == FAKE_INSTALLATION_ID
    assert fake.violations == []


async def test_delivery_posts_a_verifiable_signature(aiohttp_server, session, app_key_pair):
    received: list[tuple[str, str]] = []

    async def hook(request: web.Request) -> web.Response:
        body = await request.read()
        good = hmac.compare_digest(request.headers["X-Hub-Signature-256"], sign(body, "s3cret"))
        received.append((request.headers["X-GitHub-Event"], request.content_type))
        return web.Response(status=202 if good else 401)

    app = web.Application()
    app.router.add_post("/webhook", hook)
    server = await aiohttp_server(app)
    fake = FakeGitHub(FAKE_APP_ID, app_key_pair.public_pem)
    payload = adjust(load_example("pull_request.opened"), repo=REPO, number=9, head_sha="a" * 40)
    assert (await fake.delivery("pull_request", payload, "s3cret").post(session, str(server.make_url("/webhook"))))[
        0
    ] == 202
    assert (await fake.delivery("pull_request", payload, "wrong").post(session, str(server.make_url("/webhook"))))[
        0
    ] == 401
    assert received == [("pull_request", "application/json")] * 2
