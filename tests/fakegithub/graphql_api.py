"""GraphQL for the fake: review threads of a pull request and (un)resolving them, and blobs by object id or
revision expression, on a subset of GitHub's schema."""

from __future__ import annotations

import base64
import contextlib
from dataclasses import dataclass, field
from functools import cache
from typing import TYPE_CHECKING, Any

from graphql import (
    ExecutionResult,
    GraphQLError,
    GraphQLResolveInfo,
    GraphQLSchema,
    build_schema,
    execute,
    parse,
    validate,
)

from .auth import allows
from .spec import DATA_DIR
from .state import Pull, Repo, ReviewComment, Thread, User, git_sha, iso, node_id

if TYPE_CHECKING:
    from .server import FakeGitHub

SCHEMA_PATH = DATA_DIR / "graphql-subset.graphql"
# GitHub: "first"/"last" are required on connections and may not exceed 100.
MAX_PAGE = 100
# Blob.text is cut here and isTruncated set. GitHub's docs give no number; users report the text of a larger
# blob ending at exactly 512,000 bytes (github.com/sveltia/sveltia-cms/issues/950, "truncated after 500kb" in
# github.com/orbiting/backends/pull/116).
BLOB_TEXT_LIMIT = 512_000


@cache
def schema() -> GraphQLSchema:
    return build_schema(SCHEMA_PATH.read_text(encoding="utf-8"))


class NotFound(GraphQLError):
    def __init__(self, message: str) -> None:
        super().__init__(message, extensions={"type": "NOT_FOUND"})


class Forbidden(GraphQLError):
    def __init__(self, message: str) -> None:
        super().__init__(message, extensions={"type": "FORBIDDEN"})


@dataclass
class Context:
    fake: FakeGitHub
    api: str
    viewer: User
    repositories: frozenset[str] | None  # token scope: full names, or None for all of the installation's
    installation_id: int
    permissions: dict[str, str]
    problems: list[str] = field(default_factory=list)  # violations found while executing

    def can_see(self, repo: Repo) -> bool:
        if repo.installation_id != self.installation_id:
            return False
        return self.repositories is None or repo.full_name in self.repositories


def _cursor(index: int) -> str:
    return base64.b64encode(f"cursor:v2:{index}".encode()).decode()


def _index(cursor: str) -> int:
    try:
        return int(base64.b64decode(cursor).decode().rsplit(":", 1)[1])
    except (ValueError, IndexError) as exc:
        raise GraphQLError(f"`{cursor}` does not appear to be a valid cursor.") from exc


def connection(
    info: GraphQLResolveInfo,
    items: list[Any],
    first: int | None = None,
    after: str | None = None,
    last: int | None = None,
    before: str | None = None,
    skip: int | None = None,
) -> dict[str, Any]:
    """A Relay connection with GitHub's pagination rules."""
    name = info.field_name
    ctx: Context = info.context
    if first is None and last is None:
        msg = f"You must provide a `first` or `last` value to properly paginate the `{name}` connection."
        ctx.problems.append(msg)
        raise GraphQLError(msg, extensions={"type": "MISSING_PAGINATION_BOUNDARIES"})
    for arg, value in (("first", first), ("last", last)):
        if value is not None and value > MAX_PAGE:
            msg = (
                f"Requesting {value} records on the `{name}` connection exceeds the `{arg}` limit of "
                f"{MAX_PAGE} records."
            )
            ctx.problems.append(msg)
            raise GraphQLError(msg, extensions={"type": "EXCESSIVE_PAGINATION"})
    start, end = 0, len(items)
    if after is not None:
        start = _index(after) + 1
    if before is not None:
        end = min(end, _index(before))
    if skip:
        start += skip
    if first is not None:
        end = min(end, start + first)
    if last is not None:
        start = max(start, end - last)
    window = list(enumerate(items))[start:end]
    return {
        "nodes": [item for _, item in window],
        "edges": [{"cursor": _cursor(i), "node": item} for i, item in window],
        "pageInfo": {
            "hasNextPage": end < len(items),
            "hasPreviousPage": start > 0,
            "startCursor": _cursor(window[0][0]) if window else None,
            "endCursor": _cursor(window[-1][0]) if window else None,
        },
        "totalCount": len(items),
    }


