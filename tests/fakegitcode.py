"""A fake GitCode built from its v5 API documentation (docs.gitcode.com, mirrored in Trenza1ore/GitCode-API's
docs/rest_api/): the paths the App calls, answers shaped as the docs' examples, a token checked on every call,
and signed `Merge Request Hook` / `Note Hook` deliveries shaped as the webhook pages' field tables (GitLab's
shape where those tables stop). It records every request, resolves each inline comment's `position` to the head
line it stands on (its own reading of the diff, independent of the App's), and can fail routes on demand.
"""

from __future__ import annotations

import base64
import difflib
import hashlib
import hmac
import itertools
import json
import uuid
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.fakegithub.state import git_sha

BOT_LOGIN = "npu-review-bot"
PER_PAGE_MAX = 100


@dataclass
class Comment:
    id: str
    body: str
    login: str
    path: str | None = None
    position: int | None = None
    line: int | None = None  # the head line the position stands on (None: a merge request comment)
    discussion_id: str = ""
    in_reply_to_id: str | None = None


@dataclass
class MergeRequest:
    repo: str
    number: int
    base: dict[str, str]
    head: dict[str, str]
    title: str = "[npu] docker: add a package"
    author: str = "contributor"
    labels: list[str] = field(default_factory=list)
    comments: list[Comment] = field(default_factory=list)
    too_large: set[str] = field(default_factory=set)

    @property
    def base_sha(self) -> str:
        return tree_sha(self.base)

    @property
    def head_sha(self) -> str:
        return tree_sha(self.head)


@dataclass
class Logged:
    method: str
    path: str
    query: dict[str, str]
    body: Any
    status: int = 0


def tree_sha(files: dict[str, str]) -> str:
    """A commit id for a set of files (the fake keeps one commit per distinct content)."""
    return hashlib.sha1(json.dumps(sorted(files.items())).encode()).hexdigest()


def file_diff(old: str | None, new: str | None) -> str:
    """The `patch.diff` of one file: unified hunks with three lines of context, no file header."""
    a = (old or "").splitlines(keepends=True)
    b = (new or "").splitlines(keepends=True)
    lines = list(difflib.unified_diff(a, b, n=3))[2:]
    return "".join(x if x.endswith("\n") else x + "\n" for x in lines)


def position_line(diff: str, position: int) -> int | None:
    """The head line at `position` (1 = the line after the first hunk header; later headers count), None when
    the position is past the diff, on a header or on a removed line."""
    count = 0
    new = 0
    for i, text in enumerate(diff.splitlines()):
        if text.startswith("@@"):
            new = int(text.split("+")[1].split(",")[0].split(" ")[0])
            if i == 0:
                continue
            count += 1
            if count == position:
                return None
            continue
        count += 1
        if text.startswith("-"):
            if count == position:
                return None
            continue
        if count == position:
            return new
        new += 1
    return None


