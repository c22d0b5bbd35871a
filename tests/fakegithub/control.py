"""Seeding from JSON and the `/_fake/...` control endpoints, for a fake running in its own process."""

from __future__ import annotations

import base64
import json
from typing import TYPE_CHECKING, Any

from aiohttp import web

from .faults import Fault
from .state import FileContent

if TYPE_CHECKING:
    from .server import FakeGitHub


def _files(spec: dict[str, Any] | None) -> dict[str, FileContent] | None:
    """Seed file maps: path -> text, or path -> {"base64": "..."} for binary content."""
    if spec is None:
        return None
    return {
        path: base64.b64decode(value["base64"]) if isinstance(value, dict) else value for path, value in spec.items()
    }


def apply_seed(fake: FakeGitHub, seed: dict[str, Any]) -> dict[str, Any]:
    """Build state from a JSON seed; returns what was made (pull head shas, comment ids).

    {"token_lifetime": 3600,
     "installations": [{"id": 7, "account": "octo-org", "repositories": null, "permissions": {...}}],
     "repos": [{"full_name": "octo-org/repo", "installation": 7, "private": false, "default_branch": "main",
                "files": {"README.md": "hi"}}],
     "pulls": [{"repo": "octo-org/repo", "number": 1, "head_files": {...}, "base_files": {...}, "title": "...",
                "user": "alice", "author_association": "CONTRIBUTOR", "head_repo": "alice/repo",
                "renames": {"old": "new"}, "diff_too_large": false}],
     "roles": [{"repo": "octo-org/repo", "user": "alice", "role": "write"}],
     "issue_comments": [{"repo": "octo-org/repo", "number": 1, "body": "/recheck", "user": "alice",
                         "author_association": "CONTRIBUTOR"}]}
    """
    made: dict[str, Any] = {"pulls": {}, "issue_comments": []}
    if "token_lifetime" in seed:
        fake.token_lifetime = float(seed["token_lifetime"])
    for inst in seed.get("installations", []):
        fake.add_installation(
            inst.get("id"),
            account=inst.get("account", "octo-org"),
            repositories=inst.get("repositories"),
            permissions=inst.get("permissions"),
        )
    for repo in seed.get("repos", []):
        fake.add_repo(
            repo["full_name"],
            installation=repo.get("installation"),
            files=_files(repo.get("files")),
            private=repo.get("private", False),
            default_branch=repo.get("default_branch", "main"),
            installed=repo.get("installed", True),
        )
    for p in seed.get("pulls", []):
        pull = fake.add_pull(
            p["repo"],
            number=p.get("number"),
            head_files=_files(p.get("head_files")),
            base_files=_files(p.get("base_files")),
            base=p.get("base"),
            head=p.get("head"),
            head_ref=p.get("head_ref"),
            head_repo=p.get("head_repo"),
            renames=p.get("renames"),
            title=p.get("title", "Add NPU support"),
            body=p.get("body", ""),
            user=p.get("user", "contributor"),
            author_association=p.get("author_association", "CONTRIBUTOR"),
            draft=p.get("draft", False),
        )
        pull.diff_too_large = bool(p.get("diff_too_large", False))
        made["pulls"][f"{pull.repo.full_name}#{pull.number}"] = {"head_sha": pull.head_sha, "base_sha": pull.base_sha}
    for r in seed.get("roles", []):
        fake.set_role(r["repo"], r["user"], r["role"])
    for c in seed.get("issue_comments", []):
        pull = fake.repo(c["repo"]).pulls[c["number"]]
        comment = fake.add_issue_comment(
            pull,
            c["body"],
            user=c.get("user", "contributor"),
            author_association=c.get("author_association", "CONTRIBUTOR"),
            user_type=c.get("user_type", "User"),
        )
        made["issue_comments"].append(comment.id)
    return made


