"""The one module that talks to GitHub: REST through gidgethub's aiohttp client, GraphQL at the explicit endpoint."""

from __future__ import annotations

import asyncio
import base64
import logging
import math
from collections import OrderedDict
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import quote

import aiohttp
from gidgethub import BadRequest, GitHubException
from gidgethub.aiohttp import GitHubAPI

from bot.auth import InstallationToken, TokenCache, make_jwt, parse_expires_at
from bot.metrics import Metrics
from bot.settings import Settings

log = logging.getLogger(__name__)

USER_AGENT = "npu-review"
# GitHub's REST pagination allows at most 100 items a page.
PER_PAGE = 100
# GET /pulls/{n}/files lists at most 3,000 files.
# https://docs.github.com/en/rest/pulls/pulls#list-pull-requests-files
MAX_PR_FILES = 3000
# Reads of file content at once per review: parallel, but not a flood.
CONTENT_CONCURRENCY = 8
# Blob contents kept in memory across reviews (content-addressed by sha, keyed per installation).
BLOB_CACHE_ENTRIES = 4096

DIFF_MEDIA_TYPE = "application/vnd.github.diff"

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

RESOLVE_THREAD_MUTATION = """
mutation($threadId: ID!) {
  resolveReviewThread(input: {threadId: $threadId}) { thread { id isResolved } }
}
"""


class GitHubApp:
    """Process-wide: one HTTP session, the App's key and the installation-token cache."""

    def __init__(self, settings: Settings, session: aiohttp.ClientSession, metrics: Metrics | None = None) -> None:
        self.settings = settings
        self.session = session
        self.metrics = metrics or Metrics()
        self.tokens = TokenCache(self._fetch_token)
        self._blobs: OrderedDict[tuple[int, str], bytes] = OrderedDict()

    def _api(self, token: str | None = None) -> GitHubAPI:
        return GitHubAPI(self.session, USER_AGENT, oauth_token=token, base_url=self.settings.api_url)

    async def _fetch_token(self, installation_id: int) -> InstallationToken:
        app_jwt = make_jwt(self.settings.app_id, self.settings.private_key.reveal())
        data = await self._api().post(
            "/app/installations/{installation_id}/access_tokens",
            {"installation_id": installation_id},
            data=b"",
            jwt=app_jwt,
        )
        return InstallationToken(data["token"], parse_expires_at(data["expires_at"]))

    def repo(self, installation_id: int, owner: str, name: str) -> RepoClient:
        return RepoClient(self, installation_id, owner, name)

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

    async def _gh(self) -> GitHubAPI:
        return self.app._api(await self.app.tokens.get(self.installation_id))

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

    # -- check runs --------------------------------------------------------------------------------------
    async def create_check_run(self, payload: dict[str, Any]) -> dict[str, Any]:
        gh = await self._gh()
        data: dict[str, Any] = await gh.post(self._url("/check-runs"), data=payload)
        return data

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
        gh = await self._gh()
        data: dict[str, Any] = await gh.post(self._url(f"/pulls/{number}/reviews"), data=payload)
        return data

    async def delete_review_comment(self, comment_id: int) -> None:
        gh = await self._gh()
        await gh.delete(self._url(f"/pulls/comments/{comment_id}"))

    async def update_review_comment(self, comment_id: int, body: str) -> None:
        gh = await self._gh()
        await gh.patch(self._url(f"/pulls/comments/{comment_id}"), data={"body": body})

    async def review_threads(self, number: int) -> list[dict[str, Any]]:
        gh = await self._gh()
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
