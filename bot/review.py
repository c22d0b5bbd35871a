"""The review orchestrator: read the PR from GitHub, run the checks, post one review and complete the check run."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from npu_review.bot import reporters
from npu_review.bot.clock import SYSTEM_CLOCK, Clock
from npu_review.bot.diffmap import DiffMap, from_diff, from_files
from npu_review.bot.engine_pool import Engine
from npu_review.bot.github import FAILED, MAX_PR_FILES, GitHubApp, RepoClient, failure_kind
from npu_review.bot.jobs import HeadStore, pr_key, repo_key
from npu_review.bot.logs import set_context
from npu_review.checks import ChangeSet, Config, ConfigError, parse_config
from npu_review.checks.config import CONFIG_PATH, config_text
from npu_review.checks.diffing import DiffError, added_lines_between, parse_diff
from npu_review.checks.engine import Report, known_rule_ids, named_paths, needed_paths
from npu_review.checks.model import ChangeStatus, FileChange, Finding, MemoryTree
from npu_review.checks.textio import MAX_TEXT_BYTES, decode_blob

log = logging.getLogger(__name__)

GITHUB = "github"
GITCODE = "gitcode"
# The reaction that tells a `/recheck` author the command was accepted.
ACCEPTED_REACTION = "+1"
# An unchanged head (same head SHA, same config on the base) is re-reviewed by `/recheck` at most this often,
# unless the commenter is OWNER, MEMBER or COLLABORATOR.
RECHECK_COOLDOWN_S = 300.0
# Attempts at posting the review when GitHub fails (each after checking what was posted).
REVIEW_ATTEMPTS = 3
# Content fetched per review at most; a PR beyond this is reviewed on the first files and says so.
MAX_FILES_FETCHED = 1500
# A review that finishes within this many seconds creates its check run already completed (one call, with the
# output and the first 50 annotations); a longer one shows an in-progress run from this point on.
QUICK_REVIEW_S = 3.0


def pull_fields(pull: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a PR payload a review reads: what a queued job keeps of the event (its ~20 KB payload would
    be written to the queue with every delivery)."""
    found = pull.get("base")
    base: Mapping[str, Any] = found if isinstance(found, dict) else {}
    found = base.get("repo")
    repo: Mapping[str, Any] = found if isinstance(found, dict) else {}
    return {
        "head": {"sha": pull["head"]["sha"]},
        "base": {"sha": base.get("sha"), "repo": {"private": repo.get("private", True)}},
        "changed_files": pull.get("changed_files"),
        "title": pull.get("title"),
    }


@dataclass(frozen=True)
class ReviewRequest:
    installation_id: int
    owner: str
    repo: str
    number: int
    head_sha: str | None = None  # the commit to review; None: the PR's current head
    pull: Mapping[str, Any] | None = None  # the PR as the event carried it (saves a call)
    react_to_comment: int | None = None  # a `/recheck` comment to acknowledge with a reaction
    delivery: str = ""
    # Who asked for it by `/recheck`, and whether they may re-review an unchanged head at any time
    # (OWNER, MEMBER, COLLABORATOR) or at most once per RECHECK_COOLDOWN_S (the PR's author).
    requested_by: str = ""
    trusted: bool = True
    # Where the change request lives: "github" (a PR of an installation) or "gitcode" (a merge request; its
    # repository reached with the GitCode token, installation_id 0).
    platform: str = GITHUB

    @property
    def key(self) -> str:
        key = pr_key(self.owner, self.repo, self.number)
        return key if self.platform == GITHUB else f"{self.platform}:{key}"

    def to_json(self) -> dict[str, Any]:
        # Shallow on purpose: dataclasses.asdict would deep-copy the PR payload (~1 ms a delivery); the queue
        # serialises this at once.
        return {name: getattr(self, name) for name in self.__dataclass_fields__}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReviewRequest:
        fields: dict[str, Any] = {k: data[k] for k in cls.__dataclass_fields__ if k in data}
        return cls(**fields)


