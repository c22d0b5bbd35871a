"""GitHub-shaped JSON for the fake's objects, built on GitHub's own example payloads (tests/data/github/webhooks)."""

from __future__ import annotations

import base64
import copy
import json
from functools import cache
from typing import Any
from urllib.parse import quote

from .spec import DATA_DIR
from .state import (
    CheckRun,
    Installation,
    IssueComment,
    Pull,
    PullFile,
    Reaction,
    Repo,
    Review,
    ReviewComment,
    User,
    iso,
    node_id,
)

WEB = "https://github.com"
EXAMPLE_API = "https://api.github.com"
EXAMPLE_REPO = "Codertocat/Hello-World"


@cache
def example(name: str) -> dict[str, Any]:
    """A webhook example payload by file stem, e.g. "pull_request.opened" (returns a shared object: copy it)."""
    return json.loads((DATA_DIR / "webhooks" / f"{name}.json").read_text(encoding="utf-8"))


def rewrite(obj: Any, pairs: list[tuple[str, str]]) -> Any:
    """Replace URL prefixes in every string of a JSON value."""
    if isinstance(obj, dict):
        return {k: rewrite(v, pairs) for k, v in obj.items()}
    if isinstance(obj, list):
        return [rewrite(v, pairs) for v in obj]
    if isinstance(obj, str):
        for old, new in pairs:
            if old in obj:
                obj = obj.replace(old, new)
        return obj
    return obj


def b64(data: bytes) -> str:
    """Base64 as GitHub serves it: lines of 60 characters, each ending in a newline."""
    text = base64.b64encode(data).decode()
    return "".join(text[i : i + 60] + "\n" for i in range(0, len(text), 60))


def user(api: str, u: User) -> dict[str, Any]:
    login = quote(u.login)
    url = f"{api}/users/{login}"
    if u.type == "Bot":
        avatar = f"https://avatars.githubusercontent.com/in/{u.id}?v=4"
        html = f"{WEB}/apps/{u.app_slug or u.login.removesuffix('[bot]')}"
    else:
        avatar = f"https://avatars.githubusercontent.com/u/{u.id}?v=4"
        html = f"{WEB}/{login}"
    return {
        "login": u.login,
        "id": u.id,
        "node_id": u.node_id,
        "avatar_url": avatar,
        "gravatar_id": "",
        "url": url,
        "html_url": html,
        "followers_url": f"{url}/followers",
        "following_url": f"{url}/following{{/other_user}}",
        "gists_url": f"{url}/gists{{/gist_id}}",
        "starred_url": f"{url}/starred{{/owner}}{{/repo}}",
        "subscriptions_url": f"{url}/subscriptions",
        "organizations_url": f"{url}/orgs",
        "repos_url": f"{url}/repos",
        "events_url": f"{url}/events{{/privacy}}",
        "received_events_url": f"{url}/received_events",
        "type": u.type,
        "user_view_type": "public",
        "site_admin": False,
    }


def repo_pairs(api: str, r: Repo) -> list[tuple[str, str]]:
    return [
        (f"{EXAMPLE_API}/repos/{EXAMPLE_REPO}", f"{api}/repos/{r.full_name}"),
        (f"git://github.com/{EXAMPLE_REPO}.git", f"git://github.com/{r.full_name}.git"),
        (f"git@github.com:{EXAMPLE_REPO}.git", f"git@github.com:{r.full_name}.git"),
        (f"https://github.com/{EXAMPLE_REPO}", f"{WEB}/{r.full_name}"),
        (f"{EXAMPLE_API}/users/Codertocat", f"{api}/users/{quote(r.owner.login)}"),
        (EXAMPLE_API, api),
    ]


def repository(api: str, r: Repo) -> dict[str, Any]:
    out: dict[str, Any] = rewrite(copy.deepcopy(example("pull_request.opened")["repository"]), repo_pairs(api, r))
    out.update(
        id=r.id,
        node_id=r.node_id,
        name=r.name,
        full_name=r.full_name,
        private=r.private,
        visibility="private" if r.private else "public",
        owner=user(api, r.owner),
        default_branch=r.default_branch,
        fork=False,
        description=None,
        homepage=None,
        license=None,
        mirror_url=None,
    )
    return out


