"""End to end over HTTP: a signed real webhook payload → the App as a real server process → the fake GitHub."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from npu_review.bot.github import BadRequest, GitHubApp, Limits
from npu_review.bot.reporters import parse_marker
from npu_review.bot.settings import Secret, Settings
from tests.app_harness import (
    AS_DEPLOYED,
    AppProcess,
    descendants,
    settle,
    start_app,
    wait_completed,
    wait_until,
    worker_pid,
)
from tests.conftest import FAKE_APP_ID, FAKE_INSTALLATION_ID, FAKE_WEBHOOK_SECRET
from tests.fakegithub import FakeGitHub, Fault, KeyPair
from tests.fakegithub.state import CheckRun, Pull, git_sha

DOCKERFILE = "docker/ascend/Dockerfile.ascend_9.1.0_a2"
BASE_DOCKERFILE = (
    "FROM quay.io/ascend/cann:9.1.0-910b-ubuntu22.04-py3.12\n"
    "ARG MAX_JOBS=8\n"
    "RUN pip install --no-cache-dir torch==2.10.0\n"
)
HEAD_DOCKERFILE = BASE_DOCKERFILE + (
    "RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n"  # 4: NPU301
    "RUN git clone https://example.com/x.git \\\n"  # 5: NPU306
    "    pip install -e x\n"
    "ENV MAX_JOBS=1\n"  # 7: NPU302
)
BASE = {DOCKERFILE: BASE_DOCKERFILE, "README.md": "# verl\n"}
HEAD = {**BASE, DOCKERFILE: HEAD_DOCKERFILE}

# The App reads file contents as GraphQL blobs, several aliased `object(oid:)` fields a query.
BLOB_QUERY_START = "query($owner: String!, $repo: String!) {\n  repository(owner: $owner, name: $repo) {\n"
BLOB_QUERY_FIELD = '    b{i}: object(oid: "{oid}") {{ ... on Blob {{ text isBinary isTruncated byteSize }} }}\n'
BLOB_QUERY_END = "  }\n}\n"


def blob_query(*texts: str | bytes) -> str:
    oids = [git_sha("blob", t.encode() if isinstance(t, str) else t) for t in texts]
    return BLOB_QUERY_START + "".join(BLOB_QUERY_FIELD.format(i=i, oid=o) for i, o in enumerate(oids)) + BLOB_QUERY_END


def blob_queries(fake: FakeGitHub) -> list[str]:
    """The queries of the blob batches the App sent (head and base go at once: sorted)."""
    return sorted(c.body["query"] for c in fake.calls("graphql/post") if "object(oid:" in c.body["query"])


EXPECTED_ANNOTATIONS = [
    (4, "warning", "NPU301 tls-verification-disabled"),
    (5, "failure", "NPU306 missing-and-in-continued-run"),
    (7, "warning", "NPU302 global-build-parallelism-env"),
]


@pytest.fixture
async def app(fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path) -> AsyncIterator[AppProcess]:
    proc = await start_app(fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path)
    yield proc
    await proc.session.close()
    await proc.stop()


@pytest.fixture
async def deployed(fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path) -> AsyncIterator[AppProcess]:
    """The App as `npu-review serve` runs by default: the reviews in its worker process."""
    proc = await start_app(
        fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, AS_DEPLOYED
    )
    yield proc
    await proc.session.close()
    await proc.stop()


def bot_comments(fake: FakeGitHub) -> list:  # type: ignore[type-arg]
    return [c for c in fake.review_comments.values() if c.user.type == "Bot"]


async def open_pull(fake: FakeGitHub, app: AppProcess, **kw: object):  # type: ignore[no-untyped-def]
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pull = fake.add_pull(repo, head_files=HEAD, title="[ci] docker: add a package", **kw)  # type: ignore[arg-type]
    delivery = fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    status, _ = await app.post(delivery)
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    return pull, run, delivery


async def test_pr_opened_gives_a_check_run_and_one_review(fake_github: FakeGitHub, deployed: AppProcess) -> None:
    fake = fake_github
    app = deployed
    pull, run, _ = await open_pull(fake, app)

    assert run.conclusion == "failure"
    assert run.output["title"] == "npu-review: 1 error, 2 warnings"
    assert "Checked 1 file: **1** error, **2** warnings, **0** notices." in run.output["summary"]
    assert [(a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == EXPECTED_ANNOTATIONS
    assert all(a["path"] == DOCKERFILE for a in run.annotations)
    assert run.actions == [
        {"label": "Re-run", "description": "Run npu-review again on this commit", "identifier": "rerun"}
    ]
    # A quick review creates its check run already completed: output and annotations in that one call.
    assert [(kind, body.get("status")) for kind, body in run.history] == [("create", "completed")]
    (create,) = fake.calls("checks/create")
    assert (create.body["name"], create.body["head_sha"], create.body["conclusion"]) == (
        "npu-review",
        pull.head_sha,
        "failure",
    )
    assert [a["start_line"] for a in create.body["output"]["annotations"]] == [4, 5, 7]
    assert fake.calls("checks/update") == []

    (review_call,) = fake.calls("pulls/create-review")
    body = review_call.body
    assert body["commit_id"] == pull.head_sha and body["event"] == "COMMENT"
    assert body["body"] == "npu-review found 3 new issues in this change."
    assert [(c["path"], c["line"], c["side"]) for c in body["comments"]] == [
        (DOCKERFILE, 4, "RIGHT"),
        (DOCKERFILE, 5, "RIGHT"),
        (DOCKERFILE, 7, "RIGHT"),
    ]
    assert (
        "```suggestion\nRUN wget https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n```" in body["comments"][0]["body"]
    )
    assert "```suggestion\nRUN git clone https://example.com/x.git && \\\n```" in body["comments"][1]["body"]
    assert "```suggestion\nARG MAX_JOBS=1\n```" in body["comments"][2]["body"]
    assert all(parse_marker(c["body"]) for c in body["comments"])
    assert len(bot_comments(fake)) == 3
    # Contents: one GraphQL query for the head (the changed Dockerfile first, then README.md, context of the
    # rules) and one for the base (the Dockerfile's old version); no REST blob call. The fake validates every
    # query against GitHub's schema (a violation otherwise).
    variables = {"owner": "octo-org", "repo": "verl"}
    assert [c.body for c in fake.calls("graphql/post")] in (
        [
            {"query": blob_query(HEAD_DOCKERFILE, "# verl\n"), "variables": variables},
            {"query": blob_query(BASE_DOCKERFILE), "variables": variables},
        ],
        [
            {"query": blob_query(BASE_DOCKERFILE), "variables": variables},
            {"query": blob_query(HEAD_DOCKERFILE, "# verl\n"), "variables": variables},
        ],
    )
    assert fake.calls("git/get-blob") == []
    assert fake.violations == []
    # Nothing secret reaches the logs: not the webhook secret, the private key, nor any installation token.
    log = app.log()
    assert "review done: failure, 3 findings, 3 comments posted" in log
    assert FAKE_WEBHOOK_SECRET not in log and "PRIVATE KEY" not in log
    assert fake.tokens and not any(token in log for token in fake.tokens)
    # The review ran in the worker process; the server's status page and metrics count it, and the GitHub calls.
    async with app.session.get(app.url + "/status.json") as r:
        status = await r.json()
    assert status["reviews"] == {"total": 1, "failure": 1} and status["queue_depth"] == 0
    assert status["rate_limit"] is not None and status["last_review_at"] is not None
    async with app.session.get(app.url + "/metrics") as r:
        metrics = (await r.text()).splitlines()
    assert 'npu_review_runs_total{conclusion="failure"} 1' in metrics
    assert 'npu_review_deliveries_total{event="pull_request",outcome="accepted"} 1' in metrics
    assert 'npu_review_github_requests_total{method="POST",status="201"} 2' in metrics  # its token, its check run


async def test_same_delivery_again_does_nothing(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    _, _, delivery = await open_pull(fake, app)
    before = len(fake.requests)
    status, text = await app.post(delivery)
    assert status == 200 and "duplicate" in text
    await asyncio.sleep(0.3)
    await settle(app)
    assert len(fake.requests) == before
    assert fake.violations == []


async def test_recheck_by_a_collaborator(fake_github: FakeGitHub, deployed: AppProcess) -> None:
    fake = fake_github
    app = deployed
    pull, _, _ = await open_pull(fake, app)
    fake.set_role(pull.repo, "maintainer", "write")
    comment = fake.add_issue_comment(
        pull, "Looks odd.\n/recheck\n", user="maintainer", author_association="COLLABORATOR"
    )
    status, _ = await app.post(fake.delivery("issue_comment", fake.issue_comment_payload(comment), FAKE_WEBHOOK_SECRET))
    assert status == 202
    run = await wait_completed(fake, pull, count=2)
    await settle(app)
    assert [(r.comment.id, r.content) for r in fake.reactions] == [(comment.id, "+1")]
    assert run.conclusion == "failure" and len(run.annotations) == 3
    runs = fake.check_runs_for(pull.repo, pull.head_sha)
    # A new check run (GitHub appends annotations to an updated run); every one of them is completed.
    assert len(runs) == 2 and all(r.status == "completed" and len(r.annotations) == 3 for r in runs)
    assert len(fake.calls("pulls/create-review")) == 1  # nothing new to say: no second review
    assert len(bot_comments(fake)) == 3
    assert fake.violations == []


IGNORED_RECHECKS = [
    ("/recheck", "stranger", "NONE", "User"),
    ("/recheck", "ci-bot[bot]", "MEMBER", "Bot"),
    ("please /recheck this", "maintainer", "MEMBER", "User"),
    ("```\n/recheck\n```", "maintainer", "MEMBER", "User"),
    ("Like this:\n\n    /recheck\n", "maintainer", "MEMBER", "User"),  # an indented code block
    ("````\n```\n/recheck\n```\n````", "maintainer", "MEMBER", "User"),  # a fence inside a longer one
    ("- try\n\n  ```\n  /recheck\n  ```\n", "maintainer", "MEMBER", "User"),  # a fence in a list item
]


async def test_recheck_ignored(fake_github: FakeGitHub, app: AppProcess) -> None:
    """Each comment on the same reviewed PR, one after the other: none runs a review or gets a reaction (a
    delivery is answered once its job is queued, so a job it queued would be seen by settle)."""
    fake = fake_github
    pull, _, _ = await open_pull(fake, app)
    before = len(fake.requests)
    for body, user, association, user_type in IGNORED_RECHECKS:
        comment = fake.add_issue_comment(pull, body, user=user, author_association=association, user_type=user_type)
        delivery = fake.delivery("issue_comment", fake.issue_comment_payload(comment), FAKE_WEBHOOK_SECRET)
        status, _ = await app.post(delivery)
        assert status == 202
        await settle(app)
        assert (len(fake.requests), fake.reactions) == (before, []), (body, user)  # no run, no reaction
    await asyncio.sleep(0.3)
    await settle(app)
    assert len(fake.requests) == before
    assert fake.reactions == []


async def test_recheck_by_the_pr_author(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    pull, _, _ = await open_pull(fake, app)
    comment = fake.add_issue_comment(pull, "/recheck", user=pull.user.login, author_association="CONTRIBUTOR")
    status, _ = await app.post(fake.delivery("issue_comment", fake.issue_comment_payload(comment), FAKE_WEBHOOK_SECRET))
    assert status == 202
    await wait_completed(fake, pull, count=2)
    await settle(app)
    assert [r.content for r in fake.reactions] == ["+1"]


async def test_bad_signatures_are_refused_before_any_github_call(fake_github: FakeGitHub, app: AppProcess) -> None:
    import hashlib
    import hmac

    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    pull = fake.add_pull(repo, head_files=HEAD)
    payload = fake.pull_request_payload(pull, "opened")
    # Signed with another secret; unsigned; signed with SHA-1 only (X-Hub-Signature).
    status, _ = await app.post(fake.delivery("pull_request", payload, "not-the-secret"))
    assert status == 401
    status, _ = await app.post(fake.delivery("pull_request", payload, None))
    assert status == 401
    delivery = fake.delivery("pull_request", payload, None)
    delivery.signature = None
    sha1 = "sha1=" + hmac.new(FAKE_WEBHOOK_SECRET.encode(), delivery.body, hashlib.sha1).hexdigest()
    headers = {**delivery.headers, "X-Hub-Signature": sha1}
    async with app.session.post(app.url + "/webhook", data=delivery.body, headers=headers) as r:
        assert r.status == 401
    await asyncio.sleep(0.2)
    assert fake.requests == []


async def test_push_that_fixes_findings_cleans_up_old_comments(fake_github: FakeGitHub, deployed: AppProcess) -> None:
    fake = fake_github
    app = deployed
    pull, _, _ = await open_pull(fake, app)
    by_line = {c.line: c for c in bot_comments(fake)}
    # Someone answers the TLS finding: its thread must be resolved, not deleted.
    fake.add_review_comment(pull, "We need this mirror, fixing.", in_reply_to=by_line[4])
    fixed = HEAD_DOCKERFILE.replace("--no-check-certificate ", "").replace(
        "RUN git clone https://example.com/x.git \\\n", "RUN git clone https://example.com/x.git && \\\n"
    )
    old_head = pull.head_sha
    fake.push(pull, {**HEAD, DOCKERFILE: fixed})
    payload = fake.pull_request_payload(pull, "synchronize", before=old_head)
    status, _ = await app.post(fake.delivery("pull_request", payload, FAKE_WEBHOOK_SECRET))
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    assert run.conclusion == "neutral"
    assert [(a["start_line"], a["title"]) for a in run.annotations] == [(7, "NPU302 global-build-parallelism-env")]
    remaining = bot_comments(fake)
    ids = {c.id for c in remaining}
    assert by_line[5].id not in ids  # nobody replied: deleted
    assert by_line[4].id in ids and by_line[4].thread.resolved  # replied: resolved
    assert by_line[7].id in ids and not by_line[7].thread.resolved
    # The surviving finding was not posted again.
    assert [parse_marker(c.body) for c in remaining].count(parse_marker(by_line[7].body)) == 1
    assert len(fake.calls("pulls/create-review")) == 1
    assert fake.violations == []


async def test_fork_pr_uses_the_base_installation(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    fork = fake.add_repo("contributor/verl", files=BASE, installed=False)
    pull = fake.add_pull(repo, head_files=HEAD, head_repo=fork)
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    assert run.conclusion == "failure" and len(run.annotations) == 3
    assert len(bot_comments(fake)) == 3
    assert fake.violations == []


async def test_huge_pr_with_a_binary_file(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    head: dict[str, str | bytes] = {**HEAD, "docker/ascend/blob.bin": b"\x00\x01\x02" * 1000}
    head.update({f"data/part{i:04d}.txt": f"row {i}\n" for i in range(3000)})
    pull = fake.add_pull(repo, head_files=head)
    pull.diff_too_large = True  # GitHub answers 406 for the diff media type: the App pages the files list
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    run = await wait_completed(fake, pull, timeout=60)
    await settle(app)
    assert run.conclusion == "failure"
    assert [(a["start_line"], a["title"]) for a in run.annotations] == [(ln, t) for ln, _, t in EXPECTED_ANNOTATIONS]
    # GitHub lists 3,000 of the 3,002 files (in 30 pages read in parallel); the Dockerfile, past the cut,
    # is found by comparing the trees and still reviewed.
    assert len(fake.calls("pulls/list-files")) == 30
    assert "GitHub lists only 3000 files of a PR; 2 more were found" in run.output["summary"]
    assert fake.violations == []


async def test_rerun_button_re_completes_the_check_run(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    pull, run, _ = await open_pull(fake, app)
    payload = fake.check_run_payload(run, "requested_action", identifier="rerun")
    status, _ = await app.post(fake.delivery("check_run", payload, FAKE_WEBHOOK_SECRET))
    assert status == 202
    newest = await wait_completed(fake, pull, count=2)
    await settle(app)
    assert newest.id != run.id and newest.conclusion == "failure" and len(newest.annotations) == 3
    assert fake.violations == []


BROKEN_CONFIGS: list[tuple[str | bytes, str]] = [
    ("rules:\n  NPU999: off\n", "rules: unknown rule id 'NPU999' (see `npu-review rules`)"),
    # The facts are validated with the config: a typo in a section name, a string where a list belongs.
    ("knowledge:\n  laucnh: {}\n", "knowledge: unknown key 'laucnh' (did you mean 'launch'?)"),
    (
        "knowledge:\n  launch:\n    cudagraph_mode_keys: actor_rollout_ref.rollout.mode\n",
        "knowledge.launch.cudagraph_mode_keys: expected a list of strings, got the string "
        "'actor_rollout_ref.rollout.mode'",
    ),
    # Not read as "no config" (which would review with every default).
    (b"rules:\x00\n", "a binary file (it holds NUL bytes), not YAML"),
]


async def test_broken_base_config_ends_neutral_with_the_reason(fake_github: FakeGitHub, app: AppProcess) -> None:
    """One repository per broken config, each PR's head fixing it (the base's is the one read)."""
    fake = fake_github
    pulls = []
    for i, (config, _) in enumerate(BROKEN_CONFIGS):
        repo = fake.add_repo(f"octo-org/verl{i}", files={**BASE, ".github/npu-review.yml": config})
        pull = fake.add_pull(repo, head_files={**HEAD, ".github/npu-review.yml": "rules: {}\n"})
        status, _ = await app.post(
            fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
        )
        assert status == 202
        pulls.append(pull)
    for pull, (_, reason) in zip(pulls, BROKEN_CONFIGS, strict=True):
        run = await wait_completed(fake, pull)
        assert run.conclusion == "neutral"
        assert run.output["summary"] == (
            "The review did not finish: the repo config is invalid: .github/npu-review.yml on the base branch: "
            f"{reason}\n\nUse **Re-run** to try again."
        )
    await settle(app)
    assert fake.calls("pulls/create-review") == []
    assert fake.violations == []


# ------------------------------------------------------------------------------ contents through GraphQL


async def _review_with_expected_annotations(fake: FakeGitHub, app: AppProcess, pull: Pull) -> CheckRun:
    """Open the PR, wait for its completed check run, and check it carries the Dockerfile's findings."""
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    assert [(a["start_line"], a["title"]) for a in run.annotations] == [(ln, t) for ln, _, t in EXPECTED_ANNOTATIONS]
    return run