def _actor(ctx: Context, u: User | None) -> dict[str, Any] | None:
    if u is None:
        return None
    api = ctx.api
    login = u.login.removesuffix("[bot]") if u.type == "Bot" else u.login
    url = f"https://github.com/apps/{u.app_slug or login}" if u.type == "Bot" else f"https://github.com/{login}"
    return {
        "__typename": "Bot" if u.type == "Bot" else "User",
        "id": u.node_id,
        "databaseId": u.id,
        "login": login,  # GitHub's GraphQL gives bots their login without "[bot]"
        "name": None,
        "url": url,
        "resourcePath": url.removeprefix("https://github.com"),
        "avatarUrl": lambda info, size=None: (
            f"https://avatars.githubusercontent.com/u/{u.id}?v=4" + (f"&s={size}" if size else "")
        ),
        "_api": api,
    }


def _comment(ctx: Context, c: ReviewComment) -> dict[str, Any]:
    p = c.pull
    url = f"https://github.com/{p.repo.full_name}/pull/{p.number}#discussion_r{c.id}"
    reply_to = next((x for x in c.thread.comments if x.id == c.in_reply_to_id), None)
    return {
        "__typename": "PullRequestReviewComment",
        "id": c.node_id,
        "databaseId": c.id,
        "fullDatabaseId": str(c.id),
        "author": _actor(ctx, c.user),
        "authorAssociation": c.author_association,
        "body": c.body,
        "bodyText": c.body,
        "createdAt": iso(c.created_at),
        "updatedAt": iso(c.updated_at),
        "publishedAt": iso(c.created_at),
        "diffHunk": c.diff_hunk,
        "isMinimized": False,
        "minimizedReason": None,
        "line": c.line,
        "startLine": c.start_line,
        "originalLine": c.original_line,
        "originalStartLine": c.original_start_line,
        "outdated": c.line is None and c.subject_type == "line",
        "path": c.path,
        "pullRequest": lambda info: _pull(ctx, p),
        "pullRequestReview": lambda info: _review(ctx, c),
        "replyTo": (lambda info: _comment(ctx, reply_to)) if reply_to else None,
        "repository": lambda info: _repo(ctx, p.repo),
        "state": "SUBMITTED",
        "subjectType": c.subject_type.upper(),
        "url": url,
        "viewerCanDelete": c.user.login == ctx.viewer.login,
        "viewerCanUpdate": c.user.login == ctx.viewer.login,
        "viewerDidAuthor": c.user.login == ctx.viewer.login,
    }


def _review(ctx: Context, c: ReviewComment) -> dict[str, Any] | None:
    rv = ctx.fake.reviews.get(c.review_id)
    if rv is None:
        return None
    p = rv.pull
    return {
        "__typename": "PullRequestReview",
        "id": rv.node_id,
        "databaseId": rv.id,
        "author": _actor(ctx, rv.user),
        "body": rv.body,
        "state": rv.state,
        "submittedAt": iso(rv.submitted_at) if rv.submitted_at else None,
        "url": f"https://github.com/{p.repo.full_name}/pull/{p.number}#pullrequestreview-{rv.id}",
    }


def _thread(ctx: Context, t: Thread) -> dict[str, Any]:
    writer = ctx.permissions.get("pull_requests") == "write"
    return {
        "__typename": "PullRequestReviewThread",
        "id": t.node_id,
        "comments": lambda info, **kw: connection(info, [_comment(ctx, c) for c in t.comments], **kw),
        "diffSide": t.side,
        "startDiffSide": t.start_side,
        "isCollapsed": t.resolved,
        "isOutdated": t.line is None and t.subject_type == "line",
        "isResolved": t.resolved,
        "line": t.line,
        "startLine": t.start_line,
        "originalLine": t.line,
        "originalStartLine": t.start_line,
        "path": t.path,
        "pullRequest": lambda info: _pull(ctx, t.pull),
        "repository": lambda info: _repo(ctx, t.pull.repo),
        "resolvedBy": _actor(ctx, t.resolved_by) if t.resolved_by and t.resolved_by.type == "User" else None,
        "subjectType": t.subject_type.upper(),
        "viewerCanReply": True,
        "viewerCanResolve": writer and not t.resolved,
        "viewerCanUnresolve": writer and t.resolved,
    }


