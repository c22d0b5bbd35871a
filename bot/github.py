"""The one module that talks to GitHub: REST through gidgethub's aiohttp client, GraphQL at the explicit endpoint."""

from __future__ import annotations

import asyncio
import base64
import logging
import math
import random
import re
import time
import uuid
from collections import OrderedDict
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote

import aiohttp
from gidgethub import (
    BadGraphQLRequest,
    BadRequest,
    GitHubBroken,
    GitHubException,
    GraphQLException,
    GraphQLResponseTypeError,
    QueryError,
    RateLimitExceeded,
)
from gidgethub.aiohttp import GitHubAPI
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from npu_review.bot.auth import InstallationToken, TokenCache, TokenStore, make_jwt, parse_expires_at
from npu_review.bot.limits import MutationLimiter, WindowStore
from npu_review.bot.metrics import Metrics
from npu_review.bot.settings import Settings

log = logging.getLogger(__name__)

USER_AGENT = "npu-review"
# GitHub's REST pagination allows at most 100 items a page.
PER_PAGE = 100
# GET /pulls/{n}/files lists at most 3,000 files.
# https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files
MAX_PR_FILES = 3000
# Reads of file content at once per review: parallel, but not a flood.
CONTENT_CONCURRENCY = 16
# Blob contents kept in memory across reviews (content-addressed by sha, keyed per installation).
BLOB_CACHE_ENTRIES = 4096
# Blobs read per GraphQL query (aliased `object(oid:)` fields); more go in further queries, run at once.
BLOBS_PER_QUERY = 100
# ... and at most this many bytes of blobs (as the tree listing sizes them) per query, so that no answer is huge.
BLOB_QUERY_BYTES = 4_000_000
# GitHub's GraphQL cuts Blob.text here (no documented number; what users observe): larger blobs go to REST.
GRAPHQL_TEXT_LIMIT = 512_000
# What a blob query is allowed to carry inline: a git object id (SHA-1, or SHA-256 repositories).
_OID = re.compile(r"[0-9a-f]{40}|[0-9a-f]{64}")

DIFF_MEDIA_TYPE = "application/vnd.github.diff"

# Retries: exponential backoff with full jitter on 5xx, timeouts and dropped connections.
MAX_ATTEMPTS = 5
BACKOFF_BASE_S = 0.5
BACKOFF_MAX_S = 20.0
RETRY_STATUSES = frozenset({500, 502, 503, 504})
# Longest we wait out a rate limit before giving up on the call (the run then ends neutral with Re-run).
# GitHub's secondary limits ask for Retry-After (often 60 s); the primary limit resets within the hour.
MAX_RATE_LIMIT_WAIT_S = 15 * 60.0
# Without Retry-After, GitHub advises waiting at least a minute after a secondary rate limit.
# https://docs.github.com/en/rest/using-the-rest-api/rate-limits-for-the-rest-api#handle-rate-limit-errors-appropriately
SECONDARY_LIMIT_DEFAULT_WAIT_S = 60.0
# Requests in flight at once per installation (GitHub: no more than 100 concurrent requests in all); reads
# are not paced beyond this. Content-creating requests (POST/PATCH/PUT/DELETE, GraphQL mutations) also go
# through the per-installation windows of bot/limits.py.
CONCURRENT_PER_INSTALLATION = 20
_MUTATING = frozenset({"POST", "PATCH", "PUT", "DELETE"})


class RetryableResponse(Exception):
    """A response worth another attempt (5xx, a rate limit); carries how long to wait first, if GitHub said."""

    def __init__(self, status: int, wait_s: float | None, headers: Mapping[str, str], body: bytes) -> None:
        super().__init__(f"GitHub answered {status}")
        self.status = status
        self.wait_s = wait_s
        self.response = (status, headers, body)


class Gone(Exception):
    """The installation or the repository a job is for no longer exists for the App (404 or 410): nothing to do."""


# What a failed job is: to be tried again later (GitHub could not serve it), over (its installation or
# repository is gone), or failed (anything else: concluded neutral with the reason, not tried again).
RETRY_LATER = "retry"
GONE = "gone"
FAILED = "failed"


