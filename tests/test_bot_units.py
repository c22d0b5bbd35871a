"""Unit tests of the App's pure parts: payload builders, diff map, /recheck parsing, settings, auth, jobs."""

from __future__ import annotations

import asyncio
import time

import jwt
import pytest

from npu_review.bot import reporters
from npu_review.bot.auth import JWT_BACKDATE_S, InstallationToken, TokenCache, make_jwt
from npu_review.bot.diffmap import from_diff, from_file_patches, from_files
from npu_review.bot.github import blob_from_graphql
from npu_review.bot.routers.recheck import has_recheck, may_recheck
from npu_review.bot.settings import Secret, SettingsError, from_env
from npu_review.checks.config import DEFAULT_MAX_INLINE_COMMENTS
from npu_review.checks.diffing import parse_diff
from npu_review.checks.model import ChangeStatus, Finding, Related, Severity


def finding(line: int, sev: Severity = Severity.WARNING, end: int | None = None, fp: str = "", **kw: object) -> Finding:
    return Finding(
        cause=str(kw.get("cause", "")),
        rule=str(kw.get("rule", "NPU301")),
        name="tls-verification-disabled",
        severity=sev,
        path=str(kw.get("path", "docker/ascend/Dockerfile.a2")),
        line=line,
        end_line=end or line,
        message=str(kw.get("message", "wget skips TLS verification")),
        suggestion=kw.get("suggestion"),  # type: ignore[arg-type]
        fingerprint=fp or f"{line:020x}",
    )


@pytest.fixture(scope="module")
def rsa_keys() -> tuple[str, str]:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    private = key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    ).decode()
    public = (
        key.public_key()
        .public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
        .decode()
    )
    return private, public


PATCH = "@@ -1,3 +1,5 @@\n FROM x\n-RUN a\n+RUN b\n+RUN c\n ARG y\n+ENV z=1\n@@ -20,2 +22,3 @@\n x\n+y\n z\n"


def test_diffmap_commentable_lines_and_hunks() -> None:
    _, dm = from_files([{"filename": "D", "status": "modified", "patch": PATCH}])
    assert sorted(dm.lines["D"]) == [1, 2, 3, 4, 5, 22, 23, 24]
    assert dm.commentable("D", 5) and not dm.commentable("D", 6) and not dm.commentable("E", 1)
    assert dm.commentable("D", 3, start_line=2)
    assert not dm.commentable("D", 23, start_line=4)  # across hunks: GitHub refuses it


def test_diffmap_from_full_diff_matches_file_patches() -> None:
    full = "diff --git a/D b/D\nindex 1..2 100644\n--- a/D\n+++ b/D\n" + PATCH
    parsed = parse_diff(full)  # one parse gives the engine's FileChanges and the commentable lines
    changes, dm = from_files([{"filename": "D", "status": "modified", "patch": PATCH}])
    assert from_diff(parsed).lines == dm.lines
    assert parsed["D"].change == changes["D"]


def test_changes_from_files_api_entries() -> None:
    files = [
        {"filename": "D", "status": "modified", "patch": PATCH, "changes": 5},
        {"filename": "new.sh", "status": "renamed", "previous_filename": "old.sh", "patch": "@@ -1 +1 @@\n-a\n+b\n"},
        {"filename": "gone.yml", "status": "removed", "patch": "@@ -1 +0,0 @@\n-a\n"},
        {"filename": "big.bin", "status": "added", "changes": 0},
    ]
    ch, _ = from_files(files)
    assert ch["D"].added_lines == frozenset({2, 3, 5, 23})
    assert (ch["new.sh"].status, ch["new.sh"].old_path, ch["new.sh"].added_lines) == (
        ChangeStatus.RENAMED,
        "old.sh",
        frozenset({1}),
    )
    assert ch["gone.yml"].status == ChangeStatus.DELETED
    assert ch["big.bin"].added_lines == frozenset()


