"""The review of a GitCode merge request: the same core as a GitHub PR's (files at head, config at base, the rules
off the event loop, one inline comment per cause within the repo config's budget, fingerprints in hidden
markers), reported the GitCode way: inline comments one call each on their diff position, one summary comment
updated in place (what a check run shows on GitHub), and a gate label (pass or fail).

Stale comments (their finding gone): deleted when nobody replied, edited to say the finding is gone when someone
did. `/recheck` runs it again for a member with write access (asked when the job runs, not before the 202).

Assumed, because GitCode documents no more (see bot/gitcode.py for the documented parts):
- `position` of an inline comment ("Relative Line Number in the Diff"): the line's 1-based index in the file's
  diff text after its first `@@` header, later headers counted (GitHub's v3 `position`, which GitCode's v5 API
  follows in names and shapes);
- a reply to an inline comment is a comment of the same `discussion_id`, or one whose `in_reply_to_id` is its id;
- write access: the member permission (GET .../collaborators/{user}/permission) is "admin", "write" or
  "maintain" (or "owner");
- content-creating calls: at most NPU_REVIEW_GITCODE_WRITES_PER_MINUTE a minute per repository owner (default
  60), shared through Redis like GitHub's windows.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from npu_review.bot import reporters
from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.diffmap import DiffMap
from npu_review.bot.engine_pool import Engine
from npu_review.bot.gitcode import GitCodeClient, GitCodeUnavailable
from npu_review.bot.github import FAILED, failure_kind
from npu_review.bot.jobs import HeadStore
from npu_review.bot.limits import WindowStore
from npu_review.bot.logs import set_context
from npu_review.bot.review import Outcome, ReviewRequest
from npu_review.checks import ChangeSet, ConfigError, parse_config
from npu_review.checks.config import CONFIG_PATH, config_text
from npu_review.checks.diffing import added_lines_between, parse_patch
from npu_review.checks.engine import known_rule_ids, named_paths, needed_paths
from npu_review.checks.model import ChangeStatus, FileChange, Finding, MemoryTree
from npu_review.checks.severity_map import conclusion
from npu_review.checks.textio import MAX_TEXT_BYTES, decode_blob

log = logging.getLogger(__name__)

SUMMARY_MARKER = "<!-- npu-review:summary -->"
WRITE_PERMISSIONS = frozenset({"admin", "write", "maintain", "owner"})
# Inline comments that say their finding is gone start with this (edited once, not again).
GONE_PREFIX = "✅ **Fixed**"
DEFAULT_PASS_LABEL = "npu-review: pass"
DEFAULT_FAIL_LABEL = "npu-review: fail"
# Content fetched per review at most (as on GitHub).
MAX_FILES_FETCHED = 1500
# Attempts at one inline comment, each after looking whether the last one landed.
COMMENT_ATTEMPTS = 3
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+(\d+)(?:,\d+)? @@")


def diff_positions(diff: str) -> dict[int, int]:
    """head line -> its `position` in the file's diff (added and context lines; see the module's assumption)."""
    out: dict[int, int] = {}
    position = 0
    new_line = 0
    started = False
    for line in diff.splitlines():
        m = _HUNK.match(line)
        if m:
            if started:
                position += 1
            started = True
            new_line = int(m.group(1))
            continue
        if not started or line.startswith("\\"):
            continue
        position += 1
        if line.startswith("-"):
            continue
        out[new_line] = position
        new_line += 1
    return out


@dataclass(frozen=True)
class Labels:
    passed: str = DEFAULT_PASS_LABEL
    failed: str = DEFAULT_FAIL_LABEL


class GitCodeReviewer:
    def __init__(
        self,
        client: GitCodeClient,
        heads: HeadStore,
        engine: Engine,
        windows: WindowStore,
        labels: Labels = Labels(),
        writes_per_minute: int = 60,
        timeout_s: float = 600.0,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.client = client
        self.heads = heads
        self.engine = engine
        self.windows = windows
        self.labels = labels
        self.writes_per_minute = writes_per_minute
        self.timeout_s = timeout_s
        self.clock = clock

    async def review(self, req: ReviewRequest, external_id: str | None = None, resumed: bool = False) -> Outcome:
        """One run (a resumed or retried job simply runs again: its comments are found by their markers, its
        summary comment is edited in place). A failure GitCode may get over (5xx, 429, a timeout) goes up as it
        is: the job waits and is tried again. Any other failure is said in the summary comment (as a neutral
        check run says it on GitHub), then goes up."""
        try:
            return await self._review(req)
        except Exception as exc:
            if failure_kind(exc) != FAILED:
                raise
            log.exception("the review failed")
            reason = f"an internal error stopped it ({type(exc).__name__})"
            with contextlib.suppress(Exception):  # GitCode may refuse this too: the error above is what counts
                await self._summary(req.owner, req.repo, req.number, self._failed_summary(reason))
            raise

    async def conclude_abandoned(
        self, req: ReviewRequest, external_id: str, reason: str = "", create: bool = False
    ) -> None:
        """Nothing shows "in progress" on GitCode; a job given up (`create`) says why in the summary comment."""
        if create and reason:
            await self._summary(req.owner, req.repo, req.number, self._failed_summary(reason))

    async def _review(self, req: ReviewRequest) -> Outcome:
        c = self.client
        owner, repo, number = req.owner, req.repo, req.number
        set_context(repo=f"gitcode:{owner}/{repo}", pr=number)
        if req.requested_by:
            permission = await c.permission(owner, repo, req.requested_by)
            if permission.lower() not in WRITE_PERMISSIONS:
                log.info("ignored /recheck from %s (permission %r)", req.requested_by, permission or "none")
                return Outcome("", "", skipped=True)
        pull = await c.get_pull(owner, repo, number)
        head_sha = str((pull.get("head") or {}).get("sha") or req.head_sha or "")
        base_sha = str((pull.get("base") or {}).get("sha") or "")
        set_context(head=head_sha[:12])
        # The merge request as GitCode has it now is what is reviewed (a job queued for an older head included).
        await self.heads.note_head(req.key, f"gitcode:{owner}/{repo}".lower(), number, head_sha)
        gathered = await asyncio.wait_for(self._gather(owner, repo, number, pull, head_sha, base_sha), self.timeout_s)
        if isinstance(gathered, str):
            await self._summary(owner, repo, number, self._failed_summary(gathered))
            return Outcome(head_sha, "neutral", private=True)
        changeset, config, diffmap, positions = gathered
        report = await asyncio.wait_for(self.engine.run(changeset, config), self.timeout_s)
        outcome = Outcome(head_sha, conclusion(report.findings), report.findings, private=True)
        latest = await self.heads.latest_head(req.key)
        if latest not in (None, head_sha):
            outcome.superseded = True
            log.info("a newer head %s came: comments are left to its review", latest[:12])
            return outcome
        login = await c.login()
        existing = await c.comments(owner, repo, number)
        ours = [x for x in existing if _author(x) == login]
        await self._comments(req, report.findings, diffmap, positions, config, ours, existing, outcome, head_sha)
        body = self._summary_body(report.findings, report.files_checked, report.errors, head_sha)
        await self._summary(owner, repo, number, body, ours)
        await self._gate(owner, repo, number, outcome.conclusion)
        log.info(
            "review done: %s, %d findings, %d comments posted, %d edited, %d deleted",
            outcome.conclusion,
            len(report.findings),
            outcome.posted,
            outcome.resolved,
            outcome.deleted,
        )
        return outcome

    # -- reading ------------------------------------------------------------------------------------------
    async def _gather(
        self, owner: str, repo: str, number: int, pull: Mapping[str, Any], head_sha: str, base_sha: str
    ) -> tuple[ChangeSet, Any, DiffMap, dict[str, dict[int, int]]] | str:
        c = self.client
        files, head_entries, base_entries, config_bytes = await asyncio.gather(
            c.pull_files(owner, repo, number),
            c.tree(owner, repo, head_sha),
            c.tree(owner, repo, base_sha),
            c.file(owner, repo, CONFIG_PATH, base_sha),
        )
        try:
            source = f"{CONFIG_PATH} on the target branch"
            text = config_text(config_bytes, source) if config_bytes is not None else None
            config = parse_config(text, known_rule_ids(), source=source)
        except ConfigError as exc:
            return f"the repo config is invalid: {exc}"
        changes: dict[str, FileChange] = {}
        diffmap = DiffMap()
        positions: dict[str, dict[int, int]] = {}
        too_large: list[str] = []
        for f in files:
            patch = f.get("patch") if isinstance(f.get("patch"), dict) else {}
            path = str(patch.get("new_path") or f.get("filename") or "")
            if not path:
                continue
            old = str(patch.get("old_path") or path)
            status = (
                ChangeStatus.DELETED
                if patch.get("deleted_file")
                else ChangeStatus.ADDED
                if patch.get("new_file")
                else ChangeStatus.RENAMED
                if patch.get("renamed_file")
                else ChangeStatus.MODIFIED
            )
            diff = patch.get("diff")
            if patch.get("too_large") or not isinstance(diff, str):
                too_large.append(path)  # its added lines come from the contents (below); no inline comments
                changes[path] = FileChange(path, status, old if status == ChangeStatus.RENAMED else None)
                continue
            added, right = parse_patch(diff)
            if right:
                diffmap.lines[path] = right
                positions[path] = diff_positions(diff)
            changes[path] = FileChange(path, status, old if status == ChangeStatus.RENAMED else None, added)
        head_sha_of = {str(e["path"]): str(e["sha"]) for e in head_entries}
        base_sha_of = {str(e["path"]): str(e["sha"]) for e in base_entries}
        want_head, want_base = needed_paths(head_sha_of.keys(), changes, config)
        want_head = set(want_head) | {p for p in too_large if p in head_sha_of}
        olds = {changes[p].old_path or p for p in too_large}
        want_base = set(want_base) | {p for p in olds if p in base_sha_of}
        ordered = sorted(want_head, key=lambda p: (p not in changes, p))[:MAX_FILES_FETCHED]
        head_files, base_files = await asyncio.gather(
            self._fetch(owner, repo, ordered, head_sha_of), self._fetch(owner, repo, sorted(want_base), base_sha_of)
        )
        # What the changed files name (a guide's Python scripts) is known only from their text: a second fetch.
        changed_texts = {p: head_files.get(p) for p in changes}
        named = sorted(named_paths(head_sha_of.keys(), changed_texts, changes, config) - head_files.keys())
        if named:
            head_files.update(await self._fetch(owner, repo, named, head_sha_of))
        for path in too_large:
            new, change = head_files.get(path), changes[path]
            if change.status == ChangeStatus.DELETED or new is None:
                continue
            before = base_files.get(change.old_path or path)
            lines = (
                frozenset(range(1, len(new.splitlines()) + 1))
                if before is None or change.status == ChangeStatus.ADDED
                else added_lines_between(before, new)
            )
            changes[path] = FileChange(path, change.status, change.old_path, lines)
        cs = ChangeSet(
            head=MemoryTree(head_files, head_sha_of.keys(), head_sha_of),
            base=MemoryTree(base_files, base_sha_of.keys(), base_sha_of),
            changes=changes,
            title=str(pull.get("title") or ""),
            repository=f"{owner}/{repo}",
        )
        return cs, config, diffmap, positions

    async def _fetch(self, owner: str, repo: str, paths: list[str], shas: Mapping[str, str]) -> dict[str, str | None]:
        gate = asyncio.Semaphore(8)

        async def one(path: str) -> tuple[str, str | None]:
            async with gate:
                raw = await self.client.blob(owner, repo, shas[path])
            return path, decode_blob(raw) if len(raw) <= MAX_TEXT_BYTES else None

        pairs = await asyncio.gather(*(one(p) for p in paths if p in shas))
        return dict(pairs)

    # -- writing ------------------------------------------------------------------------------------------
    async def _paced(self, owner: str) -> None:
        """Waits for room in the owner's window of content-creating calls (assumed; see the module)."""
        while True:
            wait = await self.windows.take(f"gitcode-writes:{owner.lower()}", ((60.0, self.writes_per_minute),))
            if wait <= 0:
                return
            await asyncio.sleep(wait)

    async def _comments(
        self,
        req: ReviewRequest,
        findings: list[Finding],
        diffmap: DiffMap,
        positions: Mapping[str, Mapping[int, int]],
        config: Any,
        ours: list[dict[str, Any]],
        existing: list[dict[str, Any]],
        outcome: Outcome,
        head_sha: str,
    ) -> None:
        owner, repo = req.owner, req.repo
        mine: dict[str, dict[str, Any]] = {}
        for x in ours:
            fp = reporters.parse_marker(x.get("body"))
            if fp and fp not in mine:
                mine[fp] = x
        inline, _ = reporters.inline_causes(
            findings, diffmap, set(mine), config.inline_notices, config.max_inline_comments
        )
        for cause in inline:
            f = cause.lead
            position = positions.get(f.path, {}).get(f.end_line)
            if position is None:
                continue
            await self._post_once(req, reporters.comment_body(f, cause), f.path, position, f.fingerprint)
            outcome.posted += 1
        current = {f.fingerprint for f in findings}
        replied = _replied(existing, {str(x.get("id")) for x in ours})
        for fp, x in mine.items():
            if fp in current:
                continue
            cid = str(x.get("id"))
            body = str(x.get("body") or "")
            if cid in replied:
                if not body.startswith(GONE_PREFIX):
                    await self._paced(owner)
                    gone = f"{GONE_PREFIX} in {head_sha[:12]}: this finding is gone.\n\n~~" + _first_line(body) + "~~"
                    await self.client.edit_comment(owner, repo, cid, gone + "\n\n" + reporters.marker(fp))
                    outcome.resolved += 1
            else:
                await self._paced(owner)
                await self.client.delete_comment(owner, repo, cid)
                outcome.deleted += 1

    async def _post_once(self, req: ReviewRequest, body: str, path: str, position: int, fp: str) -> None:
        """An inline comment, never twice: after a failed attempt the markers on the MR are read first."""
        owner, repo, number = req.owner, req.repo, req.number
        for attempt in range(1, COMMENT_ATTEMPTS + 1):
            await self._paced(owner)
            try:
                await self.client.create_comment(owner, repo, number, body, path, position)
                return
            except GitCodeUnavailable:
                if attempt == COMMENT_ATTEMPTS:
                    raise
            login = await self.client.login()
            for x in await self.client.comments(owner, repo, number):
                if _author(x) == login and reporters.parse_marker(x.get("body")) == fp:
                    return  # it landed; the answer was lost

    def _summary_body(self, findings: list[Finding], files: int, errors: list[str], head_sha: str) -> str:
        title = reporters.title(findings)
        text = reporters.summary(findings, files, errors)
        gate = conclusion(findings)
        verdict = self.labels.failed if gate == "failure" else self.labels.passed
        return f"{SUMMARY_MARKER}\n### {title}\n\nCommit {head_sha[:12]}, label `{verdict}`.\n\n{text}"

    def _failed_summary(self, reason: str) -> str:
        return (
            f"{SUMMARY_MARKER}\n### npu-review could not complete\n\nThe review did not finish: {reason}\n\n"
            "Comment `/recheck` to try again."
        )

    async def _summary(
        self, owner: str, repo: str, number: int, body: str, ours: list[dict[str, Any]] | None = None
    ) -> None:
        """One summary comment per merge request, edited in place."""
        if ours is None:
            login = await self.client.login()
            ours = [x for x in await self.client.comments(owner, repo, number) if _author(x) == login]
        found = next((x for x in ours if SUMMARY_MARKER in str(x.get("body") or "")), None)
        await self._paced(owner)
        if found is None:
            await self.client.create_comment(owner, repo, number, body)
        elif str(found.get("body") or "") != body:
            await self.client.edit_comment(owner, repo, str(found.get("id")), body)

    async def _gate(self, owner: str, repo: str, number: int, result: str) -> None:
        """The gate label: the fail one on an error finding, else the pass one; the other taken off."""
        failed, passed = self.labels.failed, self.labels.passed
        want, drop = (failed, passed) if result == "failure" else (passed, failed)
        present = set(await self.client.labels(owner, repo, number))
        if drop in present:
            await self._paced(owner)
            await self.client.remove_label(owner, repo, number, drop)
        if want not in present:
            await self._paced(owner)
            await self.client.add_labels(owner, repo, number, [want])


def _author(comment: Mapping[str, Any]) -> str:
    user = comment.get("user")
    return str(user.get("login") or "") if isinstance(user, dict) else ""


def _replied(comments: list[dict[str, Any]], ours: set[str]) -> set[str]:
    """Our comments someone answered: a comment of the same discussion, or one that names ours as its parent."""
    by_discussion: dict[str, list[str]] = {}
    for x in comments:
        d = x.get("discussion_id")
        if d:
            by_discussion.setdefault(str(d), []).append(str(x.get("id")))
    out = set()
    for x in comments:
        cid = str(x.get("id"))
        parent = x.get("in_reply_to_id")
        if parent is not None and str(parent) in ours and cid not in ours:
            out.add(str(parent))
        d = x.get("discussion_id")
        if cid in ours and d and len(by_discussion.get(str(d), [])) > 1:
            out.add(cid)
    return out


def _first_line(body: str) -> str:
    return body.splitlines()[0] if body else ""