def _pull(ctx: Context, p: Pull) -> dict[str, Any]:
    threads = [t for t in ctx.fake.threads.values() if t.pull is p and t.comments]
    return {
        "__typename": "PullRequest",
        "id": p.node_id,
        "databaseId": p.id,
        "number": p.number,
        "title": p.title,
        "state": p.state.upper(),
        "url": f"https://github.com/{p.repo.full_name}/pull/{p.number}",
        "headRefOid": p.head_sha,
        "baseRefOid": p.base_sha,
        "headRefName": p.head_ref,
        "baseRefName": p.base_ref,
        "isDraft": p.draft,
        "author": _actor(ctx, p.user),
        "repository": lambda info: _repo(ctx, p.repo),
        "reviewThreads": lambda info, **kw: connection(info, [_thread(ctx, t) for t in threads], **kw),
    }


def _blob(ctx: Context, r: Repo, sha: str) -> dict[str, Any] | None:
    """A Blob as GitHub's GraphQL gives it: text for UTF-8, isBinary with no text for a NUL byte; the fake says
    it cannot tell (isBinary null, no text) for other bytes. Only blobs are served: None for any other oid."""
    data = r.blobs.get(sha)
    if data is None:
        return None
    binary = b"\0" in data
    text: str | None = None
    if not binary:
        with contextlib.suppress(UnicodeDecodeError):
            text = data.decode("utf-8")
    truncated = text is not None and len(data) > BLOB_TEXT_LIMIT
    if truncated:
        text = data[:BLOB_TEXT_LIMIT].decode("utf-8", "ignore")  # a character cut in two is left out
    url = f"https://github.com/{r.full_name}/commit/{sha}"
    return {
        "__typename": "Blob",
        "id": node_id("B", r.id, int(sha[:12], 16)),
        "oid": sha,
        "abbreviatedOid": sha[:7],
        "byteSize": len(data),
        "isBinary": True if binary else (False if text is not None else None),
        "isTruncated": truncated,
        "text": text,
        "commitUrl": url,
        "commitResourcePath": url.removeprefix("https://github.com"),
        "repository": lambda info: _repo(ctx, r),
    }


def _object(ctx: Context, r: Repo, oid: str | None, expression: str | None) -> dict[str, Any] | None:
    """Repository.object: by oid, or by a `<rev>:<path>` expression (the default branch for an empty rev)."""
    if not allows(ctx.permissions, "contents", "read"):
        ctx.problems.append("reading a git object needs contents: read")
        raise Forbidden("Resource not accessible by integration")
    if oid is not None:
        return _blob(ctx, r, oid)
    if expression is None or ":" not in expression:
        return None  # a revision names a commit: the fake serves only blobs
    rev, path = expression.split(":", 1)
    commit_sha = r.resolve(rev or r.default_branch)
    data = r.commits[commit_sha].files.get(path) if commit_sha is not None else None
    return _blob(ctx, r, git_sha("blob", data)) if data is not None else None


def _repo(ctx: Context, r: Repo) -> dict[str, Any]:
    def pull_request(info: GraphQLResolveInfo, number: int) -> dict[str, Any]:
        p = r.pulls.get(number)
        if p is None:
            raise NotFound(f"Could not resolve to a PullRequest with the number of {number}.")
        return _pull(ctx, p)

    def git_object(info: GraphQLResolveInfo, oid: str | None = None, expression: str | None = None) -> Any:
        return _object(ctx, r, oid, expression)

    return {
        "__typename": "Repository",
        "id": r.node_id,
        "databaseId": r.id,
        "name": r.name,
        "nameWithOwner": r.full_name,
        "isPrivate": r.private,
        "url": f"https://github.com/{r.full_name}",
        "pullRequest": pull_request,
        "object": git_object,
    }


def _node(ctx: Context, node_id: str) -> dict[str, Any] | None:
    obj = ctx.fake.node(node_id)
    if isinstance(obj, Thread) and ctx.can_see(obj.pull.repo):
        return _thread(ctx, obj)
    if isinstance(obj, ReviewComment) and ctx.can_see(obj.pull.repo):
        return _comment(ctx, obj)
    if isinstance(obj, Pull) and ctx.can_see(obj.repo):
        return _pull(ctx, obj)
    if isinstance(obj, Repo) and ctx.can_see(obj):
        return _repo(ctx, obj)
    if isinstance(obj, User):
        return _actor(ctx, obj)
    raise NotFound(f"Could not resolve to a node with the global id of '{node_id}'")