@dataclass
class Outcome:
    head_sha: str
    conclusion: str
    findings: list[Finding] = field(default_factory=list)
    posted: int = 0
    resolved: int = 0
    deleted: int = 0
    superseded: bool = False
    already_done: bool = False  # a resumed job whose check run had been completed before the crash
    skipped: bool = False  # a `/recheck` of an unchanged head within RECHECK_COOLDOWN_S: nothing done
    private: bool = True  # the repository's visibility (the status page names only public ones to everyone)


class ReviewTooLong(RuntimeError):
    """The rules did not finish within the review timeout."""


class CheckRunSlot:
    """The run's check run, made only when needed: in progress once the review has taken QUICK_REVIEW_S, or at
    the end already completed (one call instead of two). Its external_id is the job's id, so a resumed job
    looks it up before making another."""

    def __init__(self, repo: RepoClient, head_sha: str, external_id: str, delay_s: float) -> None:
        self.repo = repo
        self.head_sha = head_sha
        self.external_id = external_id
        self.delay_s = delay_s
        self.id: int | None = None
        # Annotations an earlier attempt already added to the run (GitHub appends them): not sent again.
        self.annotations_sent = 0
        self._timer: asyncio.Task[None] | None = None
        self._creating = False

    def start_timer(self) -> None:
        if self.id is None and self._timer is None:
            self._timer = asyncio.ensure_future(self._create_in_progress())

    async def _create_in_progress(self) -> None:
        await asyncio.sleep(self.delay_s)
        self._creating = True
        payload = {**reporters.check_run_started(self.head_sha), "external_id": self.external_id}
        created = await self.repo.create_check_run(payload)
        self.id = int(created["id"])

    async def settle(self) -> int | None:
        """Stops the timer if it has not fired; waits for a creation under way. The id, or None."""
        timer, self._timer = self._timer, None
        if timer is None:
            return self.id
        if not self._creating:
            timer.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            try:
                await timer
            except Exception:  # the in-progress run could not be made: the completed one is made at the end
                log.warning("could not create the in-progress check run", exc_info=True)
        return self.id

    async def finish(self, final: dict[str, Any], batches: list[list[dict[str, Any]]]) -> None:
        """Completes the run: a new run carries the output and the first batch of annotations in its creation;
        an existing one gets the batches first and the conclusion with the last (GitHub appends annotations)."""
        check_run_id = await self.settle()
        output = final["output"]
        if check_run_id is None:
            first, rest = (batches[0], batches[1:]) if batches else ([], [])
            payload = {
                "name": reporters.CHECK_NAME,
                "head_sha": self.head_sha,
                "external_id": self.external_id,
                **final,
                "output": {**output, "annotations": first} if first else output,
            }
            created = await self.repo.create_check_run(payload)
            self.id = int(created["id"])
            for batch in rest:
                await self.repo.update_check_run(self.id, {"output": {**output, "annotations": batch}})
            return
        if self.annotations_sent:
            left = [a for batch in batches for a in batch][self.annotations_sent :]
            size = reporters.ANNOTATIONS_PER_REQUEST
            batches = [left[i : i + size] for i in range(0, len(left), size)]
        for batch in batches[:-1]:
            await self.repo.update_check_run(check_run_id, {"output": {**output, "annotations": batch}})
            self.annotations_sent += len(batch)
        if batches:
            final = {**final, "output": {**output, "annotations": batches[-1]}}
        await self.repo.update_check_run(check_run_id, final)