def test_review_payload_inline_overflow_and_markers() -> None:
    dm = from_file_patches({"docker/ascend/Dockerfile.a2": PATCH})
    fs = [
        finding(2, suggestion="RUN b --safe"),
        finding(3, end=5, fp="f" * 20),
        finding(40),  # outside the diff
        finding(5, fp="a" * 20),  # posted before
    ]
    plan = reporters.plan_review("abc123", fs, dm, already_posted={"a" * 20})
    assert plan.payload is not None
    assert plan.payload["commit_id"] == "abc123" and plan.payload["event"] == "COMMENT"
    comments = plan.payload["comments"]
    assert [(c["path"], c["line"], c.get("start_line")) for c in comments] == [
        ("docker/ascend/Dockerfile.a2", 2, None),
        ("docker/ascend/Dockerfile.a2", 5, 3),
    ]
    assert all(c["side"] == "RIGHT" for c in comments)
    assert comments[1]["start_side"] == "RIGHT"
    assert "```suggestion\nRUN b --safe\n```" in comments[0]["body"]
    assert reporters.parse_marker(comments[0]["body"]) == fs[0].fingerprint
    assert reporters.parse_marker(comments[1]["body"]) == "f" * 20
    assert [f.line for f in plan.overflow] == [40]
    assert "`docker/ascend/Dockerfile.a2:40` **NPU301** (warning)" in plan.payload["body"]


def test_review_budget_moves_the_rest_to_the_body() -> None:
    patch = "@@ -0,0 +1,40 @@\n" + "".join(f"+l{i}\n" for i in range(40))
    dm = from_file_patches({"docker/ascend/Dockerfile.a2": patch})
    plan = reporters.plan_review("s", [finding(i) for i in range(1, 41)], dm, set())
    assert plan.payload is not None
    assert len(plan.payload["comments"]) == DEFAULT_MAX_INLINE_COMMENTS == 10
    assert [f.line for f in plan.inline] == list(range(1, 11))
    assert [f.line for f in plan.overflow] == list(range(11, 41))
    plan = reporters.plan_review("s", [finding(i) for i in range(1, 41)], dm, set(), max_inline=0)
    assert plan.payload is None and len(plan.overflow) == 40  # all of them in the check run


D = "docker/ascend/Dockerfile.a2"
FOOTER = "<sub>Run `npu-review rules NPU301` for details; `/recheck` re-runs the review.</sub>"


def test_one_inline_comment_per_cause_on_its_first_line_naming_the_others() -> None:
    dm = from_file_patches({D: PATCH, "docker/ascend/Dockerfile.a3": PATCH})
    fs = [
        finding(3, cause="c1", fp="3" * 20),
        finding(2, cause="c1", fp="2" * 20),
        finding(2, cause="c1", fp="9" * 20, path="docker/ascend/Dockerfile.a3"),
        finding(22, cause="c2", fp="4" * 20, rule="NPU302", message="other"),
    ]
    plan = reporters.plan_review("abc", fs, dm, set())
    assert plan.payload == {
        "commit_id": "abc",
        "event": "COMMENT",
        "body": "npu-review found 4 new issues in this change.",
        "comments": [
            {
                "path": D,
                "line": 2,
                "side": "RIGHT",
                "body": "⚠️ **NPU301** `tls-verification-disabled` (warning)\n\nwget skips TLS verification\n\n"
                "The same in 2 other places: `docker/ascend/Dockerfile.a2:3`, `docker/ascend/Dockerfile.a3:2`.\n\n"
                f"{FOOTER}\n<!-- npu-review:fp={'2' * 20} -->",
            },
            {
                "path": D,
                "line": 22,
                "side": "RIGHT",
                "body": "⚠️ **NPU302** `tls-verification-disabled` (warning)\n\nother\n\n"
                "<sub>Run `npu-review rules NPU302` for details; `/recheck` re-runs the review.</sub>\n"
                f"<!-- npu-review:fp={'4' * 20} -->",
            },
        ],
    }
    assert [f.line for f in plan.inline] == [2, 22] and plan.overflow == ()
    # A later run: the cause's comment is on the PR (its lead's marker), so none of its places is said again,
    # even one new to this head.
    again = reporters.plan_review("abd", [*fs, finding(5, cause="c1", fp="5" * 20)], dm, {"2" * 20, "4" * 20})
    assert again.payload is None and again.overflow == ()