def failure_kind(exc: BaseException) -> str:
    """How a job that raised `exc` ends. GitHub being down, slow, rate-limiting beyond what a request waits, or
    refusing a freshly minted token (401) is temporary; 404/410 means the thing itself is gone."""
    if isinstance(exc, Gone):
        return GONE
    if getattr(exc, "retry_later", False):  # e.g. a review process that died (bot/engine_pool.py)
        return RETRY_LATER
    if isinstance(exc, (*_TRANSIENT, aiohttp.ClientError, GitHubBroken, RateLimitExceeded, GraphQLResponseTypeError)):
        return RETRY_LATER
    if isinstance(exc, BadRequest | BadGraphQLRequest):
        status = int(exc.status_code)
        if status in (404, 410):
            return GONE
        if status in (401, 429) or (status == 403 and "rate limit" in str(exc).lower()):
            return RETRY_LATER
    return FAILED


def describe(exc: BaseException) -> str:
    """A short account of a failure for logs and the status page: its class and status, never a token."""
    status = getattr(exc, "status_code", None) or getattr(exc, "status", None)
    return f"{type(exc).__name__}" + (f" {int(status)}" if status else "")


@dataclass(frozen=True)
class SharedState:
    """What replicas share through Redis: installation tokens and the content-creating windows."""

    tokens: TokenStore
    windows: WindowStore


_TRANSIENT = (RetryableResponse, TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError)


@dataclass
class Limits:
    """Per-installation limits of this process: requests in flight; and the content-creating windows."""

    gate: asyncio.Semaphore
    installation_id: int
    limiter: MutationLimiter | None  # None: not an installation's request (the App's own, with its JWT)
    # The core rate-limit budget GitHub last reported for this installation: (remaining, limit, reset epoch s).
    budget: tuple[int, int, int] | None = None

    @classmethod
    def new(cls, installation_id: int = 0, limiter: MutationLimiter | None = None) -> Limits:
        return cls(asyncio.Semaphore(CONCURRENT_PER_INSTALLATION), installation_id, limiter)

    async def pace_mutation(self, repo: str = "") -> None:
        if self.limiter is not None:
            await self.limiter.acquire(self.installation_id, repo)


def _rate_limit_wait(status: int, headers: Mapping[str, str], body: bytes, now: float) -> float | None:
    """Seconds to wait when the answer is a rate limit, else None."""
    if status not in (403, 429):
        return None
    retry_after = headers.get("Retry-After") or headers.get("retry-after")
    if retry_after and retry_after.strip().isdigit():
        return float(retry_after)
    if (headers.get("x-ratelimit-remaining") or headers.get("X-RateLimit-Remaining")) == "0":
        reset = headers.get("x-ratelimit-reset") or headers.get("X-RateLimit-Reset") or ""
        return max(0.0, float(reset) - now) + 1 if reset.isdigit() else SECONDARY_LIMIT_DEFAULT_WAIT_S
    if status == 429 or b"secondary rate limit" in body.lower():
        return SECONDARY_LIMIT_DEFAULT_WAIT_S
    return None


