"""The GitCode v5 REST client: the only module that talks to GitCode (merge requests, their files and comments,
labels, contents at a revision, member permissions, webhooks), with a personal access token.

What comes from GitCode's documentation (https://docs.gitcode.com/en/docs/guide/ and the pages under
docs/repos/, mirrored in the Trenza1ore/GitCode-API repository's docs/rest_api/):
- the token in `Authorization: Bearer <token>` (guide, "Authorization");
- the status codes: 404 "cannot be accessed", 429 "exceeded the rate limit", 500/503/504 (guide, "Response Codes");
- `per_page` at most 100 with `page` from 1 (pulls, "Get All Comments"; repos, "Get a tree");
- the paths and shapes of every call below (repos/pulls, repos, repos/member, repos/webhooks).
What GitCode does not document, and is assumed here:
- rate limits: no numbers and no headers are documented. A 429 or a 5xx is tried again with capped, jittered
  exponential backoff (a `Retry-After` in seconds is honoured if sent, up to MAX_WAIT_S); content-creating calls
  are paced by the caller's window (bot/gitcode_review.py, `NPU_REVIEW_GITCODE_WRITES_PER_MINUTE`);
- comment ids: the docs show both strings and numbers; they are kept as strings.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import logging
import random
from collections.abc import Mapping
from typing import Any
from urllib.parse import quote

import aiohttp

from npu_review.bot.github import Gone
from npu_review.bot.settings import Secret

log = logging.getLogger(__name__)

DEFAULT_API_URL = "https://api.gitcode.com"
API_PREFIX = "/api/v5"
# GitCode's documented maximum page size ("per_page: Items Per Page, Maximum 100").
PER_PAGE = 100
# Pages read at most from one listing (10,000 entries): a bound, not a documented limit.
MAX_PAGES = 100
# Attempts at one call on 429, 5xx, a timeout or a dropped connection; backoff doubles from the base, with jitter.
MAX_ATTEMPTS = 5
BACKOFF_MAX_S = 20.0
# The longest Retry-After honoured within a call; past it the job waits in the queue instead.
MAX_WAIT_S = 60.0
RETRY_STATUSES = frozenset({429, 500, 502, 503, 504})
USER_AGENT = "npu-review"


class GitCodeError(Exception):
    """GitCode refused a call (4xx other than 404/410/429): not tried again."""

    def __init__(self, method: str, path: str, status: int, body: str) -> None:
        super().__init__(f"GitCode {method} {path.split('?')[0]} answered {status}: {body[:200]}")
        self.status_code = status


class GitCodeUnavailable(Exception):
    """GitCode did not serve a call after every attempt (5xx, 429, timeouts): the job waits and is tried again."""

    retry_later = True  # bot/github.py failure_kind: RETRY_LATER

    def __init__(self, method: str, path: str, why: str) -> None:
        super().__init__(f"GitCode {method} {path.split('?')[0]}: {why}")
        self.status_code = 0


class GitCodeGone(Gone):
    """404 or 410: the repository or merge request is gone, or the token cannot see it."""


class GitCodeClient:
    """Calls for any repository the token reaches. `sleep` and `backoff_base_s` are injectable (tests)."""

    def __init__(
        self,
        session: aiohttp.ClientSession,
        token: Secret,
        api_url: str = DEFAULT_API_URL,
        backoff_base_s: float = 0.5,
    ) -> None:
        self.session = session
        self._token = token
        self.api_url = api_url.rstrip("/")
        self.backoff_base_s = backoff_base_s
        self.sleep = asyncio.sleep
        self._login: str | None = None

    # -- the transport -----------------------------------------------------------------------------------
    async def request(
        self, method: str, path: str, params: Mapping[str, Any] | None = None, body: Any = None, retry: bool = True
    ) -> Any:
        """The JSON answer (None when empty). `retry` False: a POST whose lost answer could leave a duplicate is
        tried once; the caller looks at what exists before trying again."""
        url = f"{self.api_url}{API_PREFIX}{path}"
        headers = {"Authorization": f"Bearer {self._token.reveal()}", "User-Agent": USER_AGENT}
        attempts = MAX_ATTEMPTS if retry else 1
        why = ""
        for attempt in range(1, attempts + 1):
            wait: float | None = None
            try:
                async with self.session.request(method, url, params=params, json=body, headers=headers) as r:
                    text = await r.text()
                    if r.status in (404, 410):
                        raise GitCodeGone(f"GitCode {method} {path} answered {r.status}")
                    if r.status in RETRY_STATUSES:
                        why = f"answered {r.status}"
                        retry_after = r.headers.get("Retry-After", "")
                        wait = float(retry_after) if retry_after.strip().isdigit() else None
                        if wait is not None and wait > MAX_WAIT_S:
                            break
                    elif r.status >= 400:
                        raise GitCodeError(method, path, r.status, text)
                    else:
                        return _json(text)
            except (TimeoutError, aiohttp.ClientConnectionError, aiohttp.ClientPayloadError) as exc:
                why = type(exc).__name__
            if attempt < attempts:
                delay = wait if wait is not None else self._backoff(attempt)
                log.warning("GitCode %s %s failed (%s); attempt %d of %d", method, path, why, attempt, attempts)
                await self.sleep(delay)
        raise GitCodeUnavailable(method, path, why)

    def _backoff(self, attempt: int) -> float:
        return random.uniform(0, min(BACKOFF_MAX_S, self.backoff_base_s * 2 ** (attempt - 1)))

    async def pages(self, path: str, params: Mapping[str, Any] | None = None, key: str = "") -> list[Any]:
        """Every entry of a paged listing (page by page until one is short); `key`: the answer is an object
        holding the page's list under that key (a tree's `tree`)."""
        out: list[Any] = []
        for page in range(1, MAX_PAGES + 1):
            data = await self.request("GET", path, {**(params or {}), "page": page, "per_page": PER_PAGE})
            if key:
                data = data.get(key) if isinstance(data, dict) else None
            items = data if isinstance(data, list) else []
            out.extend(items)
            if len(items) < PER_PAGE:
                break
        return out

    # -- the calls ---------------------------------------------------------------------------------------
    @staticmethod
    def repo_path(owner: str, repo: str) -> str:
        return f"/repos/{quote(owner, safe='')}/{quote(repo, safe='')}"

    async def login(self) -> str:
        """The token's own user (whose comments are the bot's): GET /user."""
        if self._login is None:
            data = await self.request("GET", "/user")
            self._login = str((data or {}).get("login") or "")
        return self._login

    async def get_pull(self, owner: str, repo: str, number: int) -> dict[str, Any]:
        data = await self.request("GET", f"{self.repo_path(owner, repo)}/pulls/{number}")
        return data if isinstance(data, dict) else {}

    async def pull_files(self, owner: str, repo: str, number: int) -> list[dict[str, Any]]:
        """GET /pulls/{number}/files: each file's `patch` is an object (`diff`, paths, flags, `too_large`)."""
        data = await self.request("GET", f"{self.repo_path(owner, repo)}/pulls/{number}/files")
        return [f for f in data if isinstance(f, dict)] if isinstance(data, list) else []

    async def tree(self, owner: str, repo: str, sha: str) -> list[dict[str, Any]]:
        """The blobs of a commit's tree (path, sha), read recursively, page by page."""
        path = f"{self.repo_path(owner, repo)}/git/trees/{quote(sha, safe='')}"
        entries = await self.pages(path, {"recursive": 1}, key="tree")
        return [e for e in entries if isinstance(e, dict) and e.get("type") == "blob"]

    async def blob(self, owner: str, repo: str, sha: str) -> bytes:
        data = await self.request("GET", f"{self.repo_path(owner, repo)}/git/blobs/{quote(sha, safe='')}")
        content = (data or {}).get("content") or ""
        return base64.b64decode(content) if (data or {}).get("encoding") == "base64" else str(content).encode()

    async def file(self, owner: str, repo: str, path: str, ref: str) -> bytes | None:
        """A file's bytes at a revision (GET /contents/{path}?ref=), None when it is not there."""
        try:
            data = await self.request("GET", f"{self.repo_path(owner, repo)}/contents/{quote(path)}", {"ref": ref})
        except GitCodeGone:
            return None
        if not isinstance(data, dict) or data.get("type", "file") != "file":
            return None
        content = data.get("content") or ""
        return base64.b64decode(content) if data.get("encoding") == "base64" else str(content).encode()

    async def comments(self, owner: str, repo: str, number: int) -> list[dict[str, Any]]:
        return await self.pages(f"{self.repo_path(owner, repo)}/pulls/{number}/comments")

    async def create_comment(
        self, owner: str, repo: str, number: int, body: str, path: str | None = None, position: int | None = None
    ) -> dict[str, Any]:
        """A merge request comment; with `path` and `position` (the line's place in the file's diff) an inline one.
        Tried once: the caller looks for it before trying again."""
        payload: dict[str, Any] = {"body": body}
        if path is not None and position is not None:
            payload.update(path=path, position=position)
        data = await self.request(
            "POST", f"{self.repo_path(owner, repo)}/pulls/{number}/comments", body=payload, retry=False
        )
        return data if isinstance(data, dict) else {}

    async def edit_comment(self, owner: str, repo: str, comment_id: str, body: str) -> None:
        path = f"{self.repo_path(owner, repo)}/pulls/comments/{quote(comment_id, safe='')}"
        await self.request("PATCH", path, body={"body": body})

    async def delete_comment(self, owner: str, repo: str, comment_id: str) -> None:
        with contextlib.suppress(GitCodeGone):  # already gone: what was wanted
            await self.request("DELETE", f"{self.repo_path(owner, repo)}/pulls/comments/{quote(comment_id, safe='')}")

    async def labels(self, owner: str, repo: str, number: int) -> list[str]:
        data = await self.request("GET", f"{self.repo_path(owner, repo)}/pulls/{number}/labels")
        return [str(x.get("name")) for x in data if isinstance(x, dict)] if isinstance(data, list) else []

    async def add_labels(self, owner: str, repo: str, number: int, names: list[str]) -> None:
        await self.request("POST", f"{self.repo_path(owner, repo)}/pulls/{number}/labels", body=names)

    async def remove_label(self, owner: str, repo: str, number: int, name: str) -> None:
        with contextlib.suppress(GitCodeGone):
            await self.request("DELETE", f"{self.repo_path(owner, repo)}/pulls/{number}/labels/{quote(name, safe='')}")

    async def permission(self, owner: str, repo: str, username: str) -> str:
        """A member's permission on the repository ("admin", "write", "read", ...); "" for a non-member."""
        try:
            data = await self.request(
                "GET", f"{self.repo_path(owner, repo)}/collaborators/{quote(username, safe='')}/permission"
            )
        except GitCodeGone:
            return ""
        return str((data or {}).get("permission") or "")

    async def create_hook(self, owner: str, repo: str, url: str, secret: Secret) -> dict[str, Any]:
        """Registers the webhook: merge request and comment events, signed with the secret (encryption_type 1:
        "Signature Key"), POST /repos/{owner}/{repo}/hooks."""
        body = {
            "url": url,
            "encryption_type": 1,
            "password": secret.reveal(),
            "merge_requests_events": True,
            "note_events": True,
            "push_events": False,
            "tag_push_events": False,
            "issues_events": False,
        }
        data = await self.request("POST", f"{self.repo_path(owner, repo)}/hooks", body=body, retry=False)
        return data if isinstance(data, dict) else {}


def _json(text: str) -> Any:
    if not text.strip():
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None
