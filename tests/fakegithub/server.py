"""The fake GitHub: an aiohttp application that checks every request against GitHub's API description."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import time
from collections import defaultdict, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote, urlencode

from aiohttp import web

from . import apps, graphql_api, render, webhooks
from .auth import DEFAULT_TOKEN_LIFETIME, Token, allows, check_app_jwt, generate_key_pair, new_token_value
from .diff import FileDiff
from .faults import Fault, default_body
from .spec import Operation, load_spec
from .state import (
    CheckRun,
    FileContent,
    Ids,
    Installation,
    IssueComment,
    Pull,
    PullFile,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    Thread,
    User,
    diff_files,
    iso,
    now,
)

JSON_TYPE = "application/json; charset=utf-8"
# GitHub: at most 100 items a page, 30 when per_page is absent.
MAX_PER_PAGE = 100
DEFAULT_PER_PAGE = 30
# GitHub lists at most 3000 files of a pull request.
MAX_PULL_FILES = 3000
# Comment and review bodies: "Body is too long (maximum is 65536 characters)".
MAX_BODY = 65536
# Contents API: files over 1 MB come back without content (encoding "none").
MAX_CONTENTS_SIZE = 1024 * 1024
# Trees API truncates past 100,000 entries.
MAX_TREE_ENTRIES = 100_000
# Check-run annotations: title at most 255 characters, message and raw_details at most 64 KB.
MAX_ANNOTATION_TITLE = 255
MAX_ANNOTATION_TEXT = 64 * 1024
DIFF_TOO_LARGE = "Sorry, the diff exceeded the maximum number of lines (20000)"
DEFAULT_PERMISSIONS = {
    "checks": "write",
    "contents": "read",
    "issues": "write",
    "metadata": "read",
    "pull_requests": "write",
}
# What each operation needs from the installation; alternatives are any-of.
NEEDS: dict[str, list[tuple[str, str]]] = {
    "pulls/get": [("pull_requests", "read")],
    "pulls/list-files": [("pull_requests", "read")],
    "pulls/list-review-comments": [("pull_requests", "read")],
    "pulls/create-review": [("pull_requests", "write")],
    "pulls/update-review-comment": [("pull_requests", "write")],
    "pulls/delete-review-comment": [("pull_requests", "write")],
    "repos/get-content": [("contents", "read")],
    "git/get-tree": [("contents", "read")],
    "git/get-blob": [("contents", "read")],
    "checks/create": [("checks", "write")],
    "checks/update": [("checks", "write")],
    "checks/list-for-ref": [("checks", "read")],
    "issues/create-comment": [("issues", "write"), ("pull_requests", "write")],
    "reactions/create-for-issue-comment": [("issues", "write"), ("pull_requests", "write")],
    "repos/get-collaborator-permission-level": [("metadata", "read")],
}
APP_LEVEL_OPERATIONS = frozenset(
    {"apps/create-installation-access-token", "apps/list-installations", "apps/create-from-manifest"}
)
ROLE_PERMISSION = {
    "admin": "admin",
    "maintain": "write",
    "write": "write",
    "triage": "read",
    "read": "read",
    "none": "none",
}


@dataclass(frozen=True)
class Violation:
    """A request GitHub would refuse, or that breaks a rule the App must keep."""

    kind: str
    method: str
    path: str
    operation: str | None
    message: str

    def __str__(self) -> str:
        return f"[{self.kind}] {self.method} {self.path}: {self.message}"


@dataclass
class LoggedRequest:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: Any
    operation: str | None = None
    template: str | None = None
    status: int = 0
    response: Any = None
    fault: str | None = None

    def __repr__(self) -> str:
        return f"<{self.method} {self.path} -> {self.status}{' fault ' + self.fault if self.fault else ''}>"

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.method,
            "path": self.path,
            "query": self.query,
            "headers": self.headers,
            "body": self.body,
            "operation": self.operation,
            "template": self.template,
            "status": self.status,
            "response": self.response,
            "fault": self.fault,
        }


@dataclass
class RateLimit:
    resource: str
    limit: int = 5000
    remaining: int = 5000
    reset: float = field(default_factory=lambda: time.time() + 3600)

    def headers(self) -> dict[str, str]:
        return {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(int(self.reset)),
            "X-RateLimit-Used": str(self.limit - self.remaining),
            "X-RateLimit-Resource": self.resource,
        }


class ApiError(Exception):
    """Answer like GitHub with an error; `violation` names the App's mistake, if it made one."""

    def __init__(
        self,
        status: int,
        message: str,
        *,
        errors: list[Any] | None = None,
        violation: str | None = None,
        detail: str | None = None,
        headers: dict[str, str] | None = None,
    ) -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.errors = errors
        self.violation = violation
        self.detail = detail
        self.headers = headers or {}


@dataclass
class Call:
    request: web.Request
    op: Operation
    params: dict[str, Any]
    query: dict[str, str]
    body: Any
    api: str
    log: LoggedRequest
    token: Token | None = None
    repo: Repo | None = None
    alias_prefix: str | None = None  # "/repositories/{id}" when the App followed a Link header

    def page(self) -> tuple[int, int]:
        per_page = self.params.get("per_page", DEFAULT_PER_PAGE)
        per_page = DEFAULT_PER_PAGE if per_page < 1 else min(per_page, MAX_PER_PAGE)
        return max(self.params.get("page", 1), 1), per_page


Handler = Callable[[Call], Awaitable[web.StreamResponse]]


def _redact(headers: Any) -> dict[str, str]:
    out = {}
    for key, value in headers.items():
        key = key.lower()
        if key == "authorization":
            scheme = value.split(" ", 1)[0]
            value = f"{scheme} <redacted>"
        out[key] = value
    return out