def test_a_cause_is_said_on_its_first_place_the_diff_can_carry() -> None:
    dm = from_file_patches({D: PATCH})
    fs = [finding(1, cause="c", fp="1" * 20), finding(3, cause="c", fp="3" * 20), finding(40, cause="c")]
    plan = reporters.plan_review("abc", fs, dm, set())
    assert plan.payload is not None
    (comment,) = plan.payload["comments"]
    assert comment["line"] == 1  # line 1 is context in the hunk: commentable
    fs = [finding(40, cause="c", fp="e" * 20), finding(3, cause="c", fp="3" * 20)]
    plan = reporters.plan_review("abc", fs, dm, set())
    assert plan.payload is not None
    (comment,) = plan.payload["comments"]
    assert comment["line"] == 3 and reporters.parse_marker(comment["body"]) == "3" * 20
    assert "The same in 1 other place: `docker/ascend/Dockerfile.a2:40`." in comment["body"]


def test_one_cause_said_of_different_things_names_what_each_place_names() -> None:
    """A cause whose places say different things (every line a change leaves naming the files it moves) lists each
    place with what it names, never "the same" (blind judges read the places as this line's own text)."""
    dm = from_file_patches({D: PATCH})
    fs = [
        finding(2, cause="stale", fp="2" * 20, message="This line still names `a/run.sh`, but the change renames it."),
        finding(3, cause="stale", fp="3" * 20, message="This line still names `b/x.yml`, but the change renames it."),
        finding(22, cause="stale", fp="4" * 20, message="This line still names `a/run.sh`, but the change renames it."),
    ]
    plan = reporters.plan_review("abc", fs, dm, set())
    assert plan.payload is not None
    (comment,) = plan.payload["comments"]
    assert comment["line"] == 2
    assert (
        "Of the same cause, 2 other places: `docker/ascend/Dockerfile.a2:3` (`b/x.yml`), "
        "`docker/ascend/Dockerfile.a2:22` (`a/run.sh`)." in comment["body"]
    )
    assert "The same in" not in comment["body"]


def test_the_budget_goes_to_the_most_severe_causes_and_counts_those_on_the_pr() -> None:
    patch = "@@ -0,0 +1,9 @@\n" + "".join(f"+l{i}\n" for i in range(9))
    dm = from_file_patches({D: patch})
    fs = [
        finding(1, Severity.WARNING, cause="w1", fp="1" * 20),
        finding(2, Severity.WARNING, cause="w2", fp="2" * 20, message="second"),
        finding(3, Severity.ERROR, cause="e3", fp="3" * 20, rule="NPU306", message="third"),
        finding(4, Severity.WARNING, cause="w2", fp="4" * 20, message="second"),
        finding(5, Severity.ERROR, cause="e5", fp="5" * 20, rule="NPU306", message="fifth"),
        finding(6, Severity.NOTICE, cause="n6", fp="6" * 20),
    ]
    plan = reporters.plan_review("abc", fs, dm, set(), max_inline=3)
    assert plan.payload is not None
    assert [c["line"] for c in plan.payload["comments"]] == [1, 3, 5]  # in the file's order
    assert [f.line for f in plan.overflow] == [2, 4]  # the notice is left to the check run
    assert plan.payload["body"] == (
        "npu-review found 5 new issues in this change.\n\n"
        "Not shown inline (see the `npu-review` check run for all of them):\n"
        "- `docker/ascend/Dockerfile.a2:2` **NPU301** (warning): second (also `docker/ascend/Dockerfile.a2:4`)"
    )
    plan = reporters.plan_review("abc", fs, dm, set(), max_inline=2)
    assert [f.line for f in plan.inline] == [3, 5]  # errors first
    assert plan.payload is not None and plan.payload["body"].splitlines()[3:] == [
        "- `docker/ascend/Dockerfile.a2:1` **NPU301** (warning): wget skips TLS verification",
        "- `docker/ascend/Dockerfile.a2:2` **NPU301** (warning): second (also `docker/ascend/Dockerfile.a2:4`)",
    ]
    # Two comments still on the PR use the budget up: nothing more inline, however severe.
    plan = reporters.plan_review("abc", fs, dm, {"1" * 20, "4" * 20}, max_inline=2)
    assert plan.payload is None and [f.line for f in plan.overflow] == [3, 5]
    # A comment on the PR whose finding is gone (stale) does not count.
    plan = reporters.plan_review("abc", fs, dm, {"f" * 20}, max_inline=2)
    assert [f.line for f in plan.inline] == [3, 5]