class ResilientGitHubAPI(GitHubAPI):
    """gidgethub's aiohttp client with retries, rate-limit waits, pacing and a concurrency bound.

    Retried: every request on 5xx, timeouts and connection errors, except the two creations whose lost answer
    would leave a duplicate (a review, a check run): RepoClient checks what exists before trying those again.
    Rate-limited answers (403/429) are never processed by GitHub, so they are waited out for every method.
    """

    def __init__(
        self,
        session: aiohttp.ClientSession,
        *args: Any,
        limits: Limits,
        metrics: Metrics,
        retry_unsafe: bool = True,
        reads_only: bool = False,
        backoff_base_s: float = BACKOFF_BASE_S,
        repo: str = "",
        reauth: Callable[[str], Awaitable[str]] | None = None,
        **kwargs: Any,
    ) -> None:
        super().__init__(session, *args, **kwargs)
        self._limits = limits
        # The repository whose share of the installation's windows a content-creating call takes.
        self._repo = repo
        # A fresh installation token in place of one GitHub refused (401); None for the App's own calls.
        self._reauth = reauth
        self._metrics = metrics
        self._backoff_base_s = backoff_base_s
        self._retry_unsafe = retry_unsafe
        # A GraphQL query is a POST that changes nothing: not paced like a mutation.
        self._reads_only = reads_only

    async def _once(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes
    ) -> tuple[int, Mapping[str, str], bytes]:
        if method in _MUTATING and not self._reads_only:
            await self._limits.pace_mutation(self._repo)
        async with self._limits.gate:
            try:
                status, resp_headers, data = await super()._request(method, url, headers, body)
            except (TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
                self._metrics.github_call(method, type(exc).__name__)
                raise
        self._metrics.github_call(method, status)
        remaining = resp_headers.get("x-ratelimit-remaining")
        if remaining is not None and remaining.isdigit():
            self._metrics.rate_limit_remaining = int(remaining)
            limit, reset = resp_headers.get("x-ratelimit-limit", ""), resp_headers.get("x-ratelimit-reset", "")
            if limit.isdigit() and reset.isdigit() and resp_headers.get("x-ratelimit-resource", "core") == "core":
                self._limits.budget = (int(remaining), int(limit), int(reset))
        wait = _rate_limit_wait(status, resp_headers, data, time.time())
        if wait is not None:
            raise RetryableResponse(status, wait, resp_headers, data)
        if status in RETRY_STATUSES:
            raise RetryableResponse(status, None, resp_headers, data)
        return status, resp_headers, data

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RetryableResponse) and exc.wait_s is not None:
            return min(exc.wait_s, MAX_RATE_LIMIT_WAIT_S)
        # Full jitter: a random wait up to the exponential bound.
        return random.uniform(0, min(BACKOFF_MAX_S, self._backoff_base_s * 2 ** (state.attempt_number - 1)))

    async def _request(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        answer = await self._retried(method, url, headers, body)
        refused = str(headers.get("authorization", ""))
        if answer[0] != 401 or self._reauth is None or not refused.lower().startswith("token "):
            return answer
        # "Bad credentials" for an installation token: revoked or expired early. Drop it, mint another, try once
        # more; a second 401 goes to the caller (the job is then tried again later).
        token = await self._reauth(refused[6:])
        log.warning("GitHub refused the installation token (401); trying once more with a new one")
        self.oauth_token = token
        return await self._retried(method, url, {**headers, "authorization": f"token {token}"}, body)

    async def _retried(
        self, method: str, url: str, headers: Mapping[str, str], body: bytes = b""
    ) -> tuple[int, Mapping[str, str], bytes]:
        def retryable(exc: BaseException) -> bool:
            if isinstance(exc, RetryableResponse) and exc.wait_s is not None:
                return exc.wait_s <= MAX_RATE_LIMIT_WAIT_S  # rate limited: GitHub did nothing
            if not isinstance(exc, _TRANSIENT):
                return False
            return self._retry_unsafe or method != "POST"

        retrying = AsyncRetrying(
            stop=stop_after_attempt(MAX_ATTEMPTS),
            wait=self._wait,
            retry=retry_if_exception(retryable),
            sleep=self.sleep,
            reraise=True,
            before_sleep=lambda state: self._before_sleep(method, url, state),
        )
        try:
            async for attempt in retrying:
                with attempt:
                    return await self._once(method, url, headers, body)
        except RetryableResponse as exc:
            return exc.response  # out of attempts: let gidgethub raise its usual exception for the status
        raise AssertionError("unreachable")

    def _before_sleep(self, method: str, url: str, state: RetryCallState) -> None:
        self._metrics.retries += 1
        exc = state.outcome.exception() if state.outcome else None
        log.warning(
            "GitHub %s %s failed (%s); attempt %d of %d",
            method,
            url.split("?")[0],
            exc,
            state.attempt_number,
            MAX_ATTEMPTS,
        )


REVIEW_THREADS_QUERY = """
query($owner: String!, $repo: String!, $number: Int!, $cursor: String) {
  repository(owner: $owner, name: $repo) {
    pullRequest(number: $number) {
      reviewThreads(first: 100, after: $cursor) {
        pageInfo { hasNextPage endCursor }
        nodes {
          id
          isResolved
          comments(first: 50) { nodes { databaseId } }
        }
      }
    }
  }
}
"""

BLOB_FIELDS = "... on Blob { text isBinary isTruncated byteSize }"


def blobs_query(shas: list[str]) -> str:
    """One query for several blobs: alias b<i> is shas[i] (the oids are checked hex, safe to write inline)."""
    fields = "".join(f'    b{i}: object(oid: "{sha}") {{ {BLOB_FIELDS} }}\n' for i, sha in enumerate(shas))
    head = "query($owner: String!, $repo: String!) {\n  repository(owner: $owner, name: $repo) {\n"
    return head + fields + "  }\n}\n"


def blob_from_graphql(node: Any) -> bytes | None:
    """The bytes of a whole text blob, None when the answer is not the blob exactly: missing,
    not a blob, truncated, binary or of unknown encoding by GitHub's reckoning, or text whose UTF-8 is not
    byteSize long (GitHub transcoded it). The caller reads those through REST and gets the same bytes as
    before, so what counts as binary stays `decode_blob`'s call (GitHub's isBinary may differ from it)."""
    if not isinstance(node, dict) or node.get("isTruncated") is not False:
        return None
    text = node.get("text")
    if node.get("isBinary") is False and isinstance(text, str):
        raw = text.encode("utf-8")
        if len(raw) == node.get("byteSize"):
            return raw
    return None


RESOLVE_THREAD_MUTATION = """
mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}
"""


class GitHubApp:
    """Process-wide: one HTTP session, the App's key and the installation-token cache."""

    def __init__(
        self,
        settings: Settings,
        session: aiohttp.ClientSession,
        metrics: Metrics | None = None,
        shared: SharedState | None = None,
    ) -> None:
        self.settings = settings
        self.session = session
        self.metrics = metrics or Metrics()
        # With Redis, the installation tokens and the content-creating windows are shared by every replica.
        self.tokens = TokenCache(self._fetch_token, store=shared.tokens if shared else None)
        self.limiter = MutationLimiter(
            shared.windows if shared else None, settings.mutations_per_minute, settings.mutations_per_hour
        )
        self._blobs: OrderedDict[tuple[int, str], bytes] = OrderedDict()
        self._limits: dict[int, Limits] = {}

    def _api(
        self,
        token: str | None = None,
        installation_id: int = 0,
        retry_unsafe: bool = True,
        reads_only: bool = False,
        repo: str = "",
    ) -> GitHubAPI:
        limits = self._limits.get(installation_id)
        if limits is None:
            limits = Limits.new(installation_id, self.limiter if installation_id else None)
            self._limits[installation_id] = limits
        return ResilientGitHubAPI(
            self.session,
            USER_AGENT,
            oauth_token=token,
            base_url=self.settings.api_url,
            limits=limits,
            metrics=self.metrics,
            retry_unsafe=retry_unsafe,
            reads_only=reads_only,
            backoff_base_s=self.settings.backoff_base_s,
            repo=repo,
            reauth=(lambda refused: self.tokens.renew(installation_id, refused)) if token else None,
        )

    async def _fetch_token(self, installation_id: int) -> InstallationToken:
        app_jwt = make_jwt(self.settings.app_id, self.settings.private_key.reveal())
        try:
            data = await self._api().post(
                "/app/installations/{installation_id}/access_tokens",
                {"installation_id": installation_id},
                data=b"",
                jwt=app_jwt,
            )
        except BadRequest as exc:
            # 404: uninstalled; 410: gone; 403 "This installation has been suspended".
            if int(exc.status_code) in (404, 410) or (int(exc.status_code) == 403 and "suspend" in str(exc).lower()):
                raise Gone(
                    f"installation {installation_id}: GitHub answered {int(exc.status_code)} for its token"
                ) from exc
            raise
        return InstallationToken(data["token"], parse_expires_at(data["expires_at"]))

    def repo(self, installation_id: int, owner: str, name: str) -> RepoClient:
        return RepoClient(self, installation_id, owner, name)

    async def list_installations(self) -> list[dict[str, Any]]:
        """Every installation of the App (authenticated as the App, with its JWT)."""
        app_jwt = make_jwt(self.settings.app_id, self.settings.private_key.reveal())
        gh = self._api()
        return [i async for i in gh.getiter(f"/app/installations?per_page={PER_PAGE}", jwt=app_jwt)]

    def rate_budgets(self) -> dict[int, tuple[int, int, int]]:
        """The core rate-limit budget GitHub last reported to this process, per installation:
        (remaining, limit, reset epoch seconds)."""
        return {iid: lim.budget for iid, lim in self._limits.items() if iid and lim.budget is not None}

    def cached_blob(self, installation_id: int, sha: str) -> bytes | None:
        key = (installation_id, sha)
        data = self._blobs.get(key)
        if data is not None:
            self._blobs.move_to_end(key)
        return data

    def remember_blob(self, installation_id: int, sha: str, data: bytes) -> None:
        self._blobs[(installation_id, sha)] = data
        while len(self._blobs) > BLOB_CACHE_ENTRIES:
            self._blobs.popitem(last=False)


async def convert_manifest(session: aiohttp.ClientSession, api_url: str, code: str) -> dict[str, Any]:
    """The manifest flow's last step: GitHub hands out the new App's id, key and webhook secret for the code
    its redirect carried (unauthenticated; the code is single-use and expires after an hour, so not retried).
    https://docs.github.com/en/apps/sharing-github-apps/registering-a-github-app-from-a-manifest"""
    gh = GitHubAPI(session, USER_AGENT, base_url=api_url)
    data: dict[str, Any] = await gh.post("/app-manifests/{code}/conversions", {"code": code}, data=b"")
    return data


class RepoClient:
    """Calls for one repository, authenticated as one installation (the base repository's, also for forks)."""

    def __init__(self, app: GitHubApp, installation_id: int, owner: str, name: str) -> None:
        self.app = app
        self.installation_id = installation_id
        self.owner = owner
        self.name = name
        self._content_gate = asyncio.Semaphore(CONTENT_CONCURRENCY)

    @property
    def full_name(self) -> str:
        return f"{self.owner}/{self.name}"

    async def _gh(self, retry_unsafe: bool = True, reads_only: bool = False) -> GitHubAPI:
        token = await self.app.tokens.get(self.installation_id)
        return self.app._api(token, self.installation_id, retry_unsafe, reads_only, repo=self.full_name.lower())

    def _url(self, suffix: str) -> str:
        return f"/repos/{quote(self.owner)}/{quote(self.name)}{suffix}"

    # -- pull requests -----------------------------------------------------------------------------------
    async def get_pull(self, number: int) -> dict[str, Any]:
        gh = await self._gh()
        data: dict[str, Any] = await gh.getitem(self._url(f"/pulls/{number}"))
        return data

    async def get_pull_diff(self, number: int) -> str | None:
        """The whole diff in one call, or None when GitHub refuses it (too large: 406) so files must be paged."""
        gh = await self._gh()
        try:
            text = await gh.getitem(self._url(f"/pulls/{number}"), accept=DIFF_MEDIA_TYPE)
        except BadRequest as exc:
            if exc.status_code in (406, 422):
                log.info("diff refused (%s), falling back to the files list", exc.status_code)
                return None
            raise
        return text if isinstance(text, str) else None

    async def list_pull_files(self, number: int, changed_files: int | None = None) -> list[dict[str, Any]]:
        """All files of a PR (GitHub stops at 3,000). With the count known, the pages are read in parallel."""
        gh = await self._gh()
        if changed_files is None:
            return [f async for f in gh.getiter(self._url(f"/pulls/{number}/files?per_page={PER_PAGE}"))]
        pages = max(1, math.ceil(min(changed_files, MAX_PR_FILES) / PER_PAGE))

        async def page(n: int) -> list[dict[str, Any]]:
            data: list[dict[str, Any]] = await gh.getitem(
                self._url(f"/pulls/{number}/files?per_page={PER_PAGE}&page={n}")
            )
            return data

        results = await asyncio.gather(*(page(n) for n in range(1, pages + 1)))
        return [f for chunk in results for f in chunk]

    # -- contents ----------------------------------------------------------------------------------------
    async def get_tree(self, sha: str) -> tuple[list[dict[str, Any]], bool]:
        """Every blob of a commit's tree (path, sha, size) and whether GitHub truncated the listing."""
        gh = await self._gh()
        data = await gh.getitem(self._url(f"/git/trees/{sha}?recursive=1"))
        entries = [e for e in data.get("tree", []) if e.get("type") == "blob"]
        return entries, bool(data.get("truncated"))

    async def get_blob(self, sha: str) -> bytes:
        cached = self.app.cached_blob(self.installation_id, sha)
        if cached is not None:
            return cached
        async with self._content_gate:
            gh = await self._gh()
            data = await gh.getitem(self._url(f"/git/blobs/{sha}"))
        raw = base64.b64decode(data.get("content", "")) if data.get("encoding") == "base64" else b""
        self.app.remember_blob(self.installation_id, sha, raw)
        return raw

    async def get_blobs(self, shas: Iterable[str], sizes: Mapping[str, int] | None = None) -> dict[str, bytes]:
        """Blobs by sha. Cached ones come from the cache; the rest through GraphQL, the queries at once, each
        with at most BLOBS_PER_QUERY blobs and BLOB_QUERY_BYTES bytes by `sizes` (the tree listing's, when
        known); what GraphQL would cut or does not give exactly (see blob_from_graphql) through REST."""
        sizes = sizes or {}
        out: dict[str, bytes] = {}
        todo: list[str] = []
        for sha in dict.fromkeys(shas):
            cached = self.app.cached_blob(self.installation_id, sha)
            if cached is not None:
                out[sha] = cached
            else:
                todo.append(sha)
        batches: list[list[str]] = []
        size = 0
        for sha in todo:
            if not _OID.fullmatch(sha) or sizes.get(sha, 0) > GRAPHQL_TEXT_LIMIT:
                continue
            if not batches or len(batches[-1]) >= BLOBS_PER_QUERY or size + sizes.get(sha, 0) > BLOB_QUERY_BYTES:
                batches.append([])
                size = 0
            batches[-1].append(sha)
            size += sizes.get(sha, 0)
        for found in await asyncio.gather(*(self._blob_batch(batch) for batch in batches)):
            out.update(found)
        rest = [sha for sha in todo if sha not in out]
        out.update(zip(rest, await asyncio.gather(*(self.get_blob(sha) for sha in rest)), strict=True))
        return out

    async def _blob_batch(self, shas: list[str]) -> dict[str, bytes]:
        """The blobs of one GraphQL query that it gives exactly (see blob_from_graphql)."""
        async with self._content_gate:
            gh = await self._gh(reads_only=True)
            try:
                data = await gh.graphql(
                    blobs_query(shas), endpoint=self.app.settings.graphql_url, owner=self.owner, repo=self.name
                )
            except QueryError as exc:  # errors beside the objects GitHub could resolve: REST reads the others
                log.warning("blob query answered with errors (%s); reading those blobs through REST", exc)
                data = exc.response.get("data")
            except (TimeoutError, GitHubBroken, GraphQLException, aiohttp.ClientError) as exc:
                # GraphQL still failing after the retries (a 5xx page, no JSON, a refused query; GitHub has had
                # GraphQL-only outages): REST reads them.
                log.warning("blob query failed (%s); reading its %d blobs through REST", type(exc).__name__, len(shas))
                data = None
        nodes = (data or {}).get("repository") or {}
        found: dict[str, bytes] = {}
        for i, sha in enumerate(shas):
            raw = blob_from_graphql(nodes.get(f"b{i}"))
            if raw is not None:
                found[sha] = raw
                self.app.remember_blob(self.installation_id, sha, raw)
        return found

    async def get_file(self, path: str, ref: str) -> bytes | None:
        """A file's bytes at a ref through the contents API, None when it does not exist there."""
        gh = await self._gh()
        try:
            data = await gh.getitem(self._url(f"/contents/{quote(path)}?ref={quote(ref, safe='')}"))
        except BadRequest as exc:
            if exc.status_code == 404:
                return None
            raise
        if not isinstance(data, dict) or data.get("type") != "file":
            return None
        if data.get("encoding") == "base64":
            return base64.b64decode(data.get("content", ""))
        # Files over 1 MB come back without content; a config that large is not a config.
        return None

    async def file_sha(self, path: str, ref: str) -> str | None:
        """The blob sha of a file at a ref (what identifies its content), None when it does not exist there."""
        gh = await self._gh()
        try:
            data = await gh.getitem(self._url(f"/contents/{quote(path)}?ref={quote(ref, safe='')}"))
        except BadRequest as exc:
            if exc.status_code == 404:
                return None
            raise
        return str(data.get("sha")) if isinstance(data, dict) and data.get("type") == "file" else None

    # -- check runs --------------------------------------------------------------------------------------
    async def create_check_run(self, payload: dict[str, Any]) -> dict[str, Any]:
        """Create a check run exactly once: its answer may be lost after GitHub made it, so before trying again
        look for it by its external_id (a second run would stay in progress forever)."""
        payload = {**payload, "external_id": payload.get("external_id") or uuid.uuid4().hex}
        for attempt in range(1, MAX_ATTEMPTS + 1):
            try:
                gh = await self._gh(retry_unsafe=False)
                data: dict[str, Any] = await gh.post(self._url("/check-runs"), data=payload)
                return data
            except (GitHubBroken, *_TRANSIENT) as exc:
                if attempt == MAX_ATTEMPTS:
                    raise
                log.warning("creating the check run failed (%s); looking for it before trying again", exc)
                await asyncio.sleep(random.uniform(0, self.app.settings.backoff_base_s * 2**attempt))
                found = await self.find_check_run(payload["head_sha"], payload["name"], payload["external_id"])
                if found is not None:
                    return found
        raise AssertionError("unreachable")

    async def find_check_run(self, head_sha: str, name: str, external_id: str) -> dict[str, Any] | None:
        gh = await self._gh()
        data = await gh.getitem(self._url(f"/commits/{head_sha}/check-runs?check_name={quote(name)}&per_page=100"))
        for run in data.get("check_runs", []):
            if run.get("external_id") == external_id:
                return dict(run)
        return None

    async def update_check_run(self, check_run_id: int, payload: dict[str, Any]) -> dict[str, Any]:
        gh = await self._gh()
        data: dict[str, Any] = await gh.patch(self._url(f"/check-runs/{check_run_id}"), data=payload)
        return data

    # -- reviews and comments ----------------------------------------------------------------------------
    async def list_review_comments(self, number: int) -> AsyncIterator[dict[str, Any]]:
        gh = await self._gh()
        async for c in gh.getiter(self._url(f"/pulls/{number}/comments?per_page={PER_PAGE}")):
            yield c

    async def create_review(self, number: int, payload: dict[str, Any]) -> dict[str, Any]:
        """Not retried here: a lost answer may hide a posted review (review.py checks the markers first)."""
        gh = await self._gh(retry_unsafe=False)
        data: dict[str, Any] = await gh.post(self._url(f"/pulls/{number}/reviews"), data=payload)
        return data

    async def delete_review_comment(self, comment_id: int) -> None:
        gh = await self._gh()
        try:
            await gh.delete(self._url(f"/pulls/comments/{comment_id}"))
        except BadRequest as exc:
            if exc.status_code != 404:  # already gone (a retried delete, or a human deleted it): fine
                raise

    async def update_review_comment(self, comment_id: int, body: str) -> None:
        gh = await self._gh()
        await gh.patch(self._url(f"/pulls/comments/{comment_id}"), data={"body": body})

    async def review_threads(self, number: int) -> list[dict[str, Any]]:
        gh = await self._gh(reads_only=True)
        threads: list[dict[str, Any]] = []
        cursor: str | None = None
        while True:
            data = await gh.graphql(
                REVIEW_THREADS_QUERY,
                endpoint=self.app.settings.graphql_url,
                owner=self.owner,
                repo=self.name,
                number=number,
                cursor=cursor,
            )
            conn = data["repository"]["pullRequest"]["reviewThreads"]
            threads.extend(conn["nodes"])
            if not conn["pageInfo"]["hasNextPage"]:
                return threads
            cursor = conn["pageInfo"]["endCursor"]

    async def resolve_thread(self, thread_id: str) -> None:
        gh = await self._gh()
        await gh.graphql(RESOLVE_THREAD_MUTATION, endpoint=self.app.settings.graphql_url, threadId=thread_id)

    async def react_to_issue_comment(self, comment_id: int, content: str) -> None:
        gh = await self._gh()
        await gh.post(self._url(f"/issues/comments/{comment_id}/reactions"), data={"content": content})


__all__ = ["BadRequest", "GitHubApp", "GitHubException", "RepoClient"]