class FakeGitHub:
    """State, request log, violations and the aiohttp app of one fake GitHub."""

    def __init__(
        self,
        app_id: int,
        public_key: str,
        *,
        app_slug: str = "npu-review",
        token_lifetime: float = DEFAULT_TOKEN_LIFETIME,
        validate_responses: bool = True,
    ) -> None:
        self.app_id = app_id
        self.public_key = public_key
        self.app_slug = app_slug
        self.token_lifetime = token_lifetime
        self.validate_responses = validate_responses
        self.spec = load_spec()
        self.ids = Ids()
        self.base_url = "http://127.0.0.1"  # replaced once the server listens
        self.users: dict[str, User] = {}
        self.bot = self.user(f"{app_slug}[bot]", type="Bot")
        self.bot.app_slug = app_slug
        self.app_owner = self.user("npu-review-maintainers", type="Organization")
        self.installations: dict[int, Installation] = {}
        self.repos: dict[str, Repo] = {}  # lower-case full name -> repo
        self.tokens: dict[str, Token] = {}
        self.check_runs: dict[int, CheckRun] = {}
        self.reviews: dict[int, Review] = {}
        self.review_comments: dict[int, ReviewComment] = {}
        self.threads: dict[int, Thread] = {}
        self.issue_comments: dict[int, IssueComment] = {}
        self.reactions: list[Reaction] = []
        self.requests: list[LoggedRequest] = []
        self.violations: list[Violation] = []
        self.response_errors: list[str] = []  # the fake's own answers that break the description
        self.faults: dict[str, deque[Fault]] = defaultdict(deque)
        # An outage: while set, every API call (tokens included) gets this answer, however many calls come.
        self.outage_fault: Fault | None = None
        # Installations the owner removed and repositories deleted: GitHub answers 404 (the App could not know).
        self.removed_installations: set[int] = set()
        self.removed_repos: set[str] = set()
        self.rate_limits = {"core": RateLimit("core"), "graphql": RateLimit("graphql")}
        # The manifest flow (apps.py): the browser's pages as this user, the manifests posted, the Apps made.
        self.signed_in_user = "octocat"
        self.manifest_flow = apps.ManifestFlow()
        self._handlers: dict[str, Handler] = {
            "apps/create-installation-access-token": self._create_token,
            "apps/create-from-manifest": self._create_from_manifest,
            "apps/list-installations": self._list_installations,
            "pulls/get": self._get_pull,
            "pulls/list-files": self._list_files,
            "repos/get-content": self._get_content,
            "git/get-tree": self._get_tree,
            "git/get-blob": self._get_blob,
            "checks/create": self._create_check_run,
            "checks/update": self._update_check_run,
            "checks/list-for-ref": self._list_check_runs,
            "pulls/create-review": self._create_review,
            "pulls/list-review-comments": self._list_review_comments,
            "pulls/update-review-comment": self._update_review_comment,
            "pulls/delete-review-comment": self._delete_review_comment,
            "issues/create-comment": self._create_issue_comment,
            "reactions/create-for-issue-comment": self._create_reaction,
            "repos/get-collaborator-permission-level": self._get_permission,
            "graphql/post": self._graphql,
        }
        missing = {o.operation_id for o in self.spec.operations} - set(self._handlers)
        assert not missing, f"operations without a handler: {missing}"
        self._app: web.Application | None = None
        self._runner: web.AppRunner | None = None

    # ------------------------------------------------------------------ seeding

    def user(self, login: str, *, type: str = "User") -> User:
        """The user with this login, created on first use."""
        if login not in self.users:
            self.users[login] = User(login, self.ids.next("user"), type)
        return self.users[login]

    def add_installation(
        self,
        installation_id: int | None = None,
        *,
        account: str = "octo-org",
        repositories: list[str] | None = None,
        permissions: dict[str, str] | None = None,
    ) -> Installation:
        """An installation of the App on `account` (repositories: full names it may see; None = all)."""
        iid = installation_id if installation_id is not None else self.ids.next("installation")
        owner = self.user(account, type="Organization" if account not in self.users else self.users[account].type)
        inst = Installation(
            iid,
            owner,
            {r.lower() for r in repositories} if repositories is not None else None,
            dict(permissions or DEFAULT_PERMISSIONS),
        )
        self.installations[iid] = inst
        return inst

    def add_repo(
        self,
        full_name: str,
        *,
        installation: Installation | int | None = None,
        files: dict[str, FileContent] | None = None,
        private: bool = False,
        default_branch: str = "main",
        installed: bool = True,
        owner_type: str | None = None,
    ) -> Repo:
        """A repository; with `files`, its default branch holds them. Installed on the owner's installation
        (installed=False: e.g. a contributor's fork). The owner is an Organization when installed, else a User."""
        owner_login, name = full_name.split("/")
        if owner_type is None:
            known = self.users.get(owner_login)
            owner_type = known.type if known else ("Organization" if installed else "User")
        owner = self.user(owner_login, type=owner_type)
        iid: int | None = None
        if installed:
            if isinstance(installation, Installation):
                iid = installation.id
            elif isinstance(installation, int):
                iid = installation
            else:
                found = [i for i in self.installations.values() if i.account.login == owner_login]
                iid = found[0].id if found else self.add_installation(account=owner_login).id
            inst = self.installations[iid]
            if inst.repositories is not None:
                inst.repositories.add(full_name.lower())
        repo = Repo(self.ids.next("repo"), owner, name, private, default_branch, iid)
        self.repos[full_name.lower()] = repo
        if files is not None:
            repo.commit(files, branch=default_branch, message="initial")
        return repo

    def repo(self, full_name: str) -> Repo:
        return self.repos[full_name.lower()]

    def add_pull(
        self,
        repo: Repo | str,
        *,
        head_files: dict[str, FileContent] | None = None,
        base_files: dict[str, FileContent] | None = None,
        number: int | None = None,
        base: str | None = None,
        head: str | None = None,
        head_ref: str | None = None,
        head_repo: Repo | str | None = None,
        files: list[PullFile] | None = None,
        renames: dict[str, str] | None = None,
        title: str = "Add NPU support",
        body: str | None = "",
        user: str = "contributor",
        author_association: str = "CONTRIBUTOR",
        draft: bool = False,
        state: str = "open",
    ) -> Pull:
        """An open pull request.

        Either give `head_files` (the whole tree at head; `base_files` for the base, else the base branch's
        tree) and the fake commits them and computes the files with git-style patches, or give `base`/`head`
        refs of existing commits; `files` overrides the computed file list (e.g. hand-written patches).
        A `head_repo` other than `repo` makes a fork pull request.
        """
        repo = self.repo(repo) if isinstance(repo, str) else repo
        head_repo = self.repo(head_repo) if isinstance(head_repo, str) else (head_repo or repo)
        if number is None:
            number = max([0, *repo.pulls]) + 1
        base_ref = base if base and base in repo.branches else repo.default_branch
        if base_files is not None:
            base_sha = repo.commit(base_files, branch=base_ref, message="base")
        elif base is not None:
            resolved = repo.resolve(base)
            if resolved is None:
                raise KeyError(f"{repo.full_name} has no ref {base!r}")
            base_sha = resolved
        else:
            resolved = repo.resolve(repo.default_branch)
            base_sha = resolved if resolved is not None else repo.commit({}, branch=base_ref, message="empty")
        head_ref = head_ref or (head if head and head in head_repo.branches else f"change-{number}")
        if head_files is not None:
            head_sha = head_repo.commit(head_files, branch=head_ref, parent=base_sha if head_repo is repo else None)
        elif head is not None:
            resolved = head_repo.resolve(head)
            if resolved is None:
                raise KeyError(f"{head_repo.full_name} has no ref {head!r}")
            head_sha = resolved
        else:
            raise ValueError("add_pull needs head_files or head")
        if head_repo is not repo:
            # GitHub keeps a fork's head commits readable in the base repository (refs/pull/N/head).
            repo.commits[head_sha] = head_repo.commits[head_sha]
            repo.blobs.update(head_repo.blobs)
            repo.trees.update(head_repo.trees)
        pull = Pull(
            repo=repo,
            number=number,
            id=self.ids.next("pull"),
            title=title,
            body=body,
            user=self.user(user),
            state=state,
            draft=draft,
            base_ref=base_ref,
            base_sha=base_sha,
            head_ref=head_ref,
            head_sha=head_sha,
            head_repo=head_repo,
            author_association=author_association,
            created_at=now(),
        )
        pull.files_by_sha[head_sha] = (
            files
            if files is not None
            else diff_files(repo.commits[base_sha].files, head_repo.commits[head_sha].files, renames)
        )
        repo.pulls[number] = pull
        return pull

    def push(
        self,
        pull: Pull,
        head_files: dict[str, FileContent],
        *,
        renames: dict[str, str] | None = None,
        files: list[PullFile] | None = None,
    ) -> str:
        """A new head commit on the pull request (what a `synchronize` event announces); returns its sha."""
        sha = pull.head_repo.commit(head_files, branch=pull.head_ref, parent=pull.head_sha)
        if pull.head_repo is not pull.repo:
            pull.repo.commits[sha] = pull.head_repo.commits[sha]
            pull.repo.blobs.update(pull.head_repo.blobs)
            pull.repo.trees.update(pull.head_repo.trees)
        pull.head_sha = sha
        pull.files_by_sha[sha] = (
            files
            if files is not None
            else diff_files(pull.repo.commits[pull.base_sha].files, pull.head_repo.commits[sha].files, renames)
        )
        for thread in self.threads.values():
            if thread.pull is pull:
                self._relocate(thread)
        return sha

    def _relocate(self, thread: Thread) -> None:
        """After a push, a thread whose line left the diff is outdated (GitHub then reports line null)."""
        f = next((f for f in thread.pull.files if f.filename == thread.path), None)
        if f is None or thread.line is None or FileDiff(f.patch).locate(thread.side, thread.line) is None:
            thread.line = None
            thread.start_line = None
            for c in thread.comments:
                c.line = None
                c.start_line = None
                c.position = None

    def set_role(self, repo: Repo | str, login: str, role: str) -> None:
        """A collaborator's role: admin, maintain, write, triage, read or none."""
        repo = self.repo(repo) if isinstance(repo, str) else repo
        assert role in ROLE_PERMISSION, role
        self.user(login)
        repo.roles[login] = role

    def add_issue_comment(
        self,
        pull: Pull,
        body: str,
        *,
        user: str = "contributor",
        author_association: str = "CONTRIBUTOR",
        user_type: str = "User",
    ) -> IssueComment:
        """A conversation comment on the pull request, e.g. `/recheck` (then build its webhook)."""
        t = now()
        c = IssueComment(
            self.ids.next("issue_comment"),
            pull.repo,
            pull.number,
            self.user(user, type=user_type),
            body,
            author_association,
            t,
            t,
        )
        self.issue_comments[c.id] = c
        return c

    def add_review_comment(
        self,
        pull: Pull,
        body: str,
        *,
        path: str | None = None,
        line: int | None = None,
        side: str = "RIGHT",
        in_reply_to: ReviewComment | int | None = None,
        user: str = "reviewer",
        author_association: str = "MEMBER",
    ) -> ReviewComment:
        """A human's review comment: a reply in an existing thread (in_reply_to), or a new thread at path:line."""
        who = self.user(user)
        if in_reply_to is not None:
            parent = in_reply_to if isinstance(in_reply_to, ReviewComment) else self.review_comments[in_reply_to]
            thread = parent.thread
            root = thread.comments[0]
            return self._new_comment(
                pull,
                thread,
                who,
                body,
                review_id=self._human_review(pull, who).id,
                commit_id=root.commit_id,
                position=root.position,
                diff_hunk=root.diff_hunk,
                author_association=author_association,
                in_reply_to=root.id,
            )
        assert path is not None and line is not None, "a new thread needs path and line"
        f = next(f for f in pull.files if f.filename == path)
        diff = FileDiff(f.patch)
        located = diff.locate(side, line)
        assert located is not None, f"{path}:{line} is not in the diff"
        thread = Thread(self.ids.next("thread"), pull, path, line, None, side, None, "line")
        self.threads[thread.id] = thread
        return self._new_comment(
            pull,
            thread,
            who,
            body,
            review_id=self._human_review(pull, who).id,
            commit_id=pull.head_sha,
            position=located[1].position,
            diff_hunk=diff.diff_hunk(*located),
            author_association=author_association,
        )

    def _human_review(self, pull: Pull, who: User) -> Review:
        rv = Review(self.ids.next("review"), pull, who, "", "COMMENTED", pull.head_sha, now())
        self.reviews[rv.id] = rv
        return rv

    def _new_comment(
        self,
        pull: Pull,
        thread: Thread,
        who: User,
        body: str,
        *,
        review_id: int,
        commit_id: str,
        position: int | None,
        diff_hunk: str,
        author_association: str,
        in_reply_to: int | None = None,
    ) -> ReviewComment:
        t = now()
        c = ReviewComment(
            id=self.ids.next("review_comment"),
            pull=pull,
            review_id=review_id,
            thread=thread,
            user=who,
            body=body,
            path=thread.path,
            commit_id=commit_id,
            line=thread.line,
            start_line=thread.start_line,
            side=thread.side,
            start_side=thread.start_side,
            position=position,
            diff_hunk=diff_hunk,
            subject_type=thread.subject_type,
            author_association=author_association,
            created_at=t,
            updated_at=t,
            in_reply_to_id=in_reply_to,
            original_line=thread.line,
            original_start_line=thread.start_line,
            original_position=position,
        )
        thread.comments.append(c)
        self.review_comments[c.id] = c
        self.reviews[review_id].comment_ids.append(c.id)
        return c

    # ------------------------------------------------------------------ inspection and control

    def inject(self, route: str, fault: Fault, times: int = 1) -> None:
        """Queue `fault` for the next `times` calls of a route: an operation id ("checks/create"),
        "METHOD /template" ("PATCH /repos/{owner}/{repo}/check-runs/{check_run_id}") or "*" (any route)."""
        key = self._route_key(route)
        for _ in range(times):
            self.faults[key].append(fault)

    def outage(self, fault: Fault | None = None) -> None:
        """From now on every API call fails with `fault` (default: 503, GitHub's "Service Unavailable"), until
        end_outage()."""
        self.outage_fault = fault or Fault.server_error(503)

    def end_outage(self) -> None:
        self.outage_fault = None

    def uninstall(self, installation_id: int) -> None:
        """The account removed the App: its token requests answer 404."""
        self.removed_installations.add(installation_id)

    def delete_repo(self, full_name: str) -> None:
        """The repository was deleted: every call for it answers 404."""
        self.removed_repos.add(full_name.lower())

    def _route_key(self, route: str) -> str:
        if route == "*" or route in self.spec.by_id:
            return route
        for op in self.spec.operations:
            if op.key == route:
                return op.operation_id
        raise KeyError(f"no such route in the API description: {route!r}")

    def calls(self, route: str | None = None) -> list[LoggedRequest]:
        """Logged requests, optionally of one route (operation id or "METHOD /template")."""
        if route is None:
            return list(self.requests)
        key = self._route_key(route)
        return [r for r in self.requests if r.operation == key]

    def set_rate_limit(
        self, remaining: int, *, reset_in: float = 3600, resource: str = "core", limit: int = 5000
    ) -> None:
        rl = self.rate_limits[resource]
        rl.limit, rl.remaining, rl.reset = limit, remaining, time.time() + reset_in

    def revoke_tokens(self) -> None:
        """Invalidate every installation token issued so far (as if GitHub revoked them)."""
        for token in self.tokens.values():
            token.revoked = True

    def clear_log(self) -> None:
        self.requests.clear()
        self.violations.clear()
        self.response_errors.clear()

    def node(self, node_id: str) -> Any:
        for table in (self.threads, self.review_comments):
            for obj in table.values():
                if obj.node_id == node_id:
                    return obj
        for repo in self.repos.values():
            if repo.node_id == node_id:
                return repo
            for pull in repo.pulls.values():
                if pull.node_id == node_id:
                    return pull
        for u in self.users.values():
            if u.node_id == node_id:
                return u
        return None

    def check_runs_for(self, repo: Repo, head_sha: str, name: str | None = None) -> list[CheckRun]:
        return [
            c
            for c in self.check_runs.values()
            if c.repo is repo and c.head_sha == head_sha and (name is None or c.name == name)
        ]

    def threads_of(self, pull: Pull) -> list[Thread]:
        return [t for t in self.threads.values() if t.pull is pull and t.comments]

    # ------------------------------------------------------------------ webhooks

    def pull_request_payload(
        self, pull: Pull, action: str = "opened", *, sender: str | None = None, before: str | None = None
    ) -> dict[str, Any]:
        return webhooks.pull_request_payload(self, pull, action, sender=sender, before=before)

    def issue_comment_payload(self, comment: IssueComment, action: str = "created") -> dict[str, Any]:
        return webhooks.issue_comment_payload(self, comment, action)

    def check_run_payload(
        self, run: CheckRun, action: str = "rerequested", *, sender: str = "maintainer", identifier: str | None = None
    ) -> dict[str, Any]:
        return webhooks.check_run_payload(self, run, action, sender=sender, identifier=identifier)

    def check_suite_payload(
        self, repo: Repo, head_sha: str, action: str = "rerequested", *, sender: str = "maintainer"
    ) -> dict[str, Any]:
        return webhooks.check_suite_payload(self, repo, head_sha, action, sender=sender)

    def delivery(self, event: str, payload: dict[str, Any], secret: str | None) -> webhooks.Delivery:
        """A signed delivery of `payload` (secret None: unsigned)."""
        return webhooks.Delivery(event, payload, secret, hook_target_id=self.app_id)

    # ------------------------------------------------------------------ server

    @property
    def app(self) -> web.Application:
        if self._app is None:
            self._app = web.Application(client_max_size=64 * 1024 * 1024)
            self._app.router.add_route("*", "/{tail:.*}", self._dispatch)
        return self._app

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> str:
        """Listen on host:port (0 = a free port) in the running loop; returns the base URL."""
        self._runner = web.AppRunner(self.app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        actual = self._runner.addresses[0][1]
        self.base_url = f"http://{host}:{actual}"
        return self.base_url

    async def close(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _dispatch(self, request: web.Request) -> web.StreamResponse:
        if request.path.startswith("/_fake/"):
            from .control import handle_control

            return await handle_control(self, request)
        page = await apps.handle_web(self, request)
        if page is not None:
            return page
        raw = await request.read()
        body: Any = None
        if raw:
            try:
                body = json.loads(raw)
            except ValueError:
                body = raw.decode("utf-8", "replace")
        log = LoggedRequest(request.method, request.path, dict(request.query), _redact(request.headers), body)
        self.requests.append(log)
        try:
            response = await self._process(request, raw, log)
        except ApiError as exc:
            response = self._error_response(request, log, exc)
        except Exception as exc:  # a bug in the fake: make it loud in the test, not a silent 500
            self.response_errors.append(f"fake crashed on {request.method} {request.path}: {exc!r}")
            raise
        log.status = response.status
        return response

    def _violation(self, kind: str, log: LoggedRequest, message: str) -> None:
        self.violations.append(Violation(kind, log.method, log.path, log.operation, message))

    def web_violation(self, where: str, message: str) -> None:
        """A request to one of GitHub's web pages (the manifest flow) that GitHub would refuse."""
        method, _, path = where.partition(" ")
        self.violations.append(Violation("manifest", method, path, None, message))

    def _error_response(self, request: web.Request, log: LoggedRequest, exc: ApiError) -> web.Response:
        op = self.spec.by_id.get(log.operation or "")
        if exc.violation:
            text = f"{exc.detail}: " if exc.detail else ""
            text += exc.message.replace("\n\n", " ") + (f" {exc.errors}" if exc.errors else "")
            self._violation(exc.violation, log, text)
        body: dict[str, Any] = {"message": exc.message}
        if exc.errors is not None:
            body["errors"] = exc.errors
        body["documentation_url"] = op.docs_url if op else "https://docs.github.com/rest"
        body["status"] = str(exc.status)
        log.response = body
        headers = dict(exc.headers)
        if request.path != "/graphql" and log.operation:
            headers.update(self.rate_limits["core"].headers())
        return web.json_response(body, status=exc.status, headers=headers, content_type="application/json")

    async def _process(self, request: web.Request, raw: bytes, log: LoggedRequest) -> web.StreamResponse:
        if not request.headers.get("User-Agent"):
            raise ApiError(
                403,
                "Request forbidden by administrative rules. Please make sure your request has a User-Agent header "
                "(https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required).",
                violation="user-agent",
            )
        raw_path = request.rel_url.raw_path
        alias_prefix = None
        alias_repo: Repo | None = None
        if raw_path.startswith("/repositories/"):
            # GitHub's Link headers point at /repositories/{id}/...: accept them as the /repos/ route.
            parts = raw_path.split("/", 3)
            alias_repo = next((r for r in self.repos.values() if str(r.id) == parts[2]), None)
            if alias_repo is None or len(parts) < 4:
                raise ApiError(404, "Not Found", violation="unknown-route")
            alias_prefix = f"/repositories/{alias_repo.id}"
            raw_path = f"/repos/{quote(alias_repo.owner.login)}/{quote(alias_repo.name)}/{parts[3]}"
        op, path_values, path_known = self.spec.match(request.method, raw_path)
        if op is None:
            why = "method not allowed on this path" if path_known else "no such route in the API description"
            raise ApiError(404, "Not Found", violation="unknown-route", detail=why)
        log.operation, log.template = op.operation_id, op.template
        query = dict(request.query)
        values, path_errors, query_errors, unknown = self.spec.check_params(op, path_values, query)
        if path_errors:
            raise ApiError(404, "Not Found", violation="invalid-path-param", errors=path_errors)
        for name in unknown:
            self._violation("unknown-query-param", log, f"{name!r} is not a parameter of {op.key}")
        if query_errors:
            raise ApiError(422, "Invalid request.\n\n" + "\n".join(query_errors), violation="invalid-query")
        body: Any = None
        if op.body_validator is not None:
            if raw:
                try:
                    body = json.loads(raw)
                except ValueError:
                    raise ApiError(400, "Problems parsing JSON", violation="invalid-json") from None
                if not request.content_type.startswith("application/json"):
                    self._violation("content-type", log, f"JSON body sent as {request.content_type!r}")
            elif op.body_required:
                raise ApiError(400, "Problems parsing JSON", violation="invalid-json")
            if body is not None or op.body_required:
                errors, extra = op.validate_body(body)
                if errors:
                    raise ApiError(422, "Invalid request.\n\n" + "\n".join(errors), violation="invalid-body")
                for text in extra:
                    self._violation("unknown-field", log, text)
        elif raw:
            self._violation("unexpected-body", log, f"{op.key} takes no request body")
        call = Call(request, op, values, query, body, self._api(request), log, alias_prefix=alias_prefix)
        resource = "graphql" if op.operation_id == "graphql/post" else "core"
        # These authenticate with the App's JWT (or, the manifest conversion, not at all): their handlers check.
        if op.operation_id not in APP_LEVEL_OPERATIONS:
            call.token = self._token(request, resource)
            self._check_rate_limit(call, resource)
            if "owner" in values and "repo" in values:
                call.repo = self._scoped_repo(call, f"{values['owner']}/{values['repo']}")
                needs = NEEDS.get(op.operation_id, [])
                if needs and not any(allows(call.token.permissions, p, lvl) for p, lvl in needs):
                    wanted = " or ".join(f"{p}: {lvl}" for p, lvl in needs)
                    raise ApiError(
                        403, "Resource not accessible by integration", violation="permission", detail=f"needs {wanted}"
                    )
        fault = self._next_fault(op)
        if fault is not None:
            log.fault = fault.label
            if fault.delay:
                await asyncio.sleep(fault.delay)
            if fault.drop and not fault.after:
                self._drop(request)
            if not fault.proceed and not fault.after:
                return self._fault_response(fault, log)
        response = await self._handlers[op.operation_id](call)
        if fault is not None and fault.after:
            if fault.drop:
                self._drop(request)
            return self._fault_response(fault, log)
        if resource == "core":
            for k, v in self.rate_limits["core"].headers().items():
                response.headers[k] = v
        return response

    @staticmethod
    def _drop(request: web.Request) -> None:
        if request.transport is not None:
            request.transport.close()
        raise asyncio.CancelledError  # aiohttp ends the request without writing an answer

    def _fault_response(self, fault: Fault, log: LoggedRequest) -> web.Response:
        body, content_type = (fault.body, JSON_TYPE) if fault.body is not None else default_body(fault.status)
        log.response = body
        headers = dict(fault.headers)
        if isinstance(body, str):
            return web.Response(
                status=fault.status, text=body, headers=headers, content_type=content_type.split(";")[0]
            )
        return web.json_response(body, status=fault.status, headers=headers)

    def _next_fault(self, op: Operation) -> Fault | None:
        if self.outage_fault is not None:
            return self.outage_fault
        for key in (op.operation_id, "*"):
            queue = self.faults.get(key)
            if queue:
                return queue.popleft()
        return None

    def _api(self, request: web.Request) -> str:
        return f"{request.scheme}://{request.host}"

    def _token(self, request: web.Request, resource: str) -> Token:
        header = request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        if not header:
            message = (
                "This endpoint requires you to be authenticated."
                if resource == "graphql"
                else "Requires authentication"
            )
            raise ApiError(401, message, violation="auth", detail="no Authorization header")
        if scheme.lower() not in ("token", "bearer"):
            raise ApiError(401, "Bad credentials", violation="auth", detail=f"scheme {scheme!r}")
        token = self.tokens.get(value.strip())
        if token is None:
            hint = "an App JWT where an installation token is needed" if value.count(".") == 2 else "unknown token"
            raise ApiError(401, "Bad credentials", violation="auth", detail=hint)
        if token.revoked:
            raise ApiError(401, "Bad credentials")  # the test revoked it: the App could not know
        if token.expires_at <= time.time():
            raise ApiError(
                401, "Bad credentials", violation="expired-token", detail="the App used a token after its expires_at"
            )
        token.uses += 1
        return token

    def _check_rate_limit(self, call: Call, resource: str) -> None:
        rl = self.rate_limits[resource]
        if rl.reset <= time.time():
            rl.remaining, rl.reset = rl.limit, time.time() + 3600
        if rl.remaining <= 0:
            assert call.token is not None
            raise ApiError(
                403,
                f"API rate limit exceeded for installation ID {call.token.installation_id}. If you reach out to "
                "GitHub Support for help, please include the request ID 0000:0000:000000:000000:00000000.",
                headers=rl.headers(),
            )
        rl.remaining -= 1

    def _scoped_repo(self, call: Call, full_name: str) -> Repo:
        if full_name.lower() in self.removed_repos:
            raise ApiError(404, "Not Found")
        repo = self.repos.get(full_name.lower())
        assert call.token is not None
        if repo is None:
            raise ApiError(404, "Not Found", violation="scope", detail=f"no repository {full_name} in the fake")
        token = call.token
        if repo.installation_id != token.installation_id or (
            token.repositories is not None and repo.full_name.lower() not in token.repositories
        ):
            raise ApiError(
                404,
                "Not Found",
                violation="scope",
                detail=f"{full_name} is not covered by installation {token.installation_id}",
            )
        return repo

    def _reply(self, call: Call, status: int, data: Any, headers: dict[str, str] | None = None) -> web.Response:
        call.log.response = data
        if self.validate_responses:
            for problem in call.op.validate_response(status, data):
                self.response_errors.append(f"{call.op.key} {status}: {problem}")
        return web.json_response(data, status=status, headers=headers or {})

    def _paginate(self, call: Call, items: list[Any]) -> tuple[list[Any], dict[str, str]]:
        page, per_page = call.page()
        last = max((len(items) + per_page - 1) // per_page, 1)
        chunk = items[(page - 1) * per_page : page * per_page]
        if last == 1:
            return chunk, {}
        assert call.repo is not None
        rest = call.request.rel_url.raw_path.split("/", 4 if call.alias_prefix is None else 3)[-1]
        path = f"{call.api}/repositories/{call.repo.id}/{rest}"

        def url(n: int) -> str:
            query = [(k, v) for k, v in call.query.items() if k != "page"] + [("page", str(n))]
            return f"<{path}?{urlencode(query)}>"

        links = []
        if page > 1:
            links.append(f'{url(min(page - 1, last))}; rel="prev"')
        if page < last:
            links.append(f'{url(page + 1)}; rel="next"')
            links.append(f'{url(last)}; rel="last"')
        if page > 1:
            links.append(f'{url(1)}; rel="first"')
        return chunk, {"Link": ", ".join(links)}

    def _pull(self, call: Call, number: int) -> Pull:
        assert call.repo is not None
        pull = call.repo.pulls.get(number)
        if pull is None:
            raise ApiError(404, "Not Found")
        return pull

    def _commit_sha(self, repo: Repo, ref: str, what: str = "ref") -> str:
        sha = repo.resolve(ref)
        if sha is None:
            raise ApiError(404, f"No commit found for the {what} {ref}")
        return sha

    def integration(self, api: str) -> dict[str, Any]:
        return render.integration(api, self.app_id, self.app_slug, self.app_owner)

    # ------------------------------------------------------------------ handlers: auth

    def _check_app_jwt(self, call: Call) -> None:
        header = call.request.headers.get("Authorization", "")
        scheme, _, value = header.partition(" ")
        if not header:
            raise ApiError(
                401,
                "A JSON web token could not be decoded",
                violation="auth",
                detail=f"no Authorization header on {call.op.operation_id} (it needs the App's JWT)",
            )
        if scheme.lower() != "bearer":
            raise ApiError(
                401, "A JSON web token could not be decoded", violation="auth", detail=f"scheme {scheme!r}, need Bearer"
            )
        problem = check_app_jwt(value.strip(), self.public_key, self.app_id)
        if problem is not None:
            raise ApiError(401, problem, violation="auth", detail=f"App JWT: {problem}")

    async def _list_installations(self, call: Call) -> web.StreamResponse:
        self._check_app_jwt(call)
        items = [render.installation(call.api, i, self.app_id, self.app_slug) for i in self.installations.values()]
        page, per_page = call.page()
        return self._reply(call, 200, items[(page - 1) * per_page : page * per_page])

    async def _create_from_manifest(self, call: Call) -> web.StreamResponse:
        if call.request.headers.get("Authorization"):
            # GitHub needs no authentication here; a token sent along would be one the App should not have.
            self._violation("auth", call.log, "the manifest conversion takes no Authorization header")
        posted = apps.take_code(self.manifest_flow, call.params["code"])
        if posted is None:
            raise ApiError(404, "Not Found")
        keys = generate_key_pair()
        manifest = posted.manifest
        app_id = self.ids.next("app")
        slug = apps.slugify(str(manifest.get("name", "app")))
        created = apps.CreatedApp(
            app_id,
            slug,
            str(manifest.get("name", slug)),
            posted.account,
            manifest,
            keys.private_pem,
            secrets.token_hex(20),
            secrets.token_hex(20),
        )
        self.manifest_flow.created.append(created)
        # From now on the fake is this App: its JWTs, its bot user, its owner.
        self.app_id, self.public_key, self.app_slug = app_id, keys.public_pem, slug
        self.bot = self.user(f"{slug}[bot]", type="Bot")
        self.bot.app_slug = slug
        self.app_owner = self.user(posted.account, type=posted.account_type)
        web_base = f"{call.request.scheme}://{call.request.host}"
        data = render.integration(call.api, app_id, slug, self.app_owner)
        data.update(
            name=created.name,
            description=str(manifest.get("description", "")),
            external_url=str(manifest.get("url", "")),
            html_url=f"{web_base}/apps/{slug}",
            permissions=dict(manifest.get("default_permissions") or {}),
            events=list(manifest.get("default_events") or []),
            client_secret=created.client_secret,
            webhook_secret=created.webhook_secret,
            pem=created.private_pem,
        )
        return self._reply(call, 201, data)

    async def _create_token(self, call: Call) -> web.StreamResponse:
        self._check_app_jwt(call)
        if call.params["installation_id"] in self.removed_installations:
            raise ApiError(404, "Not Found")
        inst = self.installations.get(call.params["installation_id"])
        if inst is None:
            raise ApiError(404, "Not Found", violation="scope", detail="no such installation")
        body = call.body or {}
        installed = {r.full_name.lower() for r in self.repos.values() if r.installation_id == inst.id}
        repos: frozenset[str] | None = None
        names = body.get("repositories")
        ids = body.get("repository_ids")
        if names is not None or ids is not None:
            wanted = {f"{inst.account.login}/{n}".lower() for n in names or []}
            wanted |= {r.full_name.lower() for r in self.repos.values() if r.id in set(ids or [])}
            if not wanted <= installed:
                raise ApiError(
                    422,
                    "There is at least one repository that does not exist or is not accessible to the parent "
                    "installation.",
                    violation="scope",
                    detail="token asked for repositories outside the installation",
                )
            repos = frozenset(wanted)
        permissions = dict(inst.permissions)
        if body.get("permissions"):
            for perm, level in body["permissions"].items():
                if not allows(inst.permissions, perm, level):
                    raise ApiError(
                        422,
                        "The permissions requested are not granted to this installation.",
                        violation="permission",
                        detail=f"token asked for {perm}: {level}",
                    )
            permissions = dict(body["permissions"])
        token = Token(new_token_value(), inst.id, time.time() + self.token_lifetime, repos, permissions)
        self.tokens[token.value] = token
        data = {
            "token": token.value,
            "expires_at": iso(token.expires_at),
            "permissions": permissions,
            "repository_selection": "selected" if repos is not None or inst.repositories is not None else "all",
        }
        return self._reply(call, 201, data)

    # ------------------------------------------------------------------ handlers: pulls and files

    async def _get_pull(self, call: Call) -> web.StreamResponse:
        pull = self._pull(call, call.params["pull_number"])
        accept = call.request.headers.get("Accept", "")
        if "diff" in accept:
            if pull.diff_too_large:
                raise ApiError(
                    406, DIFF_TOO_LARGE, errors=[{"resource": "PullRequest", "field": "diff", "code": "too_large"}]
                )
            text = render.unified_diff(pull)
            call.log.response = text
            return web.Response(text=text, content_type="application/vnd.github.diff", charset="utf-8")
        return self._reply(call, 200, render.pull(call.api, pull))

    async def _list_files(self, call: Call) -> web.StreamResponse:
        pull = self._pull(call, call.params["pull_number"])
        assert call.repo is not None
        files = [render.pull_file(call.api, pull.head_repo, pull.head_sha, f) for f in pull.files[:MAX_PULL_FILES]]
        chunk, headers = self._paginate(call, files)
        return self._reply(call, 200, chunk, headers)

    # ------------------------------------------------------------------ handlers: git data

    async def _get_content(self, call: Call) -> web.StreamResponse:
        repo = call.repo
        assert repo is not None
        ref = call.params.get("ref") or repo.default_branch
        sha = self._commit_sha(repo, ref)
        commit = repo.commits[sha]
        path = call.params["path"].strip("/")
        if path in commit.files:
            data = commit.files[path]
            accept = call.request.headers.get("Accept", "")
            if "raw" in accept:
                call.log.response = "<raw>"
                return web.Response(body=data, content_type="application/vnd.github.raw", charset="utf-8")
            entry = self._entry(repo, call.api, sha, path, "file", data)
            if len(data) > MAX_CONTENTS_SIZE:
                entry.update(content="", encoding="none")
            else:
                entry.update(content=render.b64(data), encoding="base64")
            return self._reply(call, 200, entry)
        prefix = path + "/"
        children: dict[str, Any] = {}
        for name in sorted(commit.files):
            if name.startswith(prefix):
                child = name[len(prefix) :].split("/", 1)[0]
                full = prefix + child
                if child not in children:
                    kind = "file" if full in commit.files else "dir"
                    children[child] = self._entry(repo, call.api, sha, full, kind, commit.files.get(full, b""))
        if children:
            return self._reply(call, 200, list(children.values()))
        raise ApiError(404, "Not Found")

    def _entry(self, repo: Repo, api: str, ref: str, path: str, kind: str, data: bytes) -> dict[str, Any]:
        from .state import git_sha

        sha = git_sha("blob", data) if kind == "file" else self._tree_sha_of(repo, ref, path)
        url = f"{api}/repos/{repo.full_name}/contents/{quote(path)}?ref={ref}"
        git_url = f"{api}/repos/{repo.full_name}/git/{'blobs' if kind == 'file' else 'trees'}/{sha}"
        html = f"https://github.com/{repo.full_name}/{'blob' if kind == 'file' else 'tree'}/{ref}/{quote(path)}"
        download = f"https://raw.githubusercontent.com/{repo.full_name}/{ref}/{quote(path)}" if kind == "file" else None
        return {
            "type": kind,
            "size": len(data) if kind == "file" else 0,
            "name": path.rsplit("/", 1)[-1],
            "path": path,
            "sha": sha,
            "url": url,
            "git_url": git_url,
            "html_url": html,
            "download_url": download,
            "_links": {"self": url, "git": git_url, "html": html},
        }

    def _tree_sha_of(self, repo: Repo, commit_sha: str, path: str) -> str:
        entries = repo.trees[repo.commits[commit_sha].tree_sha]
        for part in path.split("/"):
            found = next(e for e in entries if e.name == part)
            entries = repo.trees.get(found.sha, [])
        return found.sha

    async def _get_tree(self, call: Call) -> web.StreamResponse:
        repo = call.repo
        assert repo is not None
        key = call.params["tree_sha"]
        tree_sha = key if key in repo.trees else None
        if tree_sha is None:
            commit_sha = repo.resolve(key)
            if commit_sha is None:
                raise ApiError(404, "Not Found")
            tree_sha = repo.commits[commit_sha].tree_sha
        # GitHub: any value of `recursive` (even "false" or "0") means recursive; only absence means not.
        recursive = "recursive" in call.query
        out: list[dict[str, Any]] = []

        def walk(sha: str, prefix: str) -> None:
            for e in repo.trees[sha]:
                path = prefix + e.name
                item: dict[str, Any] = {"path": path, "mode": e.mode, "type": e.type, "sha": e.sha}
                kind = "blobs" if e.type == "blob" else "trees"
                if e.type == "blob":
                    item["size"] = e.size
                item["url"] = f"{call.api}/repos/{repo.full_name}/git/{kind}/{e.sha}"
                out.append(item)
                if recursive and e.type == "tree":
                    walk(e.sha, path + "/")

        walk(tree_sha, "")
        data = {
            "sha": tree_sha,
            "url": f"{call.api}/repos/{repo.full_name}/git/trees/{tree_sha}",
            "tree": out[:MAX_TREE_ENTRIES],
            "truncated": len(out) > MAX_TREE_ENTRIES,
        }
        return self._reply(call, 200, data)

    async def _get_blob(self, call: Call) -> web.StreamResponse:
        repo = call.repo
        assert repo is not None
        sha = call.params["file_sha"]
        data = repo.blobs.get(sha)
        if data is None:
            raise ApiError(404, "Not Found")
        return self._reply(
            call,
            200,
            {
                "sha": sha,
                "node_id": f"B_kwDO{base64.urlsafe_b64encode(sha.encode()).decode()[:20]}",
                "size": len(data),
                "url": f"{call.api}/repos/{repo.full_name}/git/blobs/{sha}",
                "content": render.b64(data),
                "encoding": "base64",
            },
        )

    # ------------------------------------------------------------------ handlers: check runs

    def _check_output(self, output: dict[str, Any] | None) -> None:
        for i, a in enumerate((output or {}).get("annotations") or []):
            where = f"output.annotations[{i}]"
            if a["start_line"] > a["end_line"]:
                raise ApiError(422, f"Invalid request.\n\n{where}: start_line is after end_line.", violation="semantic")
            if ("start_column" in a or "end_column" in a) and a["start_line"] != a["end_line"]:
                raise ApiError(
                    422,
                    f"Invalid request.\n\n{where}: start_column and end_column are only allowed on a single line.",
                    violation="semantic",
                )
            if len(a.get("title") or "") > MAX_ANNOTATION_TITLE:
                raise ApiError(
                    422, f"Invalid request.\n\n{where}: title is longer than 255 characters.", violation="semantic"
                )
            for key in ("message", "raw_details"):
                if len((a.get(key) or "").encode()) > MAX_ANNOTATION_TEXT:
                    raise ApiError(
                        422, f"Invalid request.\n\n{where}: {key} is larger than 64 KB.", violation="semantic"
                    )

    @staticmethod
    def _completion(body: dict[str, Any], current_status: str | None) -> tuple[str | None, str | None]:
        """(status, conclusion) after applying body, or raise GitHub's 422."""
        status = body.get("status")
        conclusion = body.get("conclusion")
        if conclusion is not None:
            status = "completed"  # GitHub: providing a conclusion completes the run
        if status == "completed" and conclusion is None:
            raise ApiError(
                422,
                'Invalid request.\n\n"conclusion" wasn\'t supplied.',
                violation="semantic",
                detail="completed without conclusion",
            )
        if body.get("completed_at") and conclusion is None:
            raise ApiError(
                422,
                'Invalid request.\n\n"conclusion" wasn\'t supplied.',
                violation="semantic",
                detail="completed_at without conclusion",
            )
        if conclusion == "stale":
            raise ApiError(422, "Invalid request.\n\nconclusion stale can only be set by GitHub.", violation="semantic")
        return status or current_status, conclusion

    async def _create_check_run(self, call: Call) -> web.StreamResponse:
        repo = call.repo
        assert repo is not None
        body = call.body
        if body["head_sha"] not in repo.commits:
            raise ApiError(
                422, f"No commit found for SHA: {body['head_sha']}", violation="semantic", detail="unknown head_sha"
            )
        status, conclusion = self._completion(body, "queued")
        self._check_output(body.get("output"))
        stamp = iso(now())
        run = CheckRun(
            id=self.ids.next("check_run"),
            repo=repo,
            app_id=self.app_id,
            head_sha=body["head_sha"],
            name=body["name"],
            status=status or "queued",
            conclusion=conclusion,
            started_at=body.get("started_at") or stamp,
            completed_at=(body.get("completed_at") or stamp) if status == "completed" else None,
            details_url=body.get("details_url"),
            external_id=body.get("external_id"),
            output={k: v for k, v in (body.get("output") or {}).items() if k in ("title", "summary", "text")},
            annotations=list((body.get("output") or {}).get("annotations") or []),
            actions=list(body.get("actions") or []),
            check_suite_id=self._suite_id(repo, body["head_sha"]),
        )
        run.history.append(("create", body))
        self.check_runs[run.id] = run
        return self._reply(call, 201, self.render_check_run(call.api, run))

    def _suite_id(self, repo: Repo, head_sha: str) -> int:
        for run in self.check_runs.values():
            if run.repo is repo and run.head_sha == head_sha and run.app_id == self.app_id:
                return run.check_suite_id
        return self.ids.next("check_suite")

    def render_check_run(self, api: str, run: CheckRun) -> dict[str, Any]:
        return render.check_run(api, run, self.integration(api), self.pulls_for_checks(run.repo, run.head_sha))

    def pulls_for_checks(self, repo: Repo, head_sha: str) -> list[Pull]:
        """Open pull requests a check on head_sha belongs to. Like GitHub, never fork pull requests."""
        return [
            p for p in repo.pulls.values() if p.head_sha == head_sha and p.state == "open" and p.head_repo is p.repo
        ]

    async def _update_check_run(self, call: Call) -> web.StreamResponse:
        repo = call.repo
        assert repo is not None
        run = self.check_runs.get(call.params["check_run_id"])
        if run is None or run.repo is not repo:
            raise ApiError(404, "Not Found")
        if run.app_id != self.app_id:
            raise ApiError(
                403,
                f"Invalid app_id `{self.app_id}` - check run can only be modified by its creator.",
                violation="semantic",
                detail="updating another App's check run",
            )
        body = call.body
        status, conclusion = self._completion(body, run.status)
        self._check_output(body.get("output"))
        if "name" in body:
            run.name = body["name"]
        for key in ("details_url", "external_id", "started_at"):
            if key in body:
                setattr(run, key, body[key])
        if status:
            run.status = status
        if conclusion:
            run.conclusion = conclusion
            run.completed_at = body.get("completed_at") or iso(now())
        output = body.get("output")
        if output:
            run.output.update({k: v for k, v in output.items() if k in ("title", "summary", "text")})
            # GitHub appends annotations on every update.
            run.annotations.extend(output.get("annotations") or [])
        if "actions" in body:
            run.actions = list(body["actions"])
        run.history.append(("update", body))
        return self._reply(call, 200, self.render_check_run(call.api, run))

    async def _list_check_runs(self, call: Call) -> web.StreamResponse:
        repo = call.repo
        assert repo is not None
        sha = self._commit_sha(repo, call.params["ref"])
        runs = [r for r in self.check_runs.values() if r.repo is repo and r.head_sha == sha]
        p = call.params
        if "check_name" in p:
            runs = [r for r in runs if r.name == p["check_name"]]
        if "status" in p:
            runs = [r for r in runs if r.status == p["status"]]
        if "app_id" in p:
            runs = [r for r in runs if r.app_id == p["app_id"]]
        runs.sort(key=lambda r: -r.id)
        if p.get("filter", "latest") == "latest":
            seen: set[str] = set()
            latest = []
            for r in runs:
                if r.name not in seen:
                    seen.add(r.name)
                    latest.append(r)
            runs = latest
        chunk, headers = self._paginate(call, runs)
        data = {"total_count": len(runs), "check_runs": [self.render_check_run(call.api, r) for r in chunk]}
        return self._reply(call, 200, data, headers)

    # ------------------------------------------------------------------ handlers: reviews

    async def _create_review(self, call: Call) -> web.StreamResponse:
        pull = self._pull(call, call.params["pull_number"])
        body = call.body or {}
        commit_id = body.get("commit_id") or pull.head_sha
        files = pull.files_by_sha.get(commit_id)
        if files is None:
            raise ApiError(
                422,
                "Unprocessable Entity",
                errors=["Commit is not part of the pull request"],
                violation="semantic",
                detail="review commit_id is not a head of this pull request",
            )
        event = body.get("event")
        text = body.get("body") or ""
        comments = body.get("comments") or []
        if event in ("REQUEST_CHANGES", "COMMENT") and not text and not comments:
            raise ApiError(
                422,
                "Unprocessable Entity",
                errors=[f"Body is required for the {event} event"],
                violation="semantic",
                detail="empty review",
            )
        self._check_body_length(text)
        placed = [self._place(files, i, c) for i, c in enumerate(comments)]
        state = {"APPROVE": "APPROVED", "REQUEST_CHANGES": "CHANGES_REQUESTED", "COMMENT": "COMMENTED"}.get(
            event or "", "PENDING"
        )
        rv = Review(
            self.ids.next("review"), pull, self.bot, text, state, commit_id, None if state == "PENDING" else now()
        )
        self.reviews[rv.id] = rv
        for c, (diff, hunk_index, dl, start) in zip(comments, placed, strict=True):
            side = c.get("side") or ("RIGHT" if "line" in c else None)
            if dl is None:  # a file-level comment
                thread = Thread(self.ids.next("thread"), pull, c["path"], None, None, "RIGHT", None, "file")
            else:
                line = c.get("line") or (dl.new if dl.kind != "-" else dl.old)
                side = side or ("LEFT" if dl.kind == "-" else "RIGHT")
                start_side = (c.get("start_side") or side) if start is not None else None
                thread = Thread(self.ids.next("thread"), pull, c["path"], line, start, side, start_side, "line")
            self.threads[thread.id] = thread
            self._new_comment(
                pull,
                thread,
                self.bot,
                c["body"],
                review_id=rv.id,
                commit_id=commit_id,
                position=dl.position if dl else None,
                diff_hunk=diff.diff_hunk(hunk_index, dl) if dl else "",
                author_association="NONE",
            )
        return self._reply(call, 200, render.review(call.api, rv))

    def _check_body_length(self, text: str) -> None:
        if len(text) > MAX_BODY:
            raise ApiError(
                422,
                "Validation Failed",
                errors=[
                    {
                        "resource": "IssueComment",
                        "code": "custom",
                        "field": "data",
                        "message": f"Body is too long (maximum is {MAX_BODY} characters)",
                    }
                ],
                violation="semantic",
                detail="body too long",
            )

    def _place(self, files: list[PullFile], index: int, c: dict[str, Any]) -> tuple[FileDiff, int, Any, int | None]:
        """Where one review comment lands: (diff, hunk index, diff line, start line); 422 when outside the diff."""
        self._check_body_length(c.get("body") or "")
        f = next((f for f in files if f.filename == c["path"]), None)
        where = f"comments[{index}] on {c['path']}"
        if f is None:
            raise ApiError(
                422,
                "Unprocessable Entity",
                errors=["Path could not be resolved"],
                violation="semantic",
                detail=f"{where} is not a file of the pull request",
            )
        diff = FileDiff(f.patch)
        if "line" in c and "position" in c:
            raise ApiError(
                422,
                "Unprocessable Entity",
                errors=["Use either position or line, not both"],
                violation="semantic",
                detail=f"{where} has both position and line",
            )
        if "position" in c:
            located = diff.at_position(c["position"])
            if located is None:
                raise ApiError(
                    422,
                    "Unprocessable Entity",
                    errors=["Pull request review thread position is invalid"],
                    violation="semantic",
                    detail=f"{where} position {c['position']} is outside the diff",
                )
            return diff, located[0], located[1], None
        if "line" not in c:
            raise ApiError(
                422,
                "Unprocessable Entity",
                errors=["Pull request review thread line is required"],
                violation="semantic",
                detail=f"{where} has neither line nor position",
            )
        side = c.get("side", "RIGHT")
        start_side = c.get("start_side", side)
        if side not in ("LEFT", "RIGHT") or start_side not in ("LEFT", "RIGHT"):
            raise ApiError(
                422,
                "Unprocessable Entity",
                errors=["Side must be LEFT or RIGHT"],
                violation="semantic",
                detail=f"{where} side must be LEFT or RIGHT",
            )
        located = diff.locate(side, c["line"])
        if located is None:
            raise ApiError(
                422,
                "Unprocessable Entity",
                errors=[
                    "Pull request review thread line must be part of the diff and "
                    "Pull request review thread diff hunk can't be blank"
                ],
                violation="semantic",
                detail=f"{where}:{c['line']} {side} is outside the diff",
            )
        start = c.get("start_line")
        if start is not None:
            begin = diff.locate(start_side, start)
            if start >= c["line"] and start_side == side:
                raise ApiError(
                    422,
                    "Unprocessable Entity",
                    errors=["Pull request review thread start line must precede the end line."],
                    violation="semantic",
                    detail=f"{where} start_line {start} is not before line {c['line']}",
                )
            if begin is None or begin[0] != located[0]:
                raise ApiError(
                    422,
                    "Unprocessable Entity",
                    errors=["Pull request review thread start line must be part of the same hunk as the line."],
                    violation="semantic",
                    detail=f"{where}:{start}-{c['line']} spans outside one hunk",
                )
        return diff, located[0], located[1], start

    async def _list_review_comments(self, call: Call) -> web.StreamResponse:
        pull = self._pull(call, call.params["pull_number"])
        comments = [
            c for c in self.review_comments.values() if c.pull is pull and self.reviews[c.review_id].state != "PENDING"
        ]
        key = (lambda c: c.updated_at) if call.params.get("sort") == "updated" else (lambda c: c.created_at)
        comments.sort(key=lambda c: (key(c), c.id), reverse=call.params.get("direction") == "desc")
        since = call.params.get("since")
        if since:
            comments = [c for c in comments if iso(c.updated_at) >= since]
        chunk, headers = self._paginate(call, comments)
        return self._reply(call, 200, [render.review_comment(call.api, c) for c in chunk], headers)

    def _own_review_comment(self, call: Call) -> ReviewComment:
        c = self.review_comments.get(call.params["comment_id"])
        if c is None or c.pull.repo is not call.repo:
            raise ApiError(404, "Not Found")
        if c.user is not self.bot:
            self._violation("foreign-comment", call.log, f"the App touched {c.user.login}'s review comment {c.id}")
        return c

    async def _update_review_comment(self, call: Call) -> web.StreamResponse:
        c = self._own_review_comment(call)
        self._check_body_length(call.body["body"])
        c.body = call.body["body"]
        c.updated_at = now()
        return self._reply(call, 200, render.review_comment(call.api, c))

    async def _delete_review_comment(self, call: Call) -> web.StreamResponse:
        c = self._own_review_comment(call)
        del self.review_comments[c.id]
        c.thread.comments.remove(c)
        if not c.thread.comments:
            del self.threads[c.thread.id]
        call.log.response = None
        return web.Response(status=204)

    # ------------------------------------------------------------------ handlers: conversation

    async def _create_issue_comment(self, call: Call) -> web.StreamResponse:
        repo = call.repo
        assert repo is not None
        number = call.params["issue_number"]
        if number not in repo.pulls:
            raise ApiError(404, "Not Found")
        text = call.body["body"]
        self._check_body_length(text)
        t = now()
        c = IssueComment(self.ids.next("issue_comment"), repo, number, self.bot, text, "NONE", t, t)
        self.issue_comments[c.id] = c
        data = render.issue_comment(call.api, c, [], self.integration(call.api))
        return self._reply(call, 201, data, {"Location": data["url"]})

    async def _create_reaction(self, call: Call) -> web.StreamResponse:
        c = self.issue_comments.get(call.params["comment_id"])
        if c is None or c.repo is not call.repo:
            raise ApiError(404, "Not Found")
        content = call.body["content"]
        for r in self.reactions:
            if r.comment is c and r.user is self.bot and r.content == content:
                return self._reply(call, 200, render.reaction(call.api, r))
        r = Reaction(self.ids.next("reaction"), c, self.bot, content, now())
        self.reactions.append(r)
        return self._reply(call, 201, render.reaction(call.api, r))

    async def _get_permission(self, call: Call) -> web.StreamResponse:
        repo = call.repo
        assert repo is not None
        login = call.params["username"]
        u = self.users.get(login)
        if u is None:
            raise ApiError(404, f"{login} is not a user")
        role = repo.roles.get(login) or ("admin" if login == repo.owner.login else ("none" if repo.private else "read"))
        permission = ROLE_PERMISSION[role]
        levels = ["pull", "triage", "push", "maintain", "admin"]
        rank = {"none": 0, "read": 1, "triage": 2, "write": 3, "maintain": 4, "admin": 5}[role]
        collaborator = render.user(call.api, u)
        collaborator["permissions"] = {name: rank > i for i, name in enumerate(levels)}
        collaborator["role_name"] = role
        data = {"permission": permission, "role_name": role, "user": collaborator}
        return self._reply(call, 200, data)

    # ------------------------------------------------------------------ handlers: GraphQL

    async def _graphql(self, call: Call) -> web.StreamResponse:
        token = call.token
        assert token is not None
        inst = self.installations[token.installation_id]
        ctx = graphql_api.Context(self, call.api, self.bot, token.repositories, inst.id, token.permissions)
        result = graphql_api.run(ctx, call.body["query"], call.body.get("variables"), call.body.get("operationName"))
        for problem in ctx.problems:
            self._violation("graphql", call.log, problem)
        call.log.response = result
        return web.json_response(result, headers=self.rate_limits["graphql"].headers())