def test_body_only_review_lists_causes_most_severe_first() -> None:
    fs = [finding(1, cause="w", fp="1" * 20), finding(2, cause="w"), finding(9, Severity.ERROR, rule="NPU306")]
    assert reporters.body_only_review("abc", fs) == {
        "commit_id": "abc",
        "event": "COMMENT",
        "body": "npu-review found 3 new issues in this change.\n\n"
        "Not shown inline (see the `npu-review` check run for all of them):\n"
        "- `docker/ascend/Dockerfile.a2:9` **NPU306** (error): wget skips TLS verification\n"
        "- `docker/ascend/Dockerfile.a2:1` **NPU301** (warning): wget skips TLS verification"
        " (also `docker/ascend/Dockerfile.a2:2`)",
    }


def test_no_review_when_nothing_is_new() -> None:
    dm = from_file_patches({"docker/ascend/Dockerfile.a2": PATCH})
    assert reporters.plan_review("s", [finding(2, fp="b" * 20)], dm, {"b" * 20}).payload is None


def test_check_run_completion_conclusions_and_batches() -> None:
    payload, batches = reporters.check_run_completion([], 3)
    assert payload["conclusion"] == "success" and batches == []
    assert payload["output"]["title"] == "No Ascend NPU issues found"
    payload, _ = reporters.check_run_completion([finding(1, Severity.NOTICE)], 1)
    assert payload["conclusion"] == "neutral"
    many = [finding(i, Severity.ERROR if i == 7 else Severity.WARNING) for i in range(1, 121)]
    payload, batches = reporters.check_run_completion(many, 1)
    assert payload["conclusion"] == "failure"
    assert [len(b) for b in batches] == [50, 50, 20]
    assert batches[0][6] == {
        "path": "docker/ascend/Dockerfile.a2",
        "start_line": 7,
        "end_line": 7,
        "annotation_level": "failure",
        "message": "wget skips TLS verification",
        "title": "NPU301 tls-verification-disabled",
    }
    assert payload["actions"] == [reporters.RERUN_ACTION]


def test_summary_is_cut_below_githubs_limit_with_a_note() -> None:
    many = [finding(i, message="x" * 300) for i in range(1, 2001)]
    text = reporters.summary(many, 1)
    assert len(text) <= reporters.SUMMARY_LIMIT
    assert "more findings are not listed here" in text


def test_comment_body_names_related_places() -> None:
    f = Finding("NPU202", "n", Severity.ERROR, "a.yml", 3, 3, "m", related=(Related("b.yml", 9, "pulls old"),))
    assert "- see `b.yml` line 9: pulls old" in reporters.comment_body(f)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("/recheck", True),
        ("  /recheck  ", True),
        ("Thanks!\n/recheck\n", True),
        ("please /recheck", False),
        ("/recheck now", False),
        ("```\n/recheck\n```", False),
        ("~~~\n/recheck\n~~~\n", False),
        ("```\ncode\n```\n/recheck", True),
        ("> /recheck", False),
        ("", False),
        # Code of every kind is skipped: indented blocks, longer fences, fences nested in lists and quotes.
        ("Run it like this:\n\n    /recheck\n", False),
        ("````\n```\n/recheck\n```\n````", False),
        ("- step one\n\n  ```\n  /recheck\n  ```\n", False),
        ("> ```\n> /recheck\n> ```", False),
        ("1. x\n\n        /recheck\n", False),
        ("<pre>\n/recheck\n</pre>", False),
        ("`/recheck`", False),
        ("- /recheck", False),
        ("````\ncode\n````\n\n/recheck", True),
    ],
)
def test_recheck_command_parsing(body: str, expected: bool) -> None:
    assert has_recheck(body) is expected


