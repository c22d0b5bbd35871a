"""Webhook deliveries for tests: GitHub's example payloads, adjusted to the fake's state, signed like GitHub."""

from __future__ import annotations

import copy
import hashlib
import hmac
import json
import uuid
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from . import render
from .state import CheckRun, IssueComment, Pull, Repo, User, node_id

if TYPE_CHECKING:
    import aiohttp

    from .server import FakeGitHub


def sign(body: bytes, secret: str) -> str:
    """The X-Hub-Signature-256 value GitHub sends: `sha256=` + HMAC-SHA256 of the raw body, hex."""
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()


@dataclass
class Delivery:
    """One signed webhook delivery, ready to POST to the App."""

    event: str
    payload: dict[str, Any]
    secret: str | None
    delivery_id: str = field(default_factory=lambda: str(uuid.uuid4()))
    signature: str | None = None  # override (e.g. a wrong one); default: computed from secret
    hook_target_id: int | None = None

    @property
    def body(self) -> bytes:
        return json.dumps(self.payload, separators=(",", ":")).encode()

    @property
    def headers(self) -> dict[str, str]:
        body = self.body
        headers = {
            "Content-Type": "application/json",
            "User-Agent": "GitHub-Hookshot/fake",
            "X-GitHub-Event": self.event,
            "X-GitHub-Delivery": self.delivery_id,
            "X-GitHub-Hook-ID": "1",
            "X-GitHub-Hook-Installation-Target-Type": "integration",
        }
        if self.hook_target_id is not None:
            headers["X-GitHub-Hook-Installation-Target-ID"] = str(self.hook_target_id)
        if self.signature is not None:
            headers["X-Hub-Signature-256"] = self.signature
        elif self.secret is not None:
            headers["X-Hub-Signature-256"] = sign(body, self.secret)
            headers["X-Hub-Signature"] = "sha1=" + hmac.new(self.secret.encode(), body, hashlib.sha1).hexdigest()
        return headers

    async def post(self, session: aiohttp.ClientSession, url: str) -> tuple[int, str]:
        """POST to `url` (e.g. the App's /webhook); returns (status, body text)."""
        async with session.post(url, data=self.body, headers=self.headers) as response:
            return response.status, await response.text()


def load_example(name: str) -> dict[str, Any]:
    """A fresh copy of an example payload: "pull_request.opened", "issue_comment.created.on-pr.DERIVED", ..."""
    return copy.deepcopy(render.example(name))


def adjust(
    payload: dict[str, Any],
    *,
    repo: str | None = None,
    number: int | None = None,
    head_sha: str | None = None,
    comment_body: str | None = None,
    author_association: str | None = None,
    sender_login: str | None = None,
    sender_type: str | None = None,
    installation_id: int | None = None,
    api_url: str | None = None,
) -> dict[str, Any]:
    """Edit a raw example payload in place of the fields tests vary; returns it (for payloads not tied to state)."""
    out = copy.deepcopy(payload)
    if api_url is not None or repo is not None:
        full = repo or out["repository"]["full_name"]
        old = out["repository"]["full_name"]
        api = api_url or render.EXAMPLE_API
        out = render.rewrite(
            out,
            [
                (f"{render.EXAMPLE_API}/repos/{old}", f"{api}/repos/{full}"),
                (f"https://github.com/{old}", f"https://github.com/{full}"),
                (render.EXAMPLE_API, api),
            ],
        )
        if repo is not None:
            owner, name = repo.split("/")
            out["repository"].update(full_name=repo, name=name)
            out["repository"]["owner"]["login"] = owner
    pr = out.get("pull_request")
    issue = out.get("issue")
    if number is not None:
        if "number" in out:
            out["number"] = number
        for obj in (pr, issue):
            if obj is not None:
                obj["number"] = number
    if head_sha is not None:
        if pr is not None:
            pr["head"]["sha"] = head_sha
        if "after" in out:
            out["after"] = head_sha
        for key in ("check_run", "check_suite"):
            if key in out:
                out[key]["head_sha"] = head_sha
        if "check_run" in out:
            out["check_run"]["check_suite"]["head_sha"] = head_sha
    comment = out.get("comment")
    if comment is not None:
        if comment_body is not None:
            comment["body"] = comment_body
        if author_association is not None:
            comment["author_association"] = author_association
    elif author_association is not None and pr is not None:
        pr["author_association"] = author_association
    if sender_login is not None or sender_type is not None:
        for obj in [out["sender"]] + ([comment["user"]] if comment is not None else []):
            if sender_login is not None:
                obj["login"] = sender_login
            if sender_type is not None:
                obj["type"] = sender_type
    if installation_id is not None:
        out.setdefault("installation", {})["id"] = installation_id
    return out


