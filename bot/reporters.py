"""Pure payload builders: the check run (title, summary, annotation batches) and one review with inline comments
(one per cause, checks.causes, within the repo config's budget)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from npu_review.bot.diffmap import DiffMap
from npu_review.checks.causes import Comment, by_cause, places
from npu_review.checks.config import DEFAULT_MAX_INLINE_COMMENTS
from npu_review.checks.engine import said_alike
from npu_review.checks.model import Finding, Severity
from npu_review.checks.severity_map import ANNOTATION_LEVEL, conclusion

CHECK_NAME = "npu-review"
# GitHub accepts at most 50 annotations per create/update request.
# https://docs.github.com/en/rest/checks/runs#update-a-check-run
ANNOTATIONS_PER_REQUEST = 50
# Check run output.summary and output.text are limited to 65,535 characters (the API description's maxLength).
SUMMARY_LIMIT = 65535
# Annotation title: 255 characters at most (GitHub's API description).
ANNOTATION_TITLE_LIMIT = 255
# Causes listed in the review body at most (each one line); the check run has every finding.
BODY_LIMIT = 100
# Requested-action button (label <= 20 chars, description <= 40, identifier <= 20: GitHub's limits).
RERUN_ACTION = {"label": "Re-run", "description": "Run npu-review again on this commit", "identifier": "rerun"}

MARKER_PREFIX = "<!-- npu-review:fp="
_MARKER = re.compile(r"<!-- npu-review:fp=([0-9a-f]{8,64}) -->")

SEVERITY_ICON = {Severity.ERROR: "🛑", Severity.WARNING: "⚠️", Severity.NOTICE: "ℹ️"}


def marker(fingerprint: str) -> str:
    return f"{MARKER_PREFIX}{fingerprint} -->"


def parse_marker(body: str | None) -> str | None:
    m = _MARKER.search(body or "")
    return m.group(1) if m else None


def comment_body(f: Finding, also: Comment | None = None) -> str:
    """The inline comment of a finding; `also`: its cause's other places, named under the message."""
    ids = " + ".join(f.rule_ids)
    parts = [f"{SEVERITY_ICON[f.severity]} **{ids}** `{f.name}` ({f.severity.label})", "", f.message]
    if f.related:
        parts.append("")
        parts.extend(f"- see `{r.path}` line {r.line}" + (f": {r.note}" if r.note else "") for r in f.related)
    if also is not None and also.also:
        n = len(also.also)
        if all(_said(g.message) == _said(f.message) for g in also.also):
            parts += ["", f"The same in {n} other place{'s' if n != 1 else ''}: {places(also)}."]
        else:
            # One cause said of different things (every line a change leaves naming the files it moves): each
            # place with what it names, not "the same" (blind judges took the places for this line's own text).
            parts += ["", f"Of the same cause, {n} other place{'s' if n != 1 else ''}: {_named_places(also)}."]
    if f.suggestion is not None:
        parts += ["", "```suggestion", f.suggestion, "```"]
    parts += ["", f"<sub>Run `npu-review rules {f.rule}` for details; `/recheck` re-runs the review.</sub>"]
    parts.append(marker(f.fingerprint))
    return "\n".join(parts)


_FIRST_CODE = re.compile(r"`([^`]+)`")


def _said(message: str) -> str:
    return said_alike(message)


def _named_places(comment: Comment, limit: int = 10) -> str:
    """`path:line` of the other places with the first thing each one's message names (`x.md:12` (`a/b.sh`))."""
    shown = []
    for g in comment.also[:limit]:
        named = _FIRST_CODE.search(g.message)
        shown.append(f"`{g.path}:{g.line}`" + (f" (`{named.group(1)}`)" if named else ""))
    rest = len(comment.also) - limit
    if rest > 0:
        shown.append(f"and {rest} more")
    return ", ".join(shown)


def _location(f: Finding) -> str:
    return f"`{f.path}:{f.line}`"


@dataclass(frozen=True)
class ReviewPlan:
    payload: dict[str, Any] | None  # None: nothing new to post
    inline: tuple[Finding, ...]  # the finding each new inline comment is on (one per cause)
    overflow: tuple[Finding, ...]  # new findings that could not be inline comments (budget or outside the diff)