def _comment(assoc: str, login: str = "someone", kind: str = "User", author: str = "author") -> dict[str, object]:
    return {
        "comment": {"user": {"login": login, "type": kind}, "author_association": assoc},
        "issue": {"user": {"login": author}},
    }


def test_who_may_recheck() -> None:
    assert may_recheck(_comment("MEMBER"))
    assert may_recheck(_comment("OWNER")) and may_recheck(_comment("COLLABORATOR"))
    assert may_recheck(_comment("NONE", login="author"))  # the PR author
    assert not may_recheck(_comment("CONTRIBUTOR"))
    assert not may_recheck(_comment("NONE"))
    assert not may_recheck(_comment("MEMBER", login="ci[bot]", kind="Bot"))


def test_settings_require_id_key_and_secret(tmp_path: object) -> None:
    key = "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"
    good = {"GITHUB_APP_ID": "12", "GITHUB_PRIVATE_KEY": key, "GITHUB_WEBHOOK_SECRET": "s3cret"}
    s = from_env(good)
    assert s.api_url == "https://api.github.com" and s.port == 8080 and s.graphql_url.endswith("/graphql")
    assert "s3cret" not in repr(s) and "BEGIN" not in repr(s)
    assert s.webhook_secret.reveal() == "s3cret"
    for missing, word in [
        ("GITHUB_APP_ID", "GITHUB_APP_ID"),
        ("GITHUB_PRIVATE_KEY", "GITHUB_PRIVATE_KEY"),
        ("GITHUB_WEBHOOK_SECRET", "GITHUB_WEBHOOK_SECRET"),
    ]:
        env = {k: v for k, v in good.items() if k != missing}
        with pytest.raises(SettingsError, match=word):
            from_env(env)
    with pytest.raises(SettingsError, match="PORT"):
        from_env({**good, "PORT": "http"})
    assert repr(Secret("x")) == "Secret('***')"


def test_jwt_claims(rsa_keys: tuple[str, str]) -> None:
    private, public = rsa_keys
    now = time.time()
    claims = jwt.decode(make_jwt("42", private, now=now), public, algorithms=["RS256"], options={"verify_exp": False})
    assert claims["iss"] == "42"
    assert claims["iat"] == int(now) - JWT_BACKDATE_S
    assert claims["exp"] - claims["iat"] < 600 and claims["exp"] > now


async def test_token_cache_shares_and_renews() -> None:
    clock = [1000.0]
    fetched: list[int] = []

    async def fetch(inst: int) -> InstallationToken:
        fetched.append(inst)
        await asyncio.sleep(0)
        return InstallationToken(f"t{len(fetched)}", clock[0] + 3600)

    cache = TokenCache(fetch, clock=lambda: clock[0])
    assert await asyncio.gather(cache.get(1), cache.get(1)) == ["t1", "t1"]
    clock[0] += 3600 - 400  # more than the renewal margin left
    assert await cache.get(1) == "t1"
    clock[0] += 200  # inside the margin: renewed
    assert await cache.get(1) == "t2"
    assert fetched == [1, 1]
    # Refused (401): many calls refused with t2 at once make one new token, not one each.
    assert await asyncio.gather(*(cache.renew(1, "t2") for _ in range(5))) == ["t3"] * 5
    assert fetched == [1, 1, 1]
    await cache.forget(1, "t2")  # a stale refusal leaves the new token in place
    assert await cache.get(1) == "t3"


