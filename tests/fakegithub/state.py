"""What the fake GitHub knows: installations, repositories with git objects, pull requests and the bot's output."""

from __future__ import annotations

import base64
import hashlib
import itertools
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from .diff import make_patch

FileContent = str | bytes


def git_sha(kind: str, data: bytes) -> str:
    return hashlib.sha1(f"{kind} {len(data)}\0".encode() + data).hexdigest()


def iso(ts: float) -> str:
    return datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def node_id(prefix: str, *parts: int) -> str:
    raw = ":".join(str(p) for p in parts).encode()
    return f"{prefix}_kwDO{base64.urlsafe_b64encode(raw).decode().rstrip('=')}"


def is_binary(data: bytes) -> bool:
    if b"\0" in data:
        return True
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return True
    return False


@dataclass
class User:
    login: str
    id: int
    type: str = "User"  # "User" | "Bot" | "Organization"
    app_slug: str | None = None  # for bots: the App behind them

    @property
    def node_id(self) -> str:
        return node_id("BOT" if self.type == "Bot" else "U", self.id)


@dataclass
class Installation:
    id: int
    account: User
    repositories: set[str] | None  # full names; None = all repositories of the account
    permissions: dict[str, str]


@dataclass
class TreeEntry:
    path: str  # full path from the root
    name: str
    mode: str  # "100644", "100755", "120000", "040000"
    type: str  # "blob" | "tree"
    sha: str
    size: int | None


@dataclass
class Commit:
    sha: str
    tree_sha: str
    files: dict[str, bytes]
    modes: dict[str, str]
    parents: list[str]


@dataclass
class PullFile:
    filename: str
    status: str  # added, removed, modified, renamed, copied, changed, unchanged
    patch: str | None
    additions: int = 0
    deletions: int = 0
    sha: str = ""
    previous_filename: str | None = None

    @property
    def changes(self) -> int:
        return self.additions + self.deletions


@dataclass
class Pull:
    repo: Repo
    number: int
    id: int
    title: str
    body: str | None
    user: User
    state: str
    draft: bool
    base_ref: str
    base_sha: str
    head_ref: str
    head_sha: str
    head_repo: Repo
    author_association: str
    created_at: float
    files_by_sha: dict[str, list[PullFile]] = field(default_factory=dict)
    diff_too_large: bool = False

    @property
    def files(self) -> list[PullFile]:
        return self.files_by_sha[self.head_sha]

    @property
    def node_id(self) -> str:
        return node_id("PR", self.repo.id, self.id)


@dataclass
class CheckRun:
    id: int
    repo: Repo
    app_id: int
    head_sha: str
    name: str
    status: str
    conclusion: str | None
    started_at: str | None
    completed_at: str | None
    details_url: str | None
    external_id: str | None
    output: dict[str, Any]
    annotations: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    check_suite_id: int
    # Every payload the App sent for this run, in order: ("create" | "update", body).
    history: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    @property
    def updates(self) -> list[dict[str, Any]]:
        return [body for _, body in self.history]


@dataclass
class Review:
    id: int
    pull: Pull
    user: User
    body: str
    state: str
    commit_id: str
    submitted_at: float | None
    comment_ids: list[int] = field(default_factory=list)

    @property
    def node_id(self) -> str:
        return node_id("PRR", self.pull.repo.id, self.id)


@dataclass
class ReviewComment:
    id: int
    pull: Pull
    review_id: int
    thread: Thread
    user: User
    body: str
    path: str
    commit_id: str
    line: int | None
    start_line: int | None
    side: str | None
    start_side: str | None
    position: int | None
    diff_hunk: str
    subject_type: str
    author_association: str
    created_at: float
    updated_at: float
    in_reply_to_id: int | None = None
    # Where the comment was made; line/start_line/position become None when a push outdates it.
    original_line: int | None = None
    original_start_line: int | None = None
    original_position: int | None = None

    @property
    def node_id(self) -> str:
        return node_id("PRRC", self.pull.repo.id, self.id)


@dataclass
class Thread:
    id: int
    pull: Pull
    path: str
    line: int | None
    start_line: int | None
    side: str
    start_side: str | None
    subject_type: str
    comments: list[ReviewComment] = field(default_factory=list)
    resolved: bool = False
    resolved_by: User | None = None

    @property
    def node_id(self) -> str:
        return node_id("PRRT", self.pull.repo.id, self.id)


@dataclass
class IssueComment:
    id: int
    repo: Repo
    number: int
    user: User
    body: str
    author_association: str
    created_at: float
    updated_at: float

    @property
    def node_id(self) -> str:
        return node_id("IC", self.repo.id, self.id)


@dataclass
class Reaction:
    id: int
    comment: IssueComment
    user: User
    content: str
    created_at: float