def _set_resolved(ctx: Context, thread_id: str, resolved: bool) -> Thread:
    obj = ctx.fake.node(thread_id)
    if not isinstance(obj, Thread) or not ctx.can_see(obj.pull.repo):
        raise NotFound(f"Could not resolve to a node with the global id of '{thread_id}'")
    if ctx.permissions.get("pull_requests") != "write":
        ctx.problems.append("resolving a review thread needs pull_requests: write")
        raise Forbidden("Resource not accessible by integration")
    obj.resolved = resolved
    obj.resolved_by = ctx.viewer if resolved else None
    return obj


def _root(ctx: Context) -> dict[str, Any]:
    def repository(info: GraphQLResolveInfo, owner: str, name: str, followRenames: bool = True) -> Any:
        r = ctx.fake.repos.get(f"{owner}/{name}".lower())
        if r is None or not ctx.can_see(r):
            raise NotFound(f"Could not resolve to a Repository with the name '{owner}/{name}'.")
        return _repo(ctx, r)

    def resolve(info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
        t = _set_resolved(ctx, input["threadId"], True)
        return {"clientMutationId": input.get("clientMutationId"), "thread": _thread(ctx, t)}

    def unresolve(info: GraphQLResolveInfo, input: dict[str, Any]) -> dict[str, Any]:
        t = _set_resolved(ctx, input["threadId"], False)
        return {"clientMutationId": input.get("clientMutationId"), "thread": _thread(ctx, t)}

    rate = ctx.fake.rate_limits["graphql"]
    return {
        "id": "MDU6UXVlcnk=",
        "repository": repository,
        "node": lambda info, id: _node(ctx, id),
        "nodes": lambda info, ids: [_node(ctx, i) for i in ids],
        "rateLimit": lambda info, dryRun=False: {
            "cost": 1,
            "limit": rate.limit,
            "nodeCount": 0,
            "remaining": rate.remaining,
            "resetAt": iso(rate.reset),
            "used": rate.limit - rate.remaining,
        },
        "resolveReviewThread": resolve,
        "unresolveReviewThread": unresolve,
    }


def _field_resolver(source: Any, info: GraphQLResolveInfo, **args: Any) -> Any:
    value = source.get(info.field_name) if isinstance(source, dict) else getattr(source, info.field_name, None)
    return value(info, **args) if callable(value) else value


def _type_resolver(value: Any, info: GraphQLResolveInfo, abstract_type: Any) -> str | None:
    return value.get("__typename") if isinstance(value, dict) else None


def run(ctx: Context, query: str, variables: dict[str, Any] | None, operation_name: str | None) -> dict[str, Any]:
    """Execute like GitHub: always a JSON object with `data` and/or `errors`."""
    try:
        document = parse(query)
    except GraphQLError as exc:
        ctx.problems.append(f"GraphQL parse error: {exc.message}")
        return {"errors": [{"message": exc.message, "locations": _locations(exc)}]}
    errors = validate(schema(), document)
    if errors:
        for e in errors:
            ctx.problems.append(
                f"GraphQL query does not validate against GitHub's schema (subset served by the fake): {e.message}"
            )
        return {"errors": [_format(e) for e in errors]}
    result = execute(
        schema(),
        document,
        root_value=_root(ctx),
        context_value=ctx,
        variable_values=variables,
        operation_name=operation_name,
        field_resolver=_field_resolver,
        type_resolver=_type_resolver,
    )
    assert isinstance(result, ExecutionResult)  # every resolver is synchronous
    out: dict[str, Any] = {"data": result.data}
    if result.errors:
        out["errors"] = [_format(e) for e in result.errors]
        for e in result.errors:
            # Typed errors (NOT_FOUND...) are answers GitHub gives; anything else is a broken query or fake.
            if not (e.extensions or {}).get("type"):
                ctx.problems.append(f"GraphQL execution failed: {e.message}")
    return out


def _locations(e: GraphQLError) -> list[dict[str, int]]:
    return [{"line": loc.line, "column": loc.column} for loc in e.locations or []]


def _format(e: GraphQLError) -> dict[str, Any]:
    out: dict[str, Any] = {"message": e.message}
    kind = (e.extensions or {}).get("type")
    if kind:
        out["type"] = kind
    if e.path:
        out["path"] = list(e.path)
    if e.locations:
        out["locations"] = _locations(e)
    return out