def test_json_logs_carry_the_delivery_context(capsys: pytest.CaptureFixture[str]) -> None:
    import json
    import logging

    from npu_review.bot import logs

    logs.setup(json_lines=True)
    try:
        with logs.log_context(delivery="d-42", repo="octo-org/verl", pr=7, head="abc123"):
            logging.getLogger("npu_review.bot.test").info("review done with token %s", "***")
        line = capsys.readouterr().err.strip().splitlines()[-1]
        doc = json.loads(line)
        assert (doc["delivery"], doc["repo"], doc["pr"], doc["head"]) == ("d-42", "octo-org/verl", 7, "abc123")
        assert doc["level"] == "info" and doc["message"] == "review done with token ***"
    finally:
        logging.getLogger().handlers.clear()


@pytest.mark.parametrize(
    ("node", "expected"),
    [
        ({"text": "caf\u00e9\r\n", "isBinary": False, "isTruncated": False, "byteSize": 7}, b"caf\xc3\xa9\r\n"),
        ({"text": "", "isBinary": False, "isTruncated": False, "byteSize": 0}, b""),
        # Not the blob exactly (binary by GitHub's reckoning too): read through REST instead.
        ({"text": None, "isBinary": True, "isTruncated": False, "byteSize": 9}, None),
        ({"text": "x" * 10, "isBinary": False, "isTruncated": True, "byteSize": 20}, None),
        ({"text": None, "isBinary": None, "isTruncated": False, "byteSize": 5}, None),
        ({"text": "caf\u00e9\n", "isBinary": False, "isTruncated": False, "byteSize": 5}, None),  # transcoded
        ({}, None),  # an object that is not a blob
        (None, None),  # no such object
    ],
)
def test_blob_from_graphql(node: object, expected: bytes | None) -> None:
    assert blob_from_graphql(node) == expected


async def test_content_creating_windows_per_minute_and_per_hour() -> None:
    from npu_review.bot.limits import GITHUB_PER_HOUR, GITHUB_PER_MINUTE, LocalWindows, MutationLimiter

    clock = [1000.0]
    slept: list[float] = []

    async def sleep(seconds: float) -> None:
        slept.append(seconds)
        clock[0] += seconds

    limiter = MutationLimiter(LocalWindows(clock=lambda: clock[0]), per_minute=3, per_hour=5, sleep=sleep)
    assert [await limiter.acquire(1) for _ in range(3)] == [0.0, 0.0, 0.0]  # a burst goes at once
    assert await limiter.acquire(2) == 0.0  # each installation has its own windows
    clock[0] += 10
    assert await limiter.acquire(1) == pytest.approx(50.01)  # the minute is full: wait until its oldest leaves
    assert await limiter.acquire(1) == 0.0  # 5 in the hour now
    assert await limiter.budget(1) == {"per_minute_left": 1, "per_hour_left": 0, "per_minute": 3, "per_hour": 5}
    clock[0] += 60
    waited = await limiter.acquire(1)  # the hour is full although the minute is not: until 1000 + 3600
    assert waited == pytest.approx(1000 + 3600 - 1120.01, abs=0.6)
    assert max(slept) == pytest.approx(60.01)  # it looks again at least once a minute
    assert 1000.0 + 3600 <= clock[0] < 1000.0 + 3600 + 61
    # The defaults stay below GitHub's documented figures.
    default = MutationLimiter()
    assert default.limits[0][1] < GITHUB_PER_MINUTE and default.limits[1][1] < GITHUB_PER_HOUR