def inline_causes(
    findings: Sequence[Finding],
    diffmap: DiffMap,
    already_posted: set[str],
    inline_notices: bool = False,
    max_inline: int = DEFAULT_MAX_INLINE_COMMENTS,
) -> tuple[list[Comment], list[Comment]]:
    """The new causes said inline and those left to the review body (most severe first).

    A cause is one comment (checks.causes.by_cause), on the first of its places the diff can carry, naming the
    others. A cause with a place posted before (its marker is on the PR) is not said again. The per-PR budget
    counts those comments too: `max_inline` at most on the PR, the most severe causes first."""
    eligible = [f for f in findings if inline_notices or f.severity >= Severity.WARNING]
    posted = 0
    new: list[Comment] = []
    for cause in by_cause(eligible):
        if any(f.fingerprint in already_posted for f in cause.findings):
            posted += 1
            continue
        new.append(cause)
    room = max(0, max_inline - posted)
    inline: list[Comment] = []
    rest: list[Comment] = []
    for cause in sorted(new, key=lambda c: (-max(f.severity for f in c.findings), c.lead.sort_key())):
        anchor = next((f for f in cause.findings if _commentable(diffmap, f)), None)
        if anchor is not None and len(inline) < room:
            others = tuple(f for f in cause.findings if f is not anchor)
            inline.append(Comment(anchor, others))
        else:
            rest.append(cause)
    inline.sort(key=lambda c: c.lead.sort_key())
    return inline, rest


def _commentable(diffmap: DiffMap, f: Finding) -> bool:
    return diffmap.commentable(f.path, f.end_line, f.line if f.end_line > f.line else None)


def plan_review(
    head_sha: str,
    findings: Sequence[Finding],
    diffmap: DiffMap,
    already_posted: set[str],
    inline_notices: bool = False,
    max_inline: int = DEFAULT_MAX_INLINE_COMMENTS,
) -> ReviewPlan:
    """One COMMENT review for the causes not posted before, inline where the diff and the budget allow.

    Inline comments ask the author to act: errors and warnings. Notices are left to the check run (its
    annotations and summary) unless the repo config asks for them inline (`review: {inline_notices: true}`)."""
    inline, rest = inline_causes(findings, diffmap, already_posted, inline_notices, max_inline)
    overflow = tuple(f for c in rest for f in c.findings)
    if not inline:
        # Findings outside the diff live in the check run; a review with only a body would be noise.
        return ReviewPlan(None, (), overflow)
    comments = []
    for cause in inline:
        f = cause.lead
        c: dict[str, Any] = {"path": f.path, "line": f.end_line, "side": "RIGHT", "body": comment_body(f, cause)}
        if f.end_line > f.line:
            c["start_line"] = f.line
            c["start_side"] = "RIGHT"
        comments.append(c)
    new_count = sum(len(c.findings) for c in [*inline, *rest])
    payload = {"commit_id": head_sha, "event": "COMMENT", "body": _review_body(new_count, rest), "comments": comments}
    return ReviewPlan(payload, tuple(c.lead for c in inline), overflow)


def _review_body(new_count: int, rest: Sequence[Comment]) -> str:
    """How many new findings; the causes not said inline, one line each, most severe first."""
    body = [f"npu-review found {new_count} new issue{'s' if new_count != 1 else ''} in this change."]
    if rest:
        body.append("")
        body.append("Not shown inline (see the `npu-review` check run for all of them):")
        for cause in rest[:BODY_LIMIT]:
            f = cause.lead
            line = f"- {_location(f)} **{f.rule}** ({f.severity.label}): {_one_line(f.message)}"
            if cause.also:
                line += f" (also {places(cause)})"
            body.append(line)
        if len(rest) > BODY_LIMIT:
            body.append(f"- … and {len(rest) - BODY_LIMIT} more")
    return "\n".join(body)


def body_only_review(head_sha: str, findings: Sequence[Finding]) -> dict[str, Any]:
    """The fallback when GitHub refuses the inline comments: every finding listed in the review body, by cause,
    most severe first."""
    causes = sorted(by_cause(findings), key=lambda c: (-max(f.severity for f in c.findings), c.lead.sort_key()))
    return {"commit_id": head_sha, "event": "COMMENT", "body": _review_body(len(findings), causes)}