def pull(api: str, p: Pull, bot: User | None = None) -> dict[str, Any]:
    template = copy.deepcopy(example("pull_request.opened")["pull_request"])
    out: dict[str, Any] = rewrite(template, repo_pairs(api, p.repo))
    n = p.number
    base_url = f"{api}/repos/{p.repo.full_name}"
    html = f"{WEB}/{p.repo.full_name}/pull/{n}"
    files = p.files
    head_repo = repository(api, p.head_repo)
    base_repo = repository(api, p.repo)
    out.update(
        url=f"{base_url}/pulls/{n}",
        id=p.id,
        node_id=p.node_id,
        html_url=html,
        diff_url=f"{html}.diff",
        patch_url=f"{html}.patch",
        issue_url=f"{base_url}/issues/{n}",
        number=n,
        state=p.state,
        locked=False,
        title=p.title,
        user=user(api, p.user),
        body=p.body,
        created_at=iso(p.created_at),
        updated_at=iso(p.created_at),
        closed_at=None,
        merged_at=None,
        merge_commit_sha=None,
        assignee=None,
        assignees=[],
        requested_reviewers=[],
        requested_teams=[],
        labels=[],
        milestone=None,
        draft=p.draft,
        commits_url=f"{base_url}/pulls/{n}/commits",
        review_comments_url=f"{base_url}/pulls/{n}/comments",
        review_comment_url=f"{base_url}/pulls/comments{{/number}}",
        comments_url=f"{base_url}/issues/{n}/comments",
        statuses_url=f"{base_url}/statuses/{p.head_sha}",
        head={
            "label": f"{p.head_repo.owner.login}:{p.head_ref}",
            "ref": p.head_ref,
            "sha": p.head_sha,
            "user": user(api, p.head_repo.owner),
            "repo": head_repo,
        },
        base={
            "label": f"{p.repo.owner.login}:{p.base_ref}",
            "ref": p.base_ref,
            "sha": p.base_sha,
            "user": user(api, p.repo.owner),
            "repo": base_repo,
        },
        _links={
            "self": {"href": f"{base_url}/pulls/{n}"},
            "html": {"href": html},
            "issue": {"href": f"{base_url}/issues/{n}"},
            "comments": {"href": f"{base_url}/issues/{n}/comments"},
            "review_comments": {"href": f"{base_url}/pulls/{n}/comments"},
            "review_comment": {"href": f"{base_url}/pulls/comments{{/number}}"},
            "commits": {"href": f"{base_url}/pulls/{n}/commits"},
            "statuses": {"href": f"{base_url}/statuses/{p.head_sha}"},
        },
        author_association=p.author_association,
        auto_merge=None,
        active_lock_reason=None,
        merged=False,
        mergeable=None,
        rebaseable=None,
        mergeable_state="unknown",
        merged_by=None,
        comments=0,
        review_comments=0,
        maintainer_can_modify=False,
        commits=1,
        additions=sum(f.additions for f in files),
        deletions=sum(f.deletions for f in files),
        changed_files=len(files),
    )
    return out


def pull_file(api: str, r: Repo, head_sha: str, f: PullFile) -> dict[str, Any]:
    path = quote(f.filename)
    out: dict[str, Any] = {
        "sha": f.sha,
        "filename": f.filename,
        "status": f.status,
        "additions": f.additions,
        "deletions": f.deletions,
        "changes": f.changes,
        "blob_url": f"{WEB}/{r.full_name}/blob/{head_sha}/{path}",
        "raw_url": f"{WEB}/{r.full_name}/raw/{head_sha}/{path}",
        "contents_url": f"{api}/repos/{r.full_name}/contents/{path}?ref={head_sha}",
    }
    if f.patch is not None:
        out["patch"] = f.patch
    if f.previous_filename:
        out["previous_filename"] = f.previous_filename
    return out