async def test_the_installation_window_is_shared_fairly_by_its_repositories() -> None:
    from npu_review.bot.limits import LocalWindows, reserve

    now = [0.0]
    windows = LocalWindows(clock=lambda: now[0])
    limits = ((60.0, 16),)  # a minute of 16, an eighth (2) kept for repositories below their share
    assert reserve(16) == 2

    async def take(repo: str) -> float:
        return await windows.take(7, limits, repo)

    # A repository alone takes the window up to the reserve, and then waits even though the window has room.
    assert [await take("a/flood") for _ in range(14)] == [0.0] * 14
    assert await take("a/flood") == 60.0
    # Another repository of the installation gets the reserve at once (below its share of 16 / 2).
    now[0] = 1.0
    assert [await take("a/other") for _ in range(2)] == [0.0, 0.0]
    assert await take("a/other") == 59.0  # the window is full now: everyone waits for its oldest
    # Requests of no repository in particular (the App's own) only see the total.
    now[0] = 61.0
    assert await take("") == 0.0
    # A new minute: the flood takes its 14 again (one request of no repository counts in the total), and the
    # reserve still holds for a repository that comes later.
    assert [await take("a/flood") for _ in range(14)] == [0.0] * 14
    assert await take("a/flood") > 0
    assert await take("a/third") == 0.0


async def test_redis_windows_decide_as_the_local_ones(redis_url: str) -> None:
    import random
    import uuid

    from npu_review.bot.limits import LocalWindows
    from npu_review.bot.queue_redis import RedisWindows

    now = [1_000_000.0]
    local = LocalWindows(clock=lambda: now[0])
    client = __import__("redis.asyncio", fromlist=["from_url"]).from_url(redis_url, decode_responses=True)
    prefix = f"test-{uuid.uuid4().hex[:8]}:"
    shared = RedisWindows(client, prefix, clock=lambda: now[0])
    limits = ((60.0, 10), (3600.0, 30))
    rng = random.Random(5)
    try:
        for _ in range(300):
            now[0] += rng.choice([0.0, 0.5, 3.0, 20.0])
            repo = rng.choice(["o/a", "o/a", "o/a", "o/b", "o/c", ""])
            expect = await local.take(3, limits, repo)
            got = await shared.take(3, limits, repo)
            assert got == pytest.approx(expect, abs=0.002), (now[0], repo)
    finally:
        keys = [k async for k in client.scan_iter(f"{prefix}*")]
        if keys:
            await client.delete(*keys)
        await client.aclose()


async def test_the_review_slots_go_round_the_repositories() -> None:
    from npu_review.bot.fairgate import FairGate

    gate = FairGate(1)
    order: list[str] = []
    release = asyncio.Event()

    async def review(repo: str, n: int) -> None:
        async with gate.slot(repo):
            order.append(f"{repo}{n}")
            if not release.is_set():
                await release.wait()

    first = asyncio.ensure_future(review("a", 0))
    await asyncio.sleep(0)
    burst = [asyncio.ensure_future(review("a", n)) for n in range(1, 6)]
    await asyncio.sleep(0)
    other = asyncio.ensure_future(review("b", 0))
    await asyncio.sleep(0)
    release.set()
    await asyncio.gather(first, *burst, other)
    assert order == ["a0", "a1", "b0", "a2", "a3", "a4", "a5"]  # b's one review waits for one of a's, not five


async def test_a_review_waiting_for_the_window_lends_its_slot() -> None:
    from npu_review.bot.fairgate import FairGate, waiting_without_slot

    gate = FairGate(1)
    window_open = asyncio.Event()
    order: list[str] = []

    async def flood_review() -> None:
        async with gate.slot("a"):
            order.append("a starts")
            # Both of its calls wait for the window at once: the slot is lent once and taken back once.
            await asyncio.gather(waiting_without_slot(window_open.wait()), waiting_without_slot(window_open.wait()))
            order.append("a posts")

    async def other_review() -> None:
        async with gate.slot("b"):
            order.append("b runs")

    first = asyncio.ensure_future(flood_review())
    await asyncio.sleep(0)
    await asyncio.wait_for(other_review(), 1)  # not held behind a review that only waits
    window_open.set()
    await first
    assert order == ["a starts", "b runs", "a posts"]
    async with gate.slot("c"):  # every slot given back: one free, no more
        assert gate._free == 0
    assert gate._free == 1