def _one_line(text: str, limit: int = 200) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _table_cell(text: str) -> str:
    return _one_line(text).replace("|", "\\|")


def annotation(f: Finding) -> dict[str, Any]:
    a: dict[str, Any] = {
        "path": f.path,
        "start_line": f.line,
        "end_line": f.end_line,
        "annotation_level": ANNOTATION_LEVEL[f.severity],
        "message": f.message,
        "title": f"{'+'.join(f.rule_ids)} {f.name}"[:ANNOTATION_TITLE_LIMIT],
    }
    if f.suggestion is not None:
        a["raw_details"] = "Suggested replacement:\n" + f.suggestion
    return a


def annotation_batches(findings: Sequence[Finding]) -> list[list[dict[str, Any]]]:
    items = [annotation(f) for f in findings]
    return [items[i : i + ANNOTATIONS_PER_REQUEST] for i in range(0, len(items), ANNOTATIONS_PER_REQUEST)]


def title(findings: Sequence[Finding]) -> str:
    if not findings:
        return "No Ascend NPU issues found"
    counts = _counts(findings)
    parts = [f"{n} {label}{'s' if n != 1 else ''}" for label, n in counts.items() if n]
    return "npu-review: " + ", ".join(parts)


def _counts(findings: Iterable[Finding]) -> dict[str, int]:
    counts = {s.label: 0 for s in sorted(Severity, reverse=True)}
    for f in findings:
        counts[f.severity.label] += 1
    return counts


def summary(findings: Sequence[Finding], files_checked: int, errors: Sequence[str] = (), note: str = "") -> str:
    """Markdown: counts per severity, a table of findings, cut below GitHub's limit with a note saying so."""
    counts = _counts(findings)
    head = [
        f"Checked {files_checked} file{'s' if files_checked != 1 else ''}: "
        + ", ".join(f"**{n}** {label}{'s' if n != 1 else ''}" for label, n in counts.items())
        + ".",
    ]
    if note:
        head += ["", note]
    if errors:
        head += ["", "Some checks could not run:"] + [f"- {_one_line(e, 500)}" for e in errors]
    if not findings:
        return "\n".join(head)
    head += ["", "| Severity | Rule | Location | Message |", "|---|---|---|---|"]
    rows = [
        f"| {f.severity.label} | {f.rule} `{f.name}` | {_location(f)} | {_table_cell(f.message)} |" for f in findings
    ]
    out = "\n".join(head)
    for i, row in enumerate(rows):
        tail = f"\n\n_… {len(rows) - i} more findings are not listed here: the summary reached GitHub's limit._"
        if len(out) + len(row) + 1 + len(tail) > SUMMARY_LIMIT:
            return out + tail
        out += "\n" + row
    return out


def check_run_completion(
    findings: Sequence[Finding], files_checked: int, errors: Sequence[str] = (), note: str = ""
) -> tuple[dict[str, Any], list[list[dict[str, Any]]]]:
    """The final PATCH payload (without annotations) and the annotation batches to send with it."""
    payload = {
        "status": "completed",
        "conclusion": conclusion(findings),
        "output": {"title": title(findings), "summary": summary(findings, files_checked, errors, note)},
        "actions": [RERUN_ACTION],
    }
    return payload, annotation_batches(findings)


def check_run_failed(reason: str) -> dict[str, Any]:
    """An internal error still ends the run: neutral, a summary that says what went wrong, the Re-run button."""
    return {
        "status": "completed",
        "conclusion": "neutral",
        "output": {
            "title": "npu-review could not complete",
            "summary": f"The review did not finish: {_one_line(reason, 1000)}\n\nUse **Re-run** to try again.",
        },
        "actions": [RERUN_ACTION],
    }


def check_run_started(head_sha: str) -> dict[str, Any]:
    return {
        "name": CHECK_NAME,
        "head_sha": head_sha,
        "status": "in_progress",
        "output": {"title": "Reviewing for Ascend NPU issues", "summary": "npu-review is checking this commit."},
    }