async def test_contents_are_read_in_graphql_queries_of_100_blobs(fake_github: FakeGitHub, app: AppProcess) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    scripts = {f"scripts/step{i:03d}.sh": f"#!/bin/bash\necho step {i}\n" for i in range(250)}
    await _review_with_expected_annotations(fake, app, fake.add_pull(repo, head_files={**HEAD, **scripts}))
    # 252 blobs at head (the changed files in path order, then README.md): ceil(252 / 100) = 3 queries of
    # 100, 100 and 52; 1 at base; no REST blob call.
    head = [HEAD_DOCKERFILE, *scripts.values(), "# verl\n"]
    assert blob_queries(fake) == sorted(
        [blob_query(*head[:100]), blob_query(*head[100:200]), blob_query(*head[200:]), blob_query(BASE_DOCKERFILE)]
    )
    assert fake.calls("git/get-blob") == []
    assert fake.violations == []


async def test_large_undecidable_and_binary_blobs_are_read_through_rest(
    fake_github: FakeGitHub, app: AppProcess
) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    big = "# padding\n" * 60_000  # 600,000 bytes: GitHub's GraphQL cuts Blob.text at 512,000
    latin = "# caf\xe9\necho ok\n".encode("latin-1")  # not UTF-8: the fake cannot tell its encoding
    binary = b"\x7fELF\x02\x01\x01\x00" * 8
    extra: dict[str, str | bytes] = {"scripts/big.sh": big, "scripts/latin.sh": latin, "scripts/tool.sh": binary}
    run = await _review_with_expected_annotations(fake, app, fake.add_pull(repo, head_files={**HEAD, **extra}))
    # The 600,000-byte script is larger than GraphQL gives whole (its tree entry says so): not in the query.
    head_query = blob_query(HEAD_DOCKERFILE, latin, binary, "# verl\n")
    assert blob_queries(fake) == sorted([head_query, blob_query(BASE_DOCKERFILE)])
    (answer,) = [c.response for c in fake.calls("graphql/post") if c.body["query"] == head_query]
    nodes = answer["data"]["repository"]
    assert (nodes["b1"]["isBinary"], nodes["b1"]["text"]) == (None, None)
    assert (nodes["b2"]["isBinary"], nodes["b2"]["text"], nodes["b2"]["isTruncated"]) == (True, None, False)
    # The large, the undecidable and the binary blob are read through REST (binary or not is decode_blob's
    # call, as before); the binary one is then not reviewed.
    rest = sorted(c.path.rsplit("/", 1)[1] for c in fake.calls("git/get-blob"))
    assert rest == sorted(git_sha("blob", b) for b in (big.encode(), latin, binary))
    assert "Checked 3 files" in run.output["summary"]
    assert fake.violations == []