def _envelope(fake: FakeGitHub, template: str, action: str, repo: Repo, sender: User) -> dict[str, Any]:
    api = fake.base_url
    out = load_example(template)
    out["action"] = action
    out["repository"] = render.repository(api, repo)
    if repo.owner.type == "Organization":
        org = repo.owner.login
        out["organization"] = {
            "login": org,
            "id": repo.owner.id,
            "node_id": repo.owner.node_id,
            "url": f"{api}/orgs/{org}",
            "repos_url": f"{api}/orgs/{org}/repos",
            "events_url": f"{api}/orgs/{org}/events",
            "hooks_url": f"{api}/orgs/{org}/hooks",
            "issues_url": f"{api}/orgs/{org}/issues",
            "members_url": f"{api}/orgs/{org}/members{{/member}}",
            "public_members_url": f"{api}/orgs/{org}/public_members{{/member}}",
            "avatar_url": f"https://avatars.githubusercontent.com/u/{repo.owner.id}?v=4",
            "description": "",
        }
    else:
        out.pop("organization", None)
    if repo.installation_id is not None:
        out["installation"] = {
            "id": repo.installation_id,
            "node_id": node_id("MDIzOkludGVncmF0aW9u", repo.installation_id),
        }
    else:
        out.pop("installation", None)
    out["sender"] = render.user(api, sender)
    return out


def pull_request_payload(
    fake: FakeGitHub, pull: Pull, action: str = "opened", *, sender: str | None = None, before: str | None = None
) -> dict[str, Any]:
    """`pull_request` event for a pull request of the fake (synchronize: pass `before`, the previous head)."""
    template = {
        "reopened": "pull_request.reopened",
        "synchronize": "pull_request.synchronize",
        "edited": "pull_request.edited.DERIVED",
    }.get(action, "pull_request.opened")
    who = fake.user(sender) if sender else pull.user
    out = _envelope(fake, template, action, pull.repo, who)
    out["number"] = pull.number
    out["pull_request"] = render.pull(fake.base_url, pull)
    if action == "synchronize":
        out["before"] = before or pull.base_sha
        out["after"] = pull.head_sha
    else:
        out.pop("before", None)
        out.pop("after", None)
    if action != "edited":
        out.pop("changes", None)
    return out