def unified_diff(p: Pull) -> str:
    """The whole pull request as `git diff` prints it (what `Accept: application/vnd.github.diff` returns)."""
    chunks = []
    for f in p.files:
        old = f.previous_filename or f.filename
        lines = [f"diff --git a/{old} b/{f.filename}"]
        if f.status == "added":
            lines += ["new file mode 100644", f"index 0000000..{f.sha[:7]}", "--- /dev/null", f"+++ b/{f.filename}"]
        elif f.status == "removed":
            lines += ["deleted file mode 100644", f"index {f.sha[:7]}..0000000", f"--- a/{old}", "+++ /dev/null"]
        else:
            if f.status == "renamed":
                lines += [f"rename from {old}", f"rename to {f.filename}"]
            if f.patch:
                lines += [f"--- a/{old}", f"+++ b/{f.filename}"]
        if f.patch is None:
            lines.append(f"Binary files a/{old} and b/{f.filename} differ")
        else:
            lines.append(f.patch)
        chunks.append("\n".join(lines) + "\n")
    return "".join(chunks)


def integration(api: str, app_id: int, slug: str, owner: User) -> dict[str, Any]:
    out: dict[str, Any] = copy.deepcopy(example("check_run.rerequested")["check_run"]["app"])
    out.update(
        id=app_id,
        slug=slug,
        client_id=f"Iv1.{app_id:016x}",
        node_id=node_id("A", app_id),
        owner=user(api, owner),
        name=slug,
        description="",
        external_url=f"{WEB}/apps/{slug}",
        html_url=f"{WEB}/apps/{slug}",
        created_at="2024-01-01T00:00:00Z",
        updated_at="2024-01-01T00:00:00Z",
        permissions={
            "checks": "write",
            "contents": "read",
            "issues": "write",
            "metadata": "read",
            "pull_requests": "write",
        },
        events=["check_run", "check_suite", "issue_comment", "pull_request"],
    )
    return out


def installation(api: str, inst: Installation, app_id: int, slug: str) -> dict[str, Any]:
    """An installation as GET /app/installations lists it."""
    login = quote(inst.account.login)
    where = f"organizations/{login}/settings" if inst.account.type == "Organization" else "settings"
    return {
        "id": inst.id,
        "account": user(api, inst.account),
        "repository_selection": "all" if inst.repositories is None else "selected",
        "access_tokens_url": f"{api}/app/installations/{inst.id}/access_tokens",
        "repositories_url": f"{api}/installation/repositories",
        "html_url": f"{WEB}/{where}/installations/{inst.id}",
        "app_id": app_id,
        "client_id": f"Iv1.{app_id:016x}",
        "target_id": inst.account.id,
        "target_type": inst.account.type,
        "permissions": dict(inst.permissions),
        "events": ["check_run", "check_suite", "issue_comment", "pull_request"],
        "created_at": "2024-01-01T00:00:00Z",
        "updated_at": "2024-01-01T00:00:00Z",
        "single_file_name": None,
        "has_multiple_single_files": False,
        "single_file_paths": [],
        "app_slug": slug,
        "suspended_by": None,
        "suspended_at": None,
    }


def check_run(api: str, c: CheckRun, app: dict[str, Any], pulls: list[Pull]) -> dict[str, Any]:
    base_url = f"{api}/repos/{c.repo.full_name}"
    return {
        "id": c.id,
        "head_sha": c.head_sha,
        "node_id": node_id("CR", c.id),
        "external_id": c.external_id or "",
        "url": f"{base_url}/check-runs/{c.id}",
        "html_url": f"{WEB}/{c.repo.full_name}/runs/{c.id}",
        "details_url": c.details_url or app["html_url"],
        "status": c.status,
        "conclusion": c.conclusion,
        "started_at": c.started_at,
        "completed_at": c.completed_at,
        "output": {
            "title": c.output.get("title"),
            "summary": c.output.get("summary"),
            "text": c.output.get("text"),
            "annotations_count": len(c.annotations),
            "annotations_url": f"{base_url}/check-runs/{c.id}/annotations",
        },
        "name": c.name,
        "check_suite": {"id": c.check_suite_id},
        "app": app,
        "pull_requests": pull_refs(api, pulls),
    }


def pull_refs(api: str, pulls: list[Pull]) -> list[dict[str, Any]]:
    """The short pull request references of check runs and suites."""
    return [
        {
            "url": f"{api}/repos/{p.repo.full_name}/pulls/{p.number}",
            "id": p.id,
            "number": p.number,
            "head": {"ref": p.head_ref, "sha": p.head_sha, "repo": mini_repo(api, p.head_repo)},
            "base": {"ref": p.base_ref, "sha": p.base_sha, "repo": mini_repo(api, p.repo)},
        }
        for p in pulls
    ]