@dataclass
class Repo:
    id: int
    owner: User
    name: str
    private: bool
    default_branch: str
    installation_id: int | None
    commits: dict[str, Commit] = field(default_factory=dict)
    branches: dict[str, str] = field(default_factory=dict)
    blobs: dict[str, bytes] = field(default_factory=dict)
    trees: dict[str, list[TreeEntry]] = field(default_factory=dict)
    pulls: dict[int, Pull] = field(default_factory=dict)
    roles: dict[str, str] = field(default_factory=dict)  # login -> admin|maintain|write|triage|read|none

    @property
    def full_name(self) -> str:
        return f"{self.owner.login}/{self.name}"

    @property
    def node_id(self) -> str:
        return node_id("R", self.id)

    def resolve(self, ref: str) -> str | None:
        """A commit sha for a branch name, `refs/heads/x`, `heads/x`, a full sha or a unique sha prefix."""
        for prefix in ("refs/heads/", "heads/"):
            if ref.startswith(prefix):
                ref = ref[len(prefix) :]
        if ref in self.branches:
            return self.branches[ref]
        if ref in self.commits:
            return ref
        if len(ref) >= 7:
            found = [sha for sha in self.commits if sha.startswith(ref)]
            if len(found) == 1:
                return found[0]
        return None

    def _write_tree(self, files: dict[str, bytes], modes: dict[str, str]) -> str:
        """Store the blobs and trees of `files` with git's object ids; return the root tree sha."""
        root: dict[str, Any] = {}
        for path in files:
            node = root
            parts = path.split("/")
            for part in parts[:-1]:
                node = node.setdefault(part, {})
            node[parts[-1]] = path

        def build(node: dict[str, Any], prefix: str) -> tuple[str, list[TreeEntry]]:
            entries: list[TreeEntry] = []
            for name, value in node.items():
                full = f"{prefix}{name}"
                if isinstance(value, dict):
                    sha, _ = build(value, full + "/")
                    entries.append(TreeEntry(full, name, "040000", "tree", sha, None))
                else:
                    data = files[value]
                    sha = git_sha("blob", data)
                    self.blobs[sha] = data
                    entries.append(TreeEntry(full, name, modes.get(value, "100644"), "blob", sha, len(data)))
            # git orders tree entries by name, with a tree named as if it ended in "/".
            entries.sort(key=lambda e: e.name + ("/" if e.type == "tree" else ""))
            raw = b"".join(f"{e.mode.lstrip('0')} {e.name}".encode() + b"\0" + bytes.fromhex(e.sha) for e in entries)
            sha = git_sha("tree", raw)
            self.trees[sha] = entries
            return sha, entries

        sha, _ = build(root, "")
        return sha

    def commit(
        self,
        files: dict[str, FileContent],
        *,
        branch: str | None = None,
        parent: str | None = None,
        modes: dict[str, str] | None = None,
        message: str = "commit",
    ) -> str:
        """Add a commit whose tree is exactly `files`; move `branch` to it; return its sha."""
        data = {path: (c.encode() if isinstance(c, str) else c) for path, c in files.items()}
        tree = self._write_tree(data, modes or {})
        parents = [p for p in [self.resolve(parent) if parent else None] if p]
        stamp = 1_700_000_000 + len(self.commits)
        text = f"tree {tree}\n" + "".join(f"parent {p}\n" for p in parents)
        text += f"author Fake <fake@example.com> {stamp} +0000\ncommitter Fake <fake@example.com> {stamp} +0000\n\n"
        text += message + "\n"
        sha = git_sha("commit", text.encode())
        self.commits[sha] = Commit(sha, tree, data, dict(modes or {}), parents)
        if branch:
            self.branches[branch] = sha
        return sha

    def files_at(self, ref: str) -> dict[str, bytes]:
        sha = self.resolve(ref)
        if sha is None:
            raise KeyError(f"{self.full_name} has no ref {ref!r}")
        return self.commits[sha].files


def diff_files(base: dict[str, bytes], head: dict[str, bytes], renames: dict[str, str] | None = None) -> list[PullFile]:
    """The pull request files GitHub lists for base...head (rename pairs only when given)."""
    renames = renames or {}
    renamed_from = {new: old for old, new in renames.items()}
    out: list[PullFile] = []
    for path in sorted(set(base) | set(head)):
        if path in renames:
            continue  # listed under its new name
        old_path = renamed_from.get(path, path)
        old, new = base.get(old_path), head.get(path)
        if old == new and old_path == path:
            continue
        if new is None:
            status = "removed"
        elif old is None:
            status = "added"
        elif old_path != path:
            status = "renamed"
        else:
            status = "modified"
        sha = git_sha("blob", new if new is not None else old or b"")
        if any(x is not None and is_binary(x) for x in (old, new)):
            out.append(PullFile(path, status, None, 0, 0, sha, old_path if status == "renamed" else None))
            continue
        patch, additions, deletions = make_patch(
            old.decode() if old is not None else None, new.decode() if new is not None else None
        )
        out.append(
            PullFile(
                path,
                status,
                patch or None,
                additions,
                deletions,
                sha,
                old_path if status == "renamed" else None,
            )
        )
    return out


class Ids:
    """GitHub-like ids: one counter per kind of object, starting at distinct, realistic values."""

    def __init__(self) -> None:
        self._counters: dict[str, itertools.count[int]] = {}

    def next(self, kind: str) -> int:
        if kind not in self._counters:
            start = {"user": 1000, "repo": 500000, "pull": 9_000_000, "check_run": 4_000_000}.get(kind, 100_000)
            self._counters[kind] = itertools.count(start)
        return next(self._counters[kind])


def now() -> float:
    return time.time()