class Reviewer:
    def __init__(
        self,
        app: GitHubApp,
        heads: HeadStore,
        engine: Engine,
        timeout_s: float = 600.0,
        quick_review_s: float = QUICK_REVIEW_S,
        clock: Clock = SYSTEM_CLOCK,
    ) -> None:
        self.app = app
        self.clock = clock
        # Newest head per PR (a run for an older head posts no inline comments), PR per head (fork check runs).
        self.heads = heads
        # Runs the rules off this process's event loop (bot/engine_pool.py).
        self.engine = engine
        self.timeout_s = timeout_s
        self.quick_review_s = quick_review_s

    async def note_head(self, owner: str, repo: str, number: int, head_sha: str) -> None:
        await self.heads.note_head(pr_key(owner, repo, number), repo_key(owner, repo), number, head_sha)

    async def is_current(self, req: ReviewRequest, head_sha: str) -> bool:
        latest = await self.heads.latest_head(req.key)
        return latest is None or latest == head_sha

    # -- the run ---------------------------------------------------------------------------------------
    async def conclude_abandoned(
        self,
        req: ReviewRequest,
        external_id: str,
        reason: str = "the server stopped during the review, and a newer commit of this PR is reviewed instead",
        create: bool = False,
    ) -> None:
        """A job that was running when its process died (or waited on GitHub), and that a newer head has
        superseded since: conclude the check run it may have left in progress; with `create`, make a concluded
        one if it had none."""
        repo = self.app.repo(req.installation_id, req.owner, req.repo)
        head_sha = req.head_sha or str((await repo.get_pull(req.number))["head"]["sha"])
        found = await repo.find_check_run(head_sha, reporters.CHECK_NAME, external_id)
        if found is not None and found.get("status") != "completed":
            await repo.update_check_run(int(found["id"]), reporters.check_run_failed(reason))
            log.info("concluded check run %s left in progress: %s", found["id"], reason)
        elif found is None and create:
            slot = CheckRunSlot(repo, head_sha, external_id, self.quick_review_s)
            await slot.finish(reporters.check_run_failed(reason), [])

    async def _recheck_due(self, repo: RepoClient, req: ReviewRequest, pull: Mapping[str, Any], head_sha: str) -> bool:
        """Whether a `/recheck` re-reviews now: not when the same head with the same base config was re-reviewed
        by a recheck less than RECHECK_COOLDOWN_S ago and the commenter is not trusted."""
        config = await repo.file_sha(CONFIG_PATH, str(pull["base"]["sha"]))
        state = f"{head_sha}:{config or '-'}"
        now = self.clock.time()
        last = await self.heads.last_recheck(req.key)
        if not req.trusted and last is not None and last[0] == state and now - last[1] < RECHECK_COOLDOWN_S:
            log.info(
                "/recheck by %s: this head and config were re-reviewed %.0f s ago; not again before %.0f s",
                req.requested_by,
                now - last[1],
                RECHECK_COOLDOWN_S,
            )
            return False
        await self.heads.note_recheck(req.key, state, now)
        return True

    async def review(self, req: ReviewRequest, external_id: str | None = None, resumed: bool = False) -> Outcome:
        repo = self.app.repo(req.installation_id, req.owner, req.repo)
        pull = dict(req.pull) if req.pull is not None else await repo.get_pull(req.number)
        head_sha = req.head_sha or str(pull["head"]["sha"])
        set_context(repo=repo.full_name, pr=req.number, head=head_sha[:12])
        private = bool((pull.get("base") or {}).get("repo", {}).get("private", True))
        if req.react_to_comment is not None:
            # A retried job was let through on its first try; its check run may exist already.
            if not resumed and not await self._recheck_due(repo, req, pull, head_sha):
                return Outcome(head_sha, "", skipped=True, private=private)
            try:
                await repo.react_to_issue_comment(req.react_to_comment, ACCEPTED_REACTION)
            except Exception:  # an acknowledgement only: the review matters more
                log.warning("could not react to comment %s", req.react_to_comment, exc_info=True)
        if req.head_sha is None or req.pull is not None:
            await self.note_head(req.owner, req.repo, req.number, str(pull["head"]["sha"]))
        slot = CheckRunSlot(repo, head_sha, external_id or uuid.uuid4().hex, self.quick_review_s)
        if resumed and external_id:
            # The process that ran this job died: it may have made the check run, or even completed it.
            found = await repo.find_check_run(head_sha, reporters.CHECK_NAME, external_id)
            if found is not None and found.get("status") == "completed":
                log.info("check run %s of this job was completed before the restart", found["id"])
                return Outcome(head_sha, str(found.get("conclusion") or ""), already_done=True, private=private)
            if found is not None:
                # The findings of an unchanged head are the same: annotations the earlier attempt added stay,
                # the rest follow (GitHub appends them).
                slot.id = int(found["id"])
                slot.annotations_sent = int((found.get("output") or {}).get("annotations_count") or 0)
                log.info("resuming with check run %s (%d annotations already there)", slot.id, slot.annotations_sent)
        completed = False
        try:
            slot.start_timer()
            gathered = await asyncio.wait_for(self._gather(repo, req.number, pull, head_sha), self.timeout_s)
            if isinstance(gathered, str):  # the repo config is broken: say so, review nothing
                await slot.finish(reporters.check_run_failed(gathered), [])
                completed = True
                return Outcome(head_sha, "neutral", private=private)
            changeset, config, diffmap, note = gathered
            # The bot's earlier comments are read while the engine runs: they do not depend on its result.
            existing = asyncio.ensure_future(self._existing_comments(repo, req.number))
            try:
                report = await asyncio.wait_for(self.engine.run(changeset, config), self.timeout_s)
            except TimeoutError:
                existing.cancel()
                # Not GitHub's doing: the same change would take as long again, so it is not retried.
                raise ReviewTooLong(f"the rules took longer than {self.timeout_s:.0f} s") from None
            except BaseException:
                existing.cancel()
                raise
            outcome = Outcome(head_sha, "", report.findings, private=private)
            notes = [note] if note else []
            post_error: Exception | None = None
            if await self.is_current(req, head_sha):
                try:
                    comments = await existing
                    await self._post_review(repo, req.number, head_sha, report, diffmap, outcome, comments, config)
                except Exception as exc:  # the check run still carries every finding
                    if failure_kind(exc) != FAILED:
                        raise  # GitHub down: the job is tried again, and this run completed then
                    log.exception("posting the review failed")
                    post_error = exc
                    notes.append(f"Inline comments could not be posted ({type(exc).__name__}); see the table below.")
            else:
                existing.cancel()
                outcome.superseded = True
                notes.append("A newer commit was pushed to this PR; inline comments are left to its review.")
            outcome.conclusion = await self._complete(slot, report, " ".join(notes))
            completed = True
            log.info(
                "review done: %s, %d findings, %d comments posted, %d resolved, %d deleted",
                outcome.conclusion,
                len(report.findings),
                outcome.posted,
                outcome.resolved,
                outcome.deleted,
            )
            if post_error is not None:
                raise post_error  # the delivery counts as failed, so a redelivery tries the comments again
            return outcome
        except Exception as exc:
            if completed or failure_kind(exc) != FAILED:
                # GitHub could not serve it, or the thing is gone: the check run is left as it is (the job is tried
                # again later and finds it by external_id), only a creation under way is let finish.
                await asyncio.shield(slot.settle())
            else:
                await asyncio.shield(self._fail_check_run(slot))
            raise
        except asyncio.CancelledError:  # shutdown: conclude what was started
            if not completed:
                await asyncio.shield(self._fail_check_run(slot))
            raise

    async def _fail_check_run(self, run: CheckRunSlot) -> None:
        """Whatever went wrong, the check run must end completed: conclude it now (making it if the review
        failed before it existed). If GitHub refuses that too, the error goes up and the job is tried again."""
        payload = reporters.check_run_failed("an internal error stopped it")
        check_run_id = await run.settle()
        if check_run_id is None:
            await run.finish(payload, [])
            return
        await run.repo.update_check_run(check_run_id, payload)

    async def close(self) -> None:
        pass

    async def _gather(
        self, repo: RepoClient, number: int, pull: Mapping[str, Any], head_sha: str
    ) -> tuple[ChangeSet, Config, DiffMap, str] | str:
        base_sha = str(pull["base"]["sha"])
        diff_text, (head_entries, truncated), (base_entries, _), config_bytes = await asyncio.gather(
            repo.get_pull_diff(number),
            repo.get_tree(head_sha),
            repo.get_tree(base_sha),
            repo.get_file(CONFIG_PATH, base_sha),
        )
        try:
            source = f"{CONFIG_PATH} on the base branch"
            text = config_text(config_bytes, source) if config_bytes is not None else None
            config = parse_config(text, known_rule_ids(), source=source)
        except ConfigError as exc:
            return f"the repo config is invalid: {exc}"

        changes: dict[str, FileChange] = {}
        if diff_text is not None:
            try:
                parsed = parse_diff(diff_text)
            except DiffError:
                diff_text = None
            else:
                changes = {path: f.change for path, f in parsed.items()}
                diffmap = from_diff(parsed)
        head_sha_of = {e["path"]: (e["sha"], e.get("size", 0)) for e in head_entries}
        base_sha_of = {e["path"]: (e["sha"], e.get("size", 0)) for e in base_entries}
        notes = []
        if diff_text is None:
            files = await repo.list_pull_files(number, pull.get("changed_files"))
            changes, diffmap = from_files(files)
            if len(files) >= MAX_PR_FILES:
                # GitHub lists 3,000 files at most: the rest come from comparing the two trees.
                extra = _tree_changes(base_sha_of, head_sha_of, changes)
                changes.update(extra)
                notes.append(
                    f"GitHub lists only {MAX_PR_FILES} files of a PR; {len(extra)} more were found by comparing "
                    "the trees (no inline comments on those)."
                )

        want_head, want_base = needed_paths(head_sha_of.keys(), changes, config)
        if truncated:
            notes.append("GitHub truncated the file listing of this commit; cross-file checks saw part of the tree.")
        ordered = sorted(want_head, key=lambda p: (p not in changes, p))
        if len(ordered) > MAX_FILES_FETCHED:
            notes.append(f"{len(ordered) - MAX_FILES_FETCHED} files were not reviewed (limit {MAX_FILES_FETCHED}).")
            ordered = ordered[:MAX_FILES_FETCHED]
        head_files, base_files = await asyncio.gather(
            self._fetch(repo, ordered, head_sha_of), self._fetch(repo, sorted(want_base), base_sha_of)
        )
        # What the changed files name (a guide's Python scripts) is known only from their text: a second fetch.
        changed_texts = {p: head_files.get(p) for p in changes}
        named = sorted(named_paths(head_sha_of.keys(), changed_texts, changes, config) - head_files.keys())
        if named:
            head_files.update(await self._fetch(repo, named, head_sha_of))
        changes = _fill_missing_lines(changes, head_files, base_files, diff_text is not None)
        cs = ChangeSet(
            head=MemoryTree(head_files, head_sha_of.keys(), {p: sha for p, (sha, _size) in head_sha_of.items()}),
            base=MemoryTree(base_files, base_sha_of.keys(), {p: sha for p, (sha, _size) in base_sha_of.items()}),
            changes=changes,
            title=str(pull.get("title") or ""),
            repository=repo.full_name,
        )
        return cs, config, diffmap, " ".join(notes)

    async def _fetch(
        self, repo: RepoClient, paths: list[str], shas: Mapping[str, tuple[str, int]]
    ) -> dict[str, str | None]:
        present = [p for p in paths if p in shas]
        # Files the tree lists as too large are not read at all (decode_blob would refuse them anyway).
        wanted = {p: shas[p][0] for p in present if not (shas[p][1] and shas[p][1] > MAX_TEXT_BYTES)}
        blobs = await repo.get_blobs(wanted.values(), {shas[p][0]: shas[p][1] or 0 for p in wanted})
        out: dict[str, str | None] = {}
        for p in present:
            raw = blobs[wanted[p]] if p in wanted else None
            out[p] = decode_blob(raw) if raw is not None else None  # None: too large (or binary: decode_blob)
        return out

    async def _existing_comments(self, repo: RepoClient, number: int) -> list[dict[str, Any]]:
        return [c async for c in repo.list_review_comments(number)]

    async def _post_review(
        self,
        repo: RepoClient,
        number: int,
        head_sha: str,
        report: Report,
        diffmap: DiffMap,
        outcome: Outcome,
        existing: list[dict[str, Any]],
        config: Config,
    ) -> None:
        ours: dict[str, dict[str, Any]] = {}
        replied_to: set[int] = set()
        for c in existing:
            if c.get("in_reply_to_id"):
                replied_to.add(int(c["in_reply_to_id"]))
            fp = reporters.parse_marker(c.get("body"))
            if fp and (c.get("user") or {}).get("type") == "Bot" and fp not in ours:
                ours[fp] = c
        outcome.posted = await self._post_new_comments(repo, number, head_sha, report, diffmap, set(ours), config)
        current = {f.fingerprint for f in report.findings}
        stale = [c for fp, c in ours.items() if fp not in current]
        if not stale:
            return
        threads: list[dict[str, Any]] | None = None
        for c in stale:
            cid = int(c["id"])
            if cid not in replied_to:
                await repo.delete_review_comment(cid)
                outcome.deleted += 1
                continue
            if threads is None:
                threads = await repo.review_threads(number)
            for t in threads:
                ids = {n.get("databaseId") for n in t.get("comments", {}).get("nodes", [])}
                if cid in ids and not t.get("isResolved"):
                    await repo.resolve_thread(str(t["id"]))
                    outcome.resolved += 1

    async def _post_new_comments(
        self,
        repo: RepoClient,
        number: int,
        head_sha: str,
        report: Report,
        diffmap: DiffMap,
        posted: set[str],
        config: Config,
    ) -> int:
        """One review for the causes not yet commented, within the repo config's budget of inline comments.
        GitHub's answer can be lost after it made the review, so a failed attempt is followed by a look at the
        markers on the PR before anything is posted again."""
        for attempt in range(1, REVIEW_ATTEMPTS + 1):
            plan = reporters.plan_review(
                head_sha, report.findings, diffmap, posted, config.inline_notices, config.max_inline_comments
            )
            if plan.payload is None:
                return 0
            try:
                await repo.create_review(number, plan.payload)
                return len(plan.inline)
            except Exception as exc:
                if getattr(exc, "status_code", None) == 422:
                    # GitHub refused a line (the diff moved under us): list the findings in the body instead.
                    log.warning("review refused with 422; posting the findings in the review body")
                    fallback = reporters.plan_review(
                        head_sha, report.findings, DiffMap(), posted, config.inline_notices, config.max_inline_comments
                    )
                    await repo.create_review(number, reporters.body_only_review(head_sha, fallback.overflow))
                    return 0
                if attempt == REVIEW_ATTEMPTS:
                    raise
                log.warning("posting the review failed (%s); checking what GitHub has before trying again", exc)
                await asyncio.sleep(self.app.settings.backoff_base_s * attempt)
                async for c in repo.list_review_comments(number):
                    fp = reporters.parse_marker(c.get("body"))
                    if fp and (c.get("user") or {}).get("type") == "Bot":
                        posted.add(fp)
        return 0

    async def _complete(self, run: CheckRunSlot, report: Report, note: str) -> str:
        """A new check run for every run (GitHub appends annotations on each update, so reusing a completed run
        would repeat them; GitHub shows the newest run of a name per commit and asks Apps to create a new run on
        `rerequested`)."""
        final, batches = reporters.check_run_completion(report.findings, report.files_checked, report.errors, note)
        await run.finish(final, batches)
        return str(final["conclusion"])