def issue_comment_payload(fake: FakeGitHub, comment: IssueComment, action: str = "created") -> dict[str, Any]:
    """`issue_comment` event for a comment made with fake.add_issue_comment on a pull request."""
    pull = comment.repo.pulls[comment.number]
    api = fake.base_url
    out = _envelope(fake, "issue_comment.created.on-pr.DERIVED", action, comment.repo, comment.user)
    base = f"{api}/repos/{comment.repo.full_name}"
    html = f"https://github.com/{comment.repo.full_name}/pull/{pull.number}"
    issue = render.rewrite(out["issue"], render.repo_pairs(api, comment.repo))
    issue.update(
        url=f"{base}/issues/{pull.number}",
        repository_url=base,
        labels_url=f"{base}/issues/{pull.number}/labels{{/name}}",
        comments_url=f"{base}/issues/{pull.number}/comments",
        events_url=f"{base}/issues/{pull.number}/events",
        html_url=html,
        id=pull.id + 1,
        node_id=node_id("I", pull.id),
        number=pull.number,
        title=pull.title,
        user=render.user(api, pull.user),
        labels=[],
        state=pull.state,
        assignee=None,
        assignees=[],
        milestone=None,
        comments=1,
        author_association=pull.author_association,
        body=pull.body,
        pull_request={
            "url": f"{base}/pulls/{pull.number}",
            "html_url": html,
            "diff_url": f"{html}.diff",
            "patch_url": f"{html}.patch",
            "merged_at": None,
        },
    )
    out["issue"] = issue
    reactions = [r for r in fake.reactions if r.comment is comment]
    out["comment"] = render.issue_comment(api, comment, reactions, None)
    return out


def check_run_payload(
    fake: FakeGitHub,
    run: CheckRun,
    action: str = "rerequested",
    *,
    sender: str = "maintainer",
    identifier: str | None = None,
) -> dict[str, Any]:
    """`check_run` event (rerequested, or requested_action with the button's identifier)."""
    template = "check_run.requested_action" if action == "requested_action" else "check_run.rerequested"
    api = fake.base_url
    out = _envelope(fake, template, action, run.repo, fake.user(sender))
    suite = out["check_run"]["check_suite"]
    rendered = fake.render_check_run(api, run)
    rendered["check_suite"] = _suite(fake, suite, run.repo, run.head_sha, run.check_suite_id)
    out["check_run"] = rendered
    if action == "requested_action":
        out["requested_action"] = {"identifier": identifier or ""}
    else:
        out.pop("requested_action", None)
    return out


def check_suite_payload(
    fake: FakeGitHub, repo: Repo, head_sha: str, action: str = "rerequested", *, sender: str = "maintainer"
) -> dict[str, Any]:
    """`check_suite` event for the App's suite on head_sha."""
    template = "check_suite.requested" if action == "requested" else "check_suite.rerequested"
    out = _envelope(fake, template, action, repo, fake.user(sender))
    runs = fake.check_runs_for(repo, head_sha)
    suite_id = runs[0].check_suite_id if runs else fake.ids.next("check_suite")
    out["check_suite"] = _suite(fake, out["check_suite"], repo, head_sha, suite_id)
    return out


def _suite(fake: FakeGitHub, template: dict[str, Any], repo: Repo, head_sha: str, suite_id: int) -> dict[str, Any]:
    api = fake.base_url
    suite = render.rewrite(copy.deepcopy(template), render.repo_pairs(api, repo))
    runs = fake.check_runs_for(repo, head_sha)
    pulls = fake.pulls_for_checks(repo, head_sha)
    branch = next((p.head_ref for p in repo.pulls.values() if p.head_sha == head_sha), None)
    suite.update(
        id=suite_id,
        node_id=node_id("CS", suite_id),
        head_branch=branch,
        head_sha=head_sha,
        status="completed" if runs and all(r.status == "completed" for r in runs) else "queued",
        conclusion=None,
        url=f"{api}/repos/{repo.full_name}/check-suites/{suite_id}",
        before=None,
        after=head_sha,
        pull_requests=render.pull_refs(api, pulls),
        app=fake.integration(api),
    )
    if "check_runs_url" in suite:
        suite["check_runs_url"] = f"{api}/repos/{repo.full_name}/check-suites/{suite_id}/check-runs"
    if "latest_check_runs_count" in suite:
        suite["latest_check_runs_count"] = len(runs)
    if "head_commit" in suite:
        suite["head_commit"]["id"] = head_sha
        suite["head_commit"]["tree_id"] = repo.commits[head_sha].tree_sha if head_sha in repo.commits else head_sha
    return suite