def mini_repo(api: str, r: Repo) -> dict[str, Any]:
    return {"id": r.id, "url": f"{api}/repos/{r.full_name}", "name": r.name}


def review(api: str, rv: Review) -> dict[str, Any]:
    p = rv.pull
    html = f"{WEB}/{p.repo.full_name}/pull/{p.number}#pullrequestreview-{rv.id}"
    pr_url = f"{api}/repos/{p.repo.full_name}/pulls/{p.number}"
    out: dict[str, Any] = {
        "id": rv.id,
        "node_id": rv.node_id,
        "user": user(api, rv.user),
        "body": rv.body,
        "state": rv.state,
        "html_url": html,
        "pull_request_url": pr_url,
        "author_association": "NONE",
        "_links": {"html": {"href": html}, "pull_request": {"href": pr_url}},
        "commit_id": rv.commit_id,
    }
    if rv.submitted_at is not None:
        out["submitted_at"] = iso(rv.submitted_at)
    return out


def review_comment(api: str, c: ReviewComment) -> dict[str, Any]:
    p = c.pull
    base_url = f"{api}/repos/{p.repo.full_name}"
    html = f"{WEB}/{p.repo.full_name}/pull/{p.number}#discussion_r{c.id}"
    out: dict[str, Any] = {
        "url": f"{base_url}/pulls/comments/{c.id}",
        "pull_request_review_id": c.review_id,
        "id": c.id,
        "node_id": c.node_id,
        "diff_hunk": c.diff_hunk,
        "path": c.path,
        "position": c.position,
        "original_position": c.original_position if c.original_position is not None else 0,
        "commit_id": c.commit_id,
        "original_commit_id": c.commit_id,
        "user": user(api, c.user),
        "body": c.body,
        "created_at": iso(c.created_at),
        "updated_at": iso(c.updated_at),
        "html_url": html,
        "pull_request_url": f"{base_url}/pulls/{p.number}",
        "author_association": c.author_association,
        "_links": {
            "self": {"href": f"{base_url}/pulls/comments/{c.id}"},
            "html": {"href": html},
            "pull_request": {"href": f"{base_url}/pulls/{p.number}"},
        },
        "reactions": reactions_summary(f"{base_url}/pulls/comments/{c.id}/reactions", []),
        "start_line": c.start_line,
        "original_start_line": c.original_start_line,
        "start_side": c.start_side,
        "line": c.line,
        "original_line": c.original_line,
        "side": c.side,
        "subject_type": c.subject_type,
    }
    if c.in_reply_to_id is not None:
        out["in_reply_to_id"] = c.in_reply_to_id
    return out


def reactions_summary(url: str, reactions: list[Reaction]) -> dict[str, Any]:
    counts = {k: 0 for k in ("+1", "-1", "laugh", "hooray", "confused", "heart", "rocket", "eyes")}
    for r in reactions:
        counts[r.content] += 1
    return {"url": url, "total_count": len(reactions), **counts}


def issue_comment(api: str, c: IssueComment, reactions: list[Reaction], app: dict[str, Any] | None) -> dict[str, Any]:
    base_url = f"{api}/repos/{c.repo.full_name}"
    return {
        "id": c.id,
        "node_id": c.node_id,
        "url": f"{base_url}/issues/comments/{c.id}",
        "html_url": f"{WEB}/{c.repo.full_name}/pull/{c.number}#issuecomment-{c.id}",
        "body": c.body,
        "user": user(api, c.user),
        "created_at": iso(c.created_at),
        "updated_at": iso(c.updated_at),
        "issue_url": f"{base_url}/issues/{c.number}",
        "author_association": c.author_association,
        "performed_via_github_app": app,
        "reactions": reactions_summary(f"{base_url}/issues/comments/{c.id}/reactions", reactions),
    }


def reaction(api: str, r: Reaction) -> dict[str, Any]:
    return {
        "id": r.id,
        "node_id": node_id("REA", r.id),
        "user": user(api, r.user),
        "content": r.content,
        "created_at": iso(r.created_at),
    }