def _tree_changes(
    base: Mapping[str, tuple[str, int]], head: Mapping[str, tuple[str, int]], known: Mapping[str, FileChange]
) -> dict[str, FileChange]:
    """Files whose blob differs between the two trees and that the files list did not name."""
    listed = set(known) | {c.old_path for c in known.values() if c.old_path}
    out: dict[str, FileChange] = {}
    for path in sorted(set(base) | set(head)):
        if path in listed or base.get(path, ("",))[0] == head.get(path, ("",))[0]:
            continue
        if path not in head:
            out[path] = FileChange(path, ChangeStatus.DELETED)
        else:
            out[path] = FileChange(path, ChangeStatus.ADDED if path not in base else ChangeStatus.MODIFIED)
    return out


def _fill_missing_lines(
    changes: dict[str, FileChange],
    head: Mapping[str, str | None],
    base: Mapping[str, str | None],
    from_full_diff: bool,
) -> dict[str, FileChange]:
    """GitHub leaves out the patch of very large files: work their added lines out from the contents."""
    out = {}
    for path, c in changes.items():
        text = head.get(path)
        if c.status == ChangeStatus.DELETED or c.added_lines or path not in head:
            out[path] = c
        elif text is None:
            out[path] = FileChange(path, c.status, c.old_path, frozenset(), binary=True)
        elif c.status == ChangeStatus.ADDED:
            out[path] = FileChange(path, c.status, c.old_path, frozenset(range(1, len(text.splitlines()) + 1)))
        elif not from_full_diff:
            old = base.get(c.old_path or path)
            lines = added_lines_between(old, text) if old is not None else frozenset()
            out[path] = FileChange(path, c.status, c.old_path, lines)
        else:
            out[path] = c
    return out