class FakeGitCode:
    def __init__(self, token: str = "gitcode-test-token") -> None:
        self.token = token
        self.repos: dict[str, dict[int, MergeRequest]] = {}
        self.commits: dict[str, dict[str, str]] = {}  # sha -> files
        self.members: dict[tuple[str, str], str] = {}  # (repo, login) -> permission
        self.hooks: list[dict[str, Any]] = []
        self.requests: list[Logged] = []
        self.faults: list[tuple[str, str, int, int]] = []  # (method, path suffix, status, times left)
        self._ids = itertools.count(1486600)
        self.base_url = ""
        self.app = web.Application()
        self.app.router.add_route("*", "/api/v5/{tail:.*}", self._handle)

    # -- seeding ------------------------------------------------------------------------------------------
    def add_merge_request(
        self, repo: str, base: dict[str, str], head: dict[str, str], number: int = 1, too_large: set[str] = frozenset()
    ) -> MergeRequest:
        mr = MergeRequest(repo, number, dict(base), dict(head), too_large=set(too_large))
        self.repos.setdefault(repo, {})[number] = mr
        self.commits[mr.base_sha] = mr.base
        self.commits[mr.head_sha] = mr.head
        return mr

    def push(self, mr: MergeRequest, head: dict[str, str]) -> None:
        mr.head = dict(head)
        self.commits[mr.head_sha] = mr.head

    def reply(self, mr: MergeRequest, to: Comment, body: str, login: str = "maintainer") -> Comment:
        c = Comment(str(next(self._ids)), body, login, to.path, to.position, to.line, to.discussion_id)
        mr.comments.append(c)
        return c

    def fail(self, method: str, suffix: str, status: int, times: int = 1) -> None:
        self.faults.append((method, suffix, status, times))

    def calls(self, method: str, suffix: str = "") -> list[Logged]:
        return [r for r in self.requests if r.method == method and r.path.endswith(suffix)]

    def bot_comments(self, mr: MergeRequest) -> list[Comment]:
        return [c for c in mr.comments if c.login == BOT_LOGIN]

    # -- deliveries ---------------------------------------------------------------------------------------
    def project(self, repo: str) -> dict[str, Any]:
        owner, name = repo.split("/")
        return {
            "id": 282463,
            "name": name,
            "web_url": f"https://gitcode.com/{repo}",
            "git_http_url": f"https://gitcode.com/{repo}.git",
            "git_ssh_url": f"git@gitcode.com:{repo}.git",
            "namespace": owner,
            "visibility_level": 1,
            "path_with_namespace": repo,
            "default_branch": "main",
        }

    def merge_request_hook(self, mr: MergeRequest, action: str = "open") -> dict[str, Any]:
        """Shaped as "Pull Request Event" (webhook-stepup/merge-request-events): its field table, in order."""
        return {
            "produce_random_id": uuid.uuid4().hex,
            "event_type": "merge_request",
            "object_kind": "merge_request",
            "git_branch": "feature",
            "git_commit_no": mr.head_sha,
            "git_target_branch_commit_no": mr.base_sha,
            "manual_build": False,
            "virtual_merge_build": False,
            "uuid": str(uuid.uuid4()),
            "labels": [{"title": name} for name in mr.labels],
            "issues": [],
            "user": {"id": 708, "name": mr.author, "username": mr.author},
            "project": self.project(mr.repo),
            "object_attributes": {
                "id": 191970 + mr.number,
                "iid": mr.number,
                "title": mr.title,
                "description": "",
                "state": "opened",
                "created_at": "2025-10-09T10:00:00+08:00",
                "updated_at": "2025-10-09T10:00:00+08:00",
                "action": action,
                "work_in_progress": False,
                "merge_status": "unchecked",
                "merge_when_pipeline_succeeds": False,
                "source_branch": "feature",
                "target_branch": "main",
                "source_project_id": 282463,
                "target_project_id": 282463,
                "author_id": 708,
                "url": f"https://gitcode.com/{mr.repo}/merge_requests/{mr.number}",
                "need_review": True,
                "need_test": False,
                "conflict": False,
                "last_commit": {"id": mr.head_sha},
            },
        }

    def note_hook(self, mr: MergeRequest, note: str, login: str) -> dict[str, Any]:
        """Shaped as "Note Event" (webhook-stepup/note-events): its field table; `merge_request` as GitLab's."""
        return {
            "object_kind": "note",
            "event_type": "note",
            "user": {"id": 303745, "name": login, "username": login, "avatar_url": "", "email": ""},
            "project_id": 282463,
            "project": self.project(mr.repo),
            "object_attributes": {
                "author_id": 303745,
                "change_position": None,
                "created_at": "2025-10-09T10:05:00+08:00",
                "discussion_id": uuid.uuid4().hex,
                "id": next(self._ids),
                "note": note,
                "noteable_id": 191970 + mr.number,
                "noteable_type": "MergeRequest",
                "original_position": None,
                "position": None,
                "project_id": 282463,
                "system": False,
                "type": None,
                "updated_at": "2025-10-09T10:05:00+08:00",
                "description": note,
                "url": f"https://gitcode.com/{mr.repo}/merge_requests/{mr.number}#note",
            },
            "merge_request": {"id": 191970 + mr.number, "iid": mr.number, "title": mr.title, "state": "opened"},
        }

    @staticmethod
    def delivery(
        event: str, payload: dict[str, Any], secret: str | None, delivery: str | None = None, password: str = ""
    ) -> tuple[bytes, dict[str, str]]:
        """The body and headers GitCode sends: signed with `secret` (None: unsigned; `password`: the password
        header instead)."""
        body = json.dumps(payload).encode()
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "git-oschina-hook",
            "X-GitCode-Event": event,
            "X-GitCode-Delivery": delivery or str(uuid.uuid4()),
        }
        if secret is not None:
            headers["X-GitCode-Signature-256"] = "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
        if password:
            headers["X-GitCode-Token"] = password
        return body, headers

    # -- the API ------------------------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.StreamResponse:
        tail = request.match_info["tail"]
        body: Any = None
        if request.can_read_body:
            raw = await request.read()
            body = json.loads(raw) if raw else None
        logged = Logged(request.method, "/" + tail, dict(request.query), body)
        self.requests.append(logged)
        response = self._answer(request, "/" + tail, body)
        logged.status = response.status
        return response

    def _answer(self, request: web.Request, path: str, body: Any) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {self.token}":
            return web.json_response({"message": "401 Unauthorized"}, status=401)
        for i, (method, suffix, status, times) in enumerate(self.faults):
            if method == request.method and path.endswith(suffix) and times > 0:
                self.faults[i] = (method, suffix, status, times - 1)
                return web.json_response({"message": "fault"}, status=status)
        if path == "/user":
            return web.json_response({"id": 9, "login": BOT_LOGIN, "name": "npu-review"})
        parts = path.strip("/").split("/")
        if len(parts) < 4 or parts[0] != "repos":
            return web.json_response({"message": "404 Not Found"}, status=404)
        repo = f"{parts[1]}/{parts[2]}"
        rest = parts[3:]
        if repo not in self.repos:
            return web.json_response({"message": "404 Project Not Found"}, status=404)
        try:
            return self._route(request, repo, rest, body)
        except KeyError:
            return web.json_response({"message": "404 Not Found"}, status=404)

    def _route(self, request: web.Request, repo: str, rest: list[str], body: Any) -> web.Response:
        m = request.method
        q = request.query
        if rest[0] == "pulls" and rest[1] == "comments":  # /pulls/comments/{id}
            return self._comment(m, repo, rest[2], body)
        if rest[0] == "pulls":
            mr = self.repos[repo][int(rest[1])]
            sub = rest[2] if len(rest) > 2 else ""
            if m == "GET" and sub == "":
                return web.json_response(self._pull(mr))
            if m == "GET" and sub == "files":
                return web.json_response(self._files(mr))
            if sub == "comments" and m == "GET":
                return web.json_response(self._page(q, [self._comment_json(c) for c in mr.comments]))
            if sub == "comments" and m == "POST":
                return self._create_comment(mr, body)
            if sub == "labels" and m == "GET":
                return web.json_response([{"id": i, "name": n, "color": "#008672"} for i, n in enumerate(mr.labels)])
            if sub == "labels" and m == "POST":
                if not isinstance(body, list) or not all(isinstance(x, str) for x in body):
                    return web.json_response({"message": "labels must be an array of names"}, status=400)
                mr.labels.extend(x for x in body if x not in mr.labels)
                return web.json_response([{"name": n, "color": "#008672"} for n in body], status=201)
            if sub == "labels" and m == "DELETE":
                for name in rest[3].split(","):
                    if name in mr.labels:
                        mr.labels.remove(name)
                return web.Response(status=204)
        if rest[0] == "git" and rest[1] == "trees" and m == "GET":
            files = self.commits[rest[2]]
            entries = [
                {"sha": git_sha("blob", t.encode()), "name": p.rsplit("/", 1)[-1], "type": "blob", "path": p}
                for p, t in sorted(files.items())
            ]
            return web.json_response({"tree": self._page(q, entries)})
        if rest[0] == "git" and rest[1] == "blobs" and m == "GET":
            for files in self.commits.values():
                for text in files.values():
                    if git_sha("blob", text.encode()) == rest[2]:
                        data = text.encode()
                        return web.json_response(
                            {"sha": rest[2], "size": len(data), "encoding": "base64", "content": _b64(data)}
                        )
            raise KeyError(rest[2])
        if rest[0] == "contents" and m == "GET":
            path = "/".join(rest[1:])
            files = self.commits[q["ref"]]
            text = files[path]
            return web.json_response(
                {"type": "file", "encoding": "base64", "size": len(text), "name": path.rsplit("/", 1)[-1],
                 "path": path, "content": _b64(text.encode()), "sha": git_sha("blob", text.encode())}
            )  # fmt: skip
        if rest[0] == "collaborators" and rest[2] == "permission" and m == "GET":
            permission = self.members[(repo, rest[1])]
            return web.json_response({"id": 268, "login": rest[1], "permission": permission})
        if rest[0] == "hooks" and m == "POST":
            hook = {"id": 9529 + len(self.hooks), **(body or {}), "project_id": 282463, "result_code": 0}
            self.hooks.append(hook)
            return web.json_response(hook, status=201)
        raise KeyError(request.path)

    @staticmethod
    def _page(q: Any, items: list[Any]) -> list[Any]:
        page = int(q.get("page", 1))
        per_page = min(int(q.get("per_page", 20)), PER_PAGE_MAX)
        return items[(page - 1) * per_page : page * per_page]

    def _pull(self, mr: MergeRequest) -> dict[str, Any]:
        name = mr.repo.split("/")[1]
        repo = {"path": name, "name": name}
        return {
            "id": 191970 + mr.number,
            "html_url": f"https://gitcode.com/{mr.repo}/pull/{mr.number}",
            "number": mr.number,
            "state": "open",
            "title": mr.title,
            "body": "",
            "draft": False,
            "labels": [{"id": i, "name": n} for i, n in enumerate(mr.labels)],
            "user": {"id": "708", "login": mr.author},
            "head": {"label": "feature", "ref": "feature", "sha": mr.head_sha, "repo": repo},
            "base": {"label": "main", "ref": "main", "sha": mr.base_sha, "repo": repo},
        }

    def _files(self, mr: MergeRequest) -> list[dict[str, Any]]:
        out = []
        for path in sorted(set(mr.base) | set(mr.head)):
            old, new = mr.base.get(path), mr.head.get(path)
            if old == new:
                continue
            large = path in mr.too_large
            diff = "" if large else file_diff(old, new)
            out.append(
                {
                    "sha": mr.head_sha,
                    "filename": path,
                    "status": None,
                    "additions": str(sum(1 for x in diff.splitlines() if x.startswith("+"))),
                    "deletions": str(sum(1 for x in diff.splitlines() if x.startswith("-"))),
                    "blob_url": f"https://gitcode.com/{mr.repo}/blob/{mr.head_sha}/{path}",
                    "raw_url": f"https://gitcode.com/{mr.repo}/raw/{mr.head_sha}/{path}",
                    "patch": {
                        "diff": diff,
                        "new_path": path,
                        "old_path": path,
                        "a_mode": "100644",
                        "b_mode": "100644",
                        "new_file": old is None,
                        "renamed_file": False,
                        "deleted_file": new is None,
                        "too_large": large,
                    },
                }
            )
        return out

    def _comment_json(self, c: Comment) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": c.id,
            "body": c.body,
            "created_at": "2025-10-09T10:06:00+08:00",
            "updated_at": "2025-10-09T10:06:00+08:00",
            "user": {"id": 9 if c.login == BOT_LOGIN else 708, "login": c.login, "name": c.login},
            "comment_type": "DiffNote" if c.path else "PRComment",
            "discussion_id": c.discussion_id,
        }
        if c.path:
            out.update(path=c.path, position=c.position)
        return out

    def _create_comment(self, mr: MergeRequest, body: Any) -> web.Response:
        if not isinstance(body, dict) or not isinstance(body.get("body"), str) or not body["body"]:
            return web.json_response({"message": "body is missing"}, status=400)
        path, position = body.get("path"), body.get("position")
        line = None
        if path is not None or position is not None:
            if path not in mr.head or not isinstance(position, int) or path in mr.too_large:
                return web.json_response({"message": "invalid path or position"}, status=400)
            line = position_line(file_diff(mr.base.get(path), mr.head.get(path)), position)
            if line is None:
                return web.json_response({"message": "position is not in the diff"}, status=400)
        c = Comment(str(next(self._ids)), body["body"], BOT_LOGIN, path, position, line, uuid.uuid4().hex)
        mr.comments.append(c)
        return web.json_response({"id": c.id, "body": c.body}, status=201)

    def _comment(self, method: str, repo: str, comment_id: str, body: Any) -> web.Response:
        for mr in self.repos[repo].values():
            for c in mr.comments:
                if c.id != comment_id:
                    continue
                if method == "PATCH":
                    if not isinstance(body, dict) or not isinstance(body.get("body"), str):
                        return web.json_response({"message": "body is missing"}, status=400)
                    c.body = body["body"]
                    return web.json_response({})
                if method == "DELETE":
                    mr.comments.remove(c)
                    return web.json_response({})
        raise KeyError(comment_id)


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
