"""App authentication: the RS256 JWT, and installation tokens cached per installation until shortly before expiry."""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol

import jwt

# GitHub: iat may be up to 60 s in the past to allow for clock drift; exp at most 10 minutes after iat.
# https://docs.github.com/en/apps/creating-github-apps/authenticating-with-a-github-app/generating-a-json-web-token-jwt-for-a-github-app
JWT_BACKDATE_S = 60
JWT_LIFETIME_S = 9 * 60
# Renew an installation token this long before GitHub's expires_at (tokens live one hour).
TOKEN_RENEW_MARGIN_S = 5 * 60


def make_jwt(app_id: str, private_key: str, now: float | None = None) -> str:
    issued = int(now if now is not None else time.time()) - JWT_BACKDATE_S
    return jwt.encode({"iat": issued, "exp": issued + JWT_LIFETIME_S, "iss": app_id}, private_key, algorithm="RS256")


@dataclass(frozen=True)
class InstallationToken:
    token: str
    expires_at: float  # epoch seconds

    def __repr__(self) -> str:
        return f"InstallationToken(token='***', expires_at={self.expires_at})"


def parse_expires_at(text: str) -> float:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()


class TokenStore(Protocol):
    """Tokens shared by several processes (bot/queue_redis.py): one fetch per installation for all of them."""

    async def get(self, installation_id: int) -> InstallationToken | None: ...

    async def put(self, installation_id: int, token: InstallationToken) -> None: ...

    async def forget(self, installation_id: int, token: str | None = None) -> None:
        """Drop the installation's token (only if it is `token`, when given)."""

    def lock(self, installation_id: int) -> contextlib.AbstractAsyncContextManager[None]:
        """Held while one process fetches the installation's token."""


class TokenCache:
    """One token per installation, fetched once and shared by concurrent callers (and, with a store, by every
    replica), renewed before it expires."""

    def __init__(
        self,
        fetch: Callable[[int], Awaitable[InstallationToken]],
        clock: Callable[[], float] = time.time,
        store: TokenStore | None = None,
    ) -> None:
        self._fetch = fetch
        self._clock = clock
        self._store = store
        self._tokens: dict[int, InstallationToken] = {}
        self._locks: dict[int, asyncio.Lock] = {}

    def _fresh(self, tok: InstallationToken | None) -> bool:
        return tok is not None and tok.expires_at - self._clock() > TOKEN_RENEW_MARGIN_S

    async def get(self, installation_id: int) -> str:
        tok = self._tokens.get(installation_id)
        if tok is not None and tok.expires_at - self._clock() > TOKEN_RENEW_MARGIN_S:
            return tok.token
        lock = self._locks.setdefault(installation_id, asyncio.Lock())
        async with lock:
            tok = self._tokens.get(installation_id)
            if not self._fresh(tok):
                tok = await self._shared(installation_id)
                self._tokens[installation_id] = tok
            assert tok is not None
            return tok.token

    async def _shared(self, installation_id: int) -> InstallationToken:
        if self._store is None:
            return await self._fetch(installation_id)
        tok = await self._store.get(installation_id)
        if self._fresh(tok):
            assert tok is not None
            return tok
        async with self._store.lock(installation_id):
            tok = await self._store.get(installation_id)  # another replica may have fetched it meanwhile
            if not self._fresh(tok):
                tok = await self._fetch(installation_id)
                await self._store.put(installation_id, tok)
            assert tok is not None
            return tok

    async def forget(self, installation_id: int, token: str | None = None) -> None:
        """Drop a token GitHub refused (401), so the next call fetches a fresh one. With `token`, only if that
        is still the cached one: of many calls refused at once, the first makes the next fetch, not each."""
        cached = self._tokens.get(installation_id)
        if token is None or (cached is not None and cached.token == token):
            self._tokens.pop(installation_id, None)
        if self._store is not None:
            await self._store.forget(installation_id, token)

    async def renew(self, installation_id: int, refused: str) -> str:
        """A token in place of `refused`, which GitHub answered 401 ("Bad credentials": revoked, or expired early)."""
        await self.forget(installation_id, refused)
        return await self.get(installation_id)