async def test_get_blobs_caches_and_is_not_paced_like_a_mutation(
    fake_github: FakeGitHub, app_key_pair: KeyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = fake_github
    text, binary, big = b"echo a\n", b"\x00\x01", b"x" * 600_000
    fake.add_repo("octo-org/verl", files={"a.sh": text, "b.bin": binary, "big.txt": big})
    paced: list[str] = []

    async def pace_mutation(self: Limits, sleep: object) -> None:
        paced.append("paced")

    monkeypatch.setattr(Limits, "pace_mutation", pace_mutation)
    settings = Settings(
        str(FAKE_APP_ID), Secret(app_key_pair.private_pem), Secret(FAKE_WEBHOOK_SECRET), api_url=fake.base_url
    )
    sha = {data: git_sha("blob", data) for data in (text, binary, big)}
    async with aiohttp.ClientSession() as session:
        client = GitHubApp(settings, session).repo(FAKE_INSTALLATION_ID, "octo-org", "verl")
        await client.app.tokens.get(FAKE_INSTALLATION_ID)  # creating the token is a POST that is paced
        paced.clear()
        got = await client.get_blobs([sha[text], sha[binary], sha[big], sha[text]])
        assert got == {sha[text]: text, sha[binary]: binary, sha[big]: big}
        assert [c.body["query"] for c in fake.calls("graphql/post")] == [blob_query(text, binary, big)]
        assert sorted(c.path.rsplit("/", 1)[1] for c in fake.calls("git/get-blob")) == sorted([sha[big], sha[binary]])
        assert paced == []  # a GraphQL query is a POST that changes nothing
        # Every blob comes from the cache now.
        assert await client.get_blobs([sha[big], sha[binary], sha[text]]) == got
        assert len(fake.calls("graphql/post")) == 1
        assert len(fake.calls("git/get-blob")) == 2
        assert await client.get_blobs([]) == {}
        # An object GraphQL does not know is asked of REST, which says 404 as before.
        with pytest.raises(BadRequest) as info:
            await client.get_blobs(["0" * 40])
        assert info.value.status_code == 404
        assert (len(fake.calls("graphql/post")), len(fake.calls("git/get-blob"))) == (2, 3)
    assert fake.violations == []


async def test_blob_queries_are_cut_by_size_and_blobs_graphql_would_cut_go_to_rest(
    fake_github: FakeGitHub, app_key_pair: KeyPair, monkeypatch: pytest.MonkeyPatch
) -> None:
    import npu_review.bot.github

    fake = fake_github
    a, b, c, big = b"echo aaaa\n", b"echo bbbb\n", b"echo cccc\n", b"echo " + b"x" * 30 + b"\n"
    fake.add_repo("octo-org/verl", files={"a.sh": a, "b.sh": b, "c.sh": c, "big.sh": big})
    # Scaled down: 20 bytes of blobs a query (two 10-byte scripts), whole text up to 25 bytes.
    monkeypatch.setattr(npu_review.bot.github, "BLOB_QUERY_BYTES", 20)
    monkeypatch.setattr(npu_review.bot.github, "GRAPHQL_TEXT_LIMIT", 25)
    settings = Settings(
        str(FAKE_APP_ID), Secret(app_key_pair.private_pem), Secret(FAKE_WEBHOOK_SECRET), api_url=fake.base_url
    )
    sha = {data: git_sha("blob", data) for data in (a, b, c, big)}
    async with aiohttp.ClientSession() as session:
        client = GitHubApp(settings, session).repo(FAKE_INSTALLATION_ID, "octo-org", "verl")
        got = await client.get_blobs(list(sha.values()), {sha[data]: len(data) for data in sha})
    assert got == {sha[data]: data for data in (a, b, c, big)}
    assert blob_queries(fake) == sorted([blob_query(a, b), blob_query(c)])
    assert [call.path.rsplit("/", 1)[1] for call in fake.calls("git/get-blob")] == [sha[big]]
    assert fake.violations == []


async def test_blobs_a_query_answered_with_errors_did_not_give_are_read_through_rest(
    fake_github: FakeGitHub, app_key_pair: KeyPair
) -> None:
    fake = fake_github
    one, two = b"echo 1\n", b"echo 2\n"
    fake.add_repo("octo-org/verl", files={"1.sh": one, "2.sh": two})
    # GitHub answers 200 with what it could resolve beside `errors` (a timeout on one field, say).
    partial = {
        "data": {"repository": {"b0": {"text": "echo 1\n", "isBinary": False, "isTruncated": False, "byteSize": 7}}},
        "errors": [{"type": "SERVICE_UNAVAILABLE", "path": ["repository", "b1"], "message": "timed out"}],
    }
    fake.inject("graphql/post", Fault(status=200, body=partial))
    settings = Settings(
        str(FAKE_APP_ID), Secret(app_key_pair.private_pem), Secret(FAKE_WEBHOOK_SECRET), api_url=fake.base_url
    )
    async with aiohttp.ClientSession() as session:
        client = GitHubApp(settings, session).repo(FAKE_INSTALLATION_ID, "octo-org", "verl")
        got = await client.get_blobs([git_sha("blob", one), git_sha("blob", two)])
    assert got == {git_sha("blob", one): one, git_sha("blob", two): two}
    assert len(fake.calls("graphql/post")) == 1
    assert [c.path.rsplit("/", 1)[1] for c in fake.calls("git/get-blob")] == [git_sha("blob", two)]
    assert fake.violations == []


NOTICE_HEAD = BASE_DOCKERFILE + (
    "RUN wget --no-check-certificate https://example.com/pkg.tar.gz -O /tmp/pkg.tar.gz\n"  # 4: NPU301 warning
    "RUN pip install a \\\n"
    "\n"  # 6: NPU304 notice (blank continuation line)
    "    b\n"
)


async def test_notices_go_to_the_check_run_only_unless_the_config_asks(
    fake_github: FakeGitHub, app: AppProcess
) -> None:
    """Two repositories, the second's config asking for notices inline."""
    fake = fake_github
    for inline_notices in (False, True):
        base = dict(BASE)
        if inline_notices:
            base[".github/npu-review.yml"] = "review:\n  inline_notices: true\n"
        repo = fake.add_repo(f"octo-org/verl-{inline_notices}".lower(), files=base)
        pull = fake.add_pull(repo, head_files={**base, DOCKERFILE: NOTICE_HEAD}, title="[ci] docker: add packages")
        delivery = fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
        status, _ = await app.post(delivery)
        assert status == 202
        run = await wait_completed(fake, pull)
        await settle(app)
        # The check run carries both, notice included, whatever the config says.
        assert [(a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == [
            (4, "warning", "NPU301 tls-verification-disabled"),
            (6, "notice", "NPU304 empty-continuation-line"),
        ]
        assert run.conclusion == "neutral"
        (review_call,) = [c for c in fake.calls("pulls/create-review") if f"/{repo.full_name}/" in c.path]
        lines = [c["line"] for c in review_call.body["comments"]]
        assert lines == ([4, 6] if inline_notices else [4])
        assert review_call.body["body"] == (
            "npu-review found 2 new issues in this change."
            if inline_notices
            else "npu-review found 1 new issue in this change."
        )


async def test_a_quick_review_with_60_findings_creates_50_annotations_and_adds_10(
    fake_github: FakeGitHub, app: AppProcess
) -> None:
    fake = fake_github
    repo = fake.add_repo("octo-org/verl", files=BASE)
    lines = [f"RUN wget --no-check-certificate https://example.com/p{i}.tgz -O /tmp/p{i}.tgz\n" for i in range(60)]
    pull = fake.add_pull(repo, head_files={**BASE, DOCKERFILE: BASE_DOCKERFILE + "".join(lines)})
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    (create,) = fake.calls("checks/create")
    (update,) = fake.calls("checks/update")
    # GitHub takes 50 annotations a request: the creation (already completed) carries the first 50 with the
    # output, one update the other 10 (GitHub appends them).
    assert create.body["status"] == "completed" and create.body["conclusion"] == "neutral"
    assert [a["start_line"] for a in create.body["output"]["annotations"]] == list(range(4, 54))
    assert "status" not in update.body and update.body["output"]["title"] == create.body["output"]["title"]
    assert [a["start_line"] for a in update.body["output"]["annotations"]] == list(range(54, 64))
    assert [a["start_line"] for a in run.annotations] == list(range(4, 64))
    assert fake.violations == []


async def test_the_rules_run_in_a_process_pool_off_the_receivers_loop(
    fake_github: FakeGitHub, app_key_pair: KeyPair, tmp_path: Path
) -> None:
    """As deployed (NPU_REVIEW_PROCESSES unset: one process per core): the review runs in the server's worker
    process and its rules in that worker's child processes, with the same findings; and a server killed outright
    leaves none of them behind."""
    import signal

    env = {**AS_DEPLOYED, "NPU_REVIEW_PROCESSES": ""}
    app = await start_app(fake_github, app_key_pair.private_pem, FAKE_APP_ID, FAKE_WEBHOOK_SECRET, tmp_path, env)
    try:
        _, run, _ = await open_pull(fake_github, app)
        assert run.conclusion == "failure"
        assert [(a["start_line"], a["annotation_level"], a["title"]) for a in run.annotations] == EXPECTED_ANNOTATIONS
        assert len(bot_comments(fake_github)) == 3 and fake_github.violations == []
        pool = descendants(app.proc.pid)
        # The worker process, its forkserver, its pool processes, the resource tracker.
        assert worker_pid(app) in pool and len(pool) >= 4
    finally:
        await app.session.close()
        await app.stop(signal.SIGKILL)
    await wait_until(lambda: not any(Path(f"/proc/{p}").exists() for p in pool), 15, "the pool to end with the server")


# ------------------------------------------------------------------------------ one comment per cause, the budget

CAUSES_HEAD_DOCKERFILE = BASE_DOCKERFILE + (
    "RUN cd /tmp && \\\n"  # 4
    "    wget --no-check-certificate https://example.com/Ascend-cann-toolkit.run && \\\n"  # 5: NPU301, one cause
    "    wget --no-check-certificate https://example.com/Ascend-cann-kernels.run && \\\n"  # 6: the same
    "    wget --no-check-certificate https://example.com/Ascend-cann-nnal.run\n"  # 7: the same
    "RUN git clone https://example.com/x.git \\\n"  # 8: NPU306 (error)
    "    pip install -e x\n"
    "ENV MAX_JOBS=1\n"  # 10: NPU302
)
NPU301_MESSAGE = (
    "`wget --no-check-certificate` downloads without checking the server's certificate: anyone on the path can "
    "swap the file."
)


def _comment(rule: str, name: str, severity: str, message: str, suggestion: str, fp: str, also: str = "") -> str:
    icon = {"error": "🛑", "warning": "⚠️"}[severity]
    parts = [f"{icon} **{rule}** `{name}` ({severity})", "", message]
    if also:
        parts += ["", also]
    parts += ["", "```suggestion", suggestion, "```", ""]
    parts += [f"<sub>Run `npu-review rules {rule}` for details; `/recheck` re-runs the review.</sub>"]
    return "\n".join(parts) + f"\n<!-- npu-review:fp={fp} -->"


async def test_one_inline_comment_per_cause_within_the_prs_budget(fake_github: FakeGitHub, app: AppProcess) -> None:
    """Three wgets of one RUN are one cause: one comment on the first, naming the others; the base's config allows
    two inline comments a PR, so the error and the first warning get them and the last warning goes to the review
    body. A push that fixes the first wget moves the cause's comment to the next one, within the same budget (the
    error's comment still stands), and the check run keeps every finding."""
    fake = fake_github
    base = {**BASE, ".github/npu-review.yml": "review:\n  max_inline_comments: 2\n"}
    repo = fake.add_repo("octo-org/verl", files=base)
    pull = fake.add_pull(repo, head_files={**base, DOCKERFILE: CAUSES_HEAD_DOCKERFILE})
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    assert [(a["start_line"], a["title"]) for a in run.annotations] == [
        (5, "NPU301 tls-verification-disabled"),
        (6, "NPU301 tls-verification-disabled"),
        (7, "NPU301 tls-verification-disabled"),
        (8, "NPU306 missing-and-in-continued-run"),
        (10, "NPU302 global-build-parallelism-env"),
    ]
    fps = _fingerprints(CAUSES_HEAD_DOCKERFILE, run)
    (review_call,) = fake.calls("pulls/create-review")
    npu302 = next(a for a in run.annotations if a["start_line"] == 10)
    npu306 = next(a for a in run.annotations if a["start_line"] == 8)
    assert review_call.body == {
        "commit_id": pull.head_sha,
        "event": "COMMENT",
        "body": "npu-review found 5 new issues in this change.\n\n"
        "Not shown inline (see the `npu-review` check run for all of them):\n"
        f"- `{DOCKERFILE}:10` **NPU302** (warning): {npu302['message'][:199]}…",  # cut at 200 characters
        "comments": [
            {
                "path": DOCKERFILE,
                "line": 5,
                "side": "RIGHT",
                "body": _comment(
                    "NPU301",
                    "tls-verification-disabled",
                    "warning",
                    NPU301_MESSAGE,
                    "    wget https://example.com/Ascend-cann-toolkit.run && \\",
                    fps[5],
                    f"The same in 2 other places: `{DOCKERFILE}:6`, `{DOCKERFILE}:7`.",
                ),
            },
            {
                "path": DOCKERFILE,
                "line": 8,
                "side": "RIGHT",
                "body": _comment(
                    "NPU306",
                    "missing-and-in-continued-run",
                    "error",
                    npu306["message"],
                    "RUN git clone https://example.com/x.git && \\",
                    fps[8],
                ),
            },
        ],
    }
    first = {c.line: c for c in bot_comments(fake)}
    assert sorted(first) == [5, 8]

    old_head = pull.head_sha
    fixed = CAUSES_HEAD_DOCKERFILE.replace(
        "wget --no-check-certificate https://example.com/Ascend-cann-toolkit",
        "wget https://example.com/Ascend-cann-toolkit",
    )
    fake.push(pull, {**base, DOCKERFILE: fixed})
    payload = fake.pull_request_payload(pull, "synchronize", before=old_head)
    status, _ = await app.post(fake.delivery("pull_request", payload, FAKE_WEBHOOK_SECRET))
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    assert [a["start_line"] for a in run.annotations] == [6, 7, 8, 10]
    fps = _fingerprints(fixed, run)
    second = fake.calls("pulls/create-review")[1]
    assert second.body == {
        "commit_id": pull.head_sha,
        "event": "COMMENT",
        "body": "npu-review found 3 new issues in this change.\n\n"
        "Not shown inline (see the `npu-review` check run for all of them):\n"
        f"- `{DOCKERFILE}:10` **NPU302** (warning): {npu302['message'][:199]}…",  # cut at 200 characters
        "comments": [
            {
                "path": DOCKERFILE,
                "line": 6,
                "side": "RIGHT",
                "body": _comment(
                    "NPU301",
                    "tls-verification-disabled",
                    "warning",
                    NPU301_MESSAGE,
                    "    wget https://example.com/Ascend-cann-kernels.run && \\",
                    fps[6],
                    f"The same in 1 other place: `{DOCKERFILE}:7`.",
                ),
            }
        ],
    }
    now = {c.line: c for c in bot_comments(fake)}
    assert sorted(now) == [6, 8] and now[8].id == first[8].id  # the old first place's comment deleted
    assert [c.path for c in fake.calls("pulls/delete-review-comment")] == [
        f"/repos/{repo.full_name}/pulls/comments/{first[5].id}"
    ]
    assert fake.violations == []


def _fingerprints(dockerfile: str, run: CheckRun) -> dict[int, str]:
    """line -> the fingerprint of the check run's finding there (the contract's: rule, path, line text)."""
    from npu_review.checks.engine import fingerprint, fingerprint_key

    lines = dockerfile.splitlines()
    return {
        a["start_line"]: fingerprint(fingerprint_key(a["title"].split()[0]), DOCKERFILE, lines[a["start_line"] - 1], 0)
        for a in run.annotations
    }


GUIDE_SCRIPT = (
    "import argparse\n"
    "\n"
    "parser = argparse.ArgumentParser()\n"
    'parser.add_argument("--pretrained-path")\n'
    "args = parser.parse_args()\n"
)
GUIDE_BASE = "# Export on Ascend NPU\n\nSource CANN's set_env.sh first.\n"
GUIDE_HEAD = GUIDE_BASE + "\n```bash\npython export.py --pretrained_path /models/pi0\n```\n"  # line 6: NPU117


async def test_a_script_a_changed_guide_runs_is_fetched_after_the_guide(
    fake_github: FakeGitHub, app: AppProcess
) -> None:
    """The guide's change names `export.py`, which no rule's kinds made the App fetch: it is read in a second
    batch, after the changed files, and the option its parser rejects is reported as the CLI reports it."""
    fake = fake_github
    base = {"recipes/pi0/README.md": GUIDE_BASE, "recipes/pi0/export.py": GUIDE_SCRIPT, "tools/other.py": "x = 1\n"}
    repo = fake.add_repo("octo-org/recipes", files=base)
    pull = fake.add_pull(repo, head_files={**base, "recipes/pi0/README.md": GUIDE_HEAD}, title="docs: export step")
    status, _ = await app.post(
        fake.delivery("pull_request", fake.pull_request_payload(pull, "opened"), FAKE_WEBHOOK_SECRET)
    )
    assert status == 202
    run = await wait_completed(fake, pull)
    await settle(app)
    assert [(a["path"], a["start_line"], a["title"]) for a in run.annotations] == [
        ("recipes/pi0/README.md", 6, "NPU117 script-argument-unknown")
    ]
    assert run.annotations[0]["message"].startswith(
        "`recipes/pi0/export.py` has no option `--pretrained_path`: its argparse parser (line 3) does not define it"
    )
    variables = {"owner": "octo-org", "repo": "recipes"}
    queries = [c.body for c in fake.calls("graphql/post")]
    # The guide at head and at base first (the two revisions go at once), then the script it names; nothing else.
    assert sorted(q["query"] for q in queries[:2]) == sorted([blob_query(GUIDE_HEAD), blob_query(GUIDE_BASE)])
    assert queries[2:] == [{"query": blob_query(GUIDE_SCRIPT), "variables": variables}]
    assert fake.violations == []