def snapshot(fake: FakeGitHub) -> dict[str, Any]:
    """The App's visible output, as plain JSON."""
    return {
        "check_runs": [
            {
                "id": r.id,
                "repo": r.repo.full_name,
                "head_sha": r.head_sha,
                "name": r.name,
                "status": r.status,
                "conclusion": r.conclusion,
                "output": r.output,
                "annotations": r.annotations,
                "history": [{"action": a, "body": b} for a, b in r.history],
            }
            for r in fake.check_runs.values()
        ],
        "reviews": [
            {
                "id": rv.id,
                "repo": rv.pull.repo.full_name,
                "number": rv.pull.number,
                "user": rv.user.login,
                "state": rv.state,
                "body": rv.body,
                "commit_id": rv.commit_id,
                "comment_ids": rv.comment_ids,
            }
            for rv in fake.reviews.values()
        ],
        "threads": [
            {
                "id": t.node_id,
                "repo": t.pull.repo.full_name,
                "number": t.pull.number,
                "path": t.path,
                "line": t.line,
                "start_line": t.start_line,
                "side": t.side,
                "resolved": t.resolved,
                "comments": [
                    {"id": c.id, "user": c.user.login, "body": c.body, "in_reply_to_id": c.in_reply_to_id}
                    for c in t.comments
                ],
            }
            for t in fake.threads.values()
        ],
        "issue_comments": [
            {
                "id": c.id,
                "repo": c.repo.full_name,
                "number": c.number,
                "user": c.user.login,
                "body": c.body,
            }
            for c in fake.issue_comments.values()
        ],
        "reactions": [{"comment_id": r.comment.id, "user": r.user.login, "content": r.content} for r in fake.reactions],
        "tokens_issued": len(fake.tokens),
    }


async def handle_control(fake: FakeGitHub, request: web.Request) -> web.StreamResponse:
    """/_fake/... : outside GitHub's API, unauthenticated (the fake listens on 127.0.0.1 only), never logged."""
    action = request.path.removeprefix("/_fake/")
    body: Any = await request.json() if request.can_read_body else {}
    if request.method == "GET" and action == "log":
        return web.json_response(
            {
                "requests": [r.to_json() for r in fake.requests],
                "violations": [
                    {"kind": v.kind, "method": v.method, "path": v.path, "operation": v.operation, "message": v.message}
                    for v in fake.violations
                ],
                "response_errors": fake.response_errors,
            },
            dumps=lambda o: json.dumps(o, default=str),
        )
    if request.method == "GET" and action == "state":
        return web.json_response(snapshot(fake))
    if request.method == "POST" and action == "seed":
        return web.json_response(apply_seed(fake, body))
    if request.method == "POST" and action == "faults":
        fake.inject(body["route"], Fault.from_json(body.get("fault", {})), int(body.get("times", 1)))
        return web.json_response({"queued": int(body.get("times", 1))})
    if request.method == "POST" and action == "rate-limit":
        fake.set_rate_limit(
            int(body["remaining"]),
            reset_in=float(body.get("reset_in", 3600)),
            resource=body.get("resource", "core"),
        )
        return web.json_response({})
    if request.method == "POST" and action == "outage":
        if body.get("on", True):
            fake.outage(Fault.from_json(body["fault"]) if body.get("fault") else None)
        else:
            fake.end_outage()
        return web.json_response({})
    if request.method == "POST" and action == "revoke-tokens":
        fake.revoke_tokens()
        return web.json_response({})
    if request.method == "POST" and action == "clear-log":
        fake.clear_log()
        return web.json_response({})
    if request.method == "POST" and action == "push":
        pull = fake.repo(body["repo"]).pulls[int(body["number"])]
        before = pull.head_sha
        sha = fake.push(pull, _files(body["head_files"]) or {}, renames=body.get("renames"))
        return web.json_response({"before": before, "head_sha": sha})
    if request.method == "POST" and action == "payload":
        # A webhook payload consistent with the fake's state; the test signs it and posts it to the App.
        kind = body["event"]
        repo = fake.repo(body["repo"])
        if kind == "pull_request":
            pull = repo.pulls[int(body["number"])]
            payload = fake.pull_request_payload(
                pull, body.get("action", "opened"), sender=body.get("sender"), before=body.get("before")
            )
        elif kind == "issue_comment":
            payload = fake.issue_comment_payload(
                fake.issue_comments[int(body["comment_id"])], body.get("action", "created")
            )
        elif kind == "check_run":
            payload = fake.check_run_payload(
                fake.check_runs[int(body["check_run_id"])],
                body.get("action", "rerequested"),
                identifier=body.get("identifier"),
            )
        elif kind == "check_suite":
            payload = fake.check_suite_payload(repo, body["head_sha"], body.get("action", "rerequested"))
        else:
            raise web.HTTPBadRequest(text=f"unknown event {kind!r}")
        return web.json_response(payload)
    raise web.HTTPNotFound(text=f"no control action {request.method} {action!r}")
