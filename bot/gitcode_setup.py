"""`npu-review gitcode-hook OWNER/REPO --url URL`: registers the App's webhook on a GitCode repository (merge request
and comment events, signed with GITCODE_WEBHOOK_SECRET) through POST /api/v5/repos/{owner}/{repo}/hooks."""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Mapping

import aiohttp

from npu_review.bot.gitcode import GitCodeClient, GitCodeError, GitCodeGone, GitCodeUnavailable
from npu_review.bot.settings import SettingsError, from_env


def register(repo: str, url: str, env: Mapping[str, str] | None = None) -> int:
    try:
        settings = from_env(os.environ if env is None else env)
    except SettingsError as exc:
        print(f"npu-review gitcode-hook: {exc}", file=sys.stderr)
        return 2
    if not settings.gitcode:
        print("npu-review gitcode-hook: set GITCODE_TOKEN and GITCODE_WEBHOOK_SECRET", file=sys.stderr)
        return 2
    owner, _, name = repo.strip("/").rpartition("/")
    if not owner or not name:
        print(f"npu-review gitcode-hook: expected OWNER/REPO, got {repo!r}", file=sys.stderr)
        return 2
    if not url.startswith(("https://", "http://")):
        print(f"npu-review gitcode-hook: --url must be the server's http(s) address, got {url!r}", file=sys.stderr)
        return 2

    async def create() -> dict[str, object]:
        assert settings.gitcode_token is not None and settings.gitcode_webhook_secret is not None
        async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
            client = GitCodeClient(session, settings.gitcode_token, settings.gitcode_api_url)
            return await client.create_hook(owner, name, url, settings.gitcode_webhook_secret)

    try:
        hook = asyncio.run(create())
    except GitCodeGone:
        print(f"npu-review gitcode-hook: {repo} not found (or the token cannot administer it)", file=sys.stderr)
        return 1
    except (GitCodeError, GitCodeUnavailable) as exc:
        print(f"npu-review gitcode-hook: {exc}", file=sys.stderr)
        return 1
    print(f"npu-review gitcode-hook: webhook {hook.get('id', '?')} on {repo} -> {url} (merge requests, comments)")
    return 0
