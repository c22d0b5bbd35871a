"""The status page's data and HTML (pure): what the App reviewed lately, its queue, its rate-limit budget.

Who sees what: everyone gets the summary counts (no repository, account or App names); whoever presents the
status token (NPU_REVIEW_STATUS_TOKEN) also gets the installations and the last reviews, private ones included.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import html
import time
from collections import Counter, deque
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from npu_review.bot.jobs import Waiting
    from npu_review.bot.review import Outcome, ReviewRequest

# Reviews remembered for the status page (a process's memory; the metrics keep the totals).
RECENT_REVIEWS = 50
# Reviews listed on the page.
SHOWN_REVIEWS = 20


@dataclass(frozen=True)
class ReviewRecord:
    repo: str
    number: int
    head_sha: str
    conclusion: str
    findings: int
    seconds: float
    finished_at: float  # epoch seconds
    private: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "repository": self.repo,
            "pull_request": self.number,
            "head_sha": self.head_sha,
            "conclusion": self.conclusion,
            "findings": self.findings,
            "duration_s": round(self.seconds, 3),
            "finished_at": _iso(self.finished_at),
            "private": self.private,
        }


class ReviewLog:
    """The last reviews, newest first, and counts since start-up."""

    def __init__(self, size: int = RECENT_REVIEWS) -> None:
        self._recent: deque[ReviewRecord] = deque(maxlen=size)
        self.by_conclusion: Counter[str] = Counter()

    def add(self, req: ReviewRequest, result: Outcome | None, conclusion: str, seconds: float) -> None:
        self.by_conclusion[conclusion] += 1
        self._recent.appendleft(
            ReviewRecord(
                repo=f"{req.owner}/{req.repo}",
                number=req.number,
                head_sha=(result.head_sha if result is not None else req.head_sha) or "",
                conclusion=conclusion,
                findings=len(result.findings) if result is not None else 0,
                seconds=seconds,
                finished_at=time.time(),
                private=result.private if result is not None else True,
            )
        )

    def recent(self) -> list[ReviewRecord]:
        return list(self._recent)

    def snapshot(self) -> dict[str, Any]:
        """As JSON (the embedded worker process hands it to its server, bot/embedded.py)."""
        return {
            "by_conclusion": dict(self.by_conclusion),
            "recent": [dataclasses.asdict(r) for r in self._recent],
        }

    def load(self, parts: list[dict[str, Any]]) -> None:
        """Shows what other processes ran instead: the sum of their snapshots, newest reviews first."""
        self.by_conclusion = Counter()
        recent: list[ReviewRecord] = []
        for part in parts:
            self.by_conclusion.update({str(k): int(v) for k, v in part.get("by_conclusion", {}).items()})
            recent.extend(ReviewRecord(**r) for r in part.get("recent", []))
        recent.sort(key=lambda r: r.finished_at, reverse=True)
        self._recent = deque(recent, maxlen=self._recent.maxlen)


@dataclass(frozen=True)
class StatusInput:
    """What the page shows, gathered by the handler."""

    version: str
    registered: bool
    started_at: float
    now: float
    queue_depth: int | None  # None: the queue cannot say (its storage fails)
    by_conclusion: Mapping[str, int]
    reviews: list[ReviewRecord]
    # (remaining, limit, reset) per installation id; empty before the first GitHub call.
    budgets: Mapping[int, tuple[int, int, int]]
    installations: list[dict[str, Any]] | None  # None: could not be listed
    app_name: str = ""
    app_html_url: str = ""
    runs_jobs: bool = True  # False: a receiver in front of `npu-review worker` processes (Redis queue)
    # Accepted jobs GitHub could not serve yet (an outage), tried again with backoff; None: the queue cannot say.
    waiting: list[Waiting] | None = None


def _iso(epoch: float) -> str:
    return dt.datetime.fromtimestamp(epoch, dt.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def _span(seconds: float) -> str:
    seconds = max(0, int(seconds))
    for unit, size in (("d", 86400), ("h", 3600), ("min", 60)):
        if seconds >= size:
            return f"{seconds // size} {unit}"
    return f"{seconds} s"


def _ago(seconds: float) -> str:
    return _span(seconds) + " ago"


def status_document(s: StatusInput, detailed: bool) -> dict[str, Any]:
    """The JSON of /status.json; the summary for everyone, details only with the token."""
    budget = min(s.budgets.values(), key=lambda b: b[0] / max(b[1], 1)) if s.budgets else None
    doc: dict[str, Any] = {
        "status": "running" if s.registered else "awaiting registration",
        "version": s.version,
        "uptime_s": int(s.now - s.started_at),
        "installations": len(s.installations) if s.installations is not None else None,
        "reviews": {"total": sum(s.by_conclusion.values()), **dict(sorted(s.by_conclusion.items()))},
        "last_review_at": _iso(s.reviews[0].finished_at) if s.reviews else None,
        "queue_depth": s.queue_depth,
        "rate_limit": (
            {"remaining": budget[0], "limit": budget[1], "resets_at": _iso(budget[2])} if budget is not None else None
        ),
        "waiting_on_github": len(s.waiting) if s.waiting is not None else None,
        "detailed": detailed,
    }
    if detailed:
        doc["waiting_list"] = [
            {
                "pull_request": w.pr,
                "head_sha": w.head,
                "tries": w.retries,
                "failing_since": _iso(w.failing_since) if w.failing_since else None,
                "next_try_at": _iso(w.next_try),
                "last_error": w.error,
            }
            for w in s.waiting or []
        ]
        doc["app"] = {"name": s.app_name, "html_url": s.app_html_url}
        doc["installation_list"] = [
            {
                "id": i.get("id"),
                "account": (i.get("account") or {}).get("login"),
                "type": i.get("target_type"),
                "repository_selection": i.get("repository_selection"),
                "rate_limit": _budget_json(s.budgets.get(int(i.get("id") or 0))),
            }
            for i in s.installations or []
        ]
        doc["recent_reviews"] = [r.to_json() for r in s.reviews[:SHOWN_REVIEWS]]
    return doc


def _budget_json(b: tuple[int, int, int] | None) -> dict[str, Any] | None:
    return None if b is None else {"remaining": b[0], "limit": b[1], "resets_at": _iso(b[2])}


PAGE_STYLE = """
body{font:15px/1.45 system-ui,sans-serif;margin:2rem auto;max-width:60rem;padding:0 1rem;color:#1f2328}
h1{font-size:1.6rem;margin-bottom:.2rem} h2{font-size:1.15rem;margin-top:1.8rem}
.muted{color:#656d76} table{border-collapse:collapse;width:100%} td,th{padding:.35rem .6rem;text-align:left;
border-bottom:1px solid #d0d7de} th{background:#f6f8fa} code{background:#f6f8fa;padding:0 .25rem;border-radius:4px}
.cards{display:flex;gap:1rem;flex-wrap:wrap} .card{border:1px solid #d0d7de;border-radius:8px;padding:.7rem 1rem;
min-width:9rem} .card b{display:block;font-size:1.4rem} .success{color:#1a7f37} .failure{color:#cf222e}
.neutral{color:#9a6700} .error{color:#cf222e} form label{display:block;margin:.8rem 0 .2rem}
input[type=text],input[type=url]{width:100%;padding:.4rem;font:inherit;box-sizing:border-box}
button{margin-top:1rem;padding:.5rem 1.2rem;font:inherit;background:#1f883d;color:#fff;border:0;border-radius:6px}
pre{background:#f6f8fa;padding:.8rem;overflow:auto;border-radius:6px}
"""


def page(title: str, body: str) -> str:
    return (
        '<!doctype html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width,initial-scale=1">'
        f"<title>{html.escape(title)}</title><style>{PAGE_STYLE}</style></head>\n<body>\n{body}\n</body></html>\n"
    )


def _card(label: str, value: object, element_id: str) -> str:
    return f'<div class="card" id="{element_id}"><b>{html.escape(str(value))}</b>{html.escape(label)}</div>'


def render_status(s: StatusInput, detailed: bool, token_configured: bool) -> str:
    doc = status_document(s, detailed)
    e = html.escape
    out = [f'<h1>npu-review</h1><p class="muted">version {e(s.version)} · up {e(_span(doc["uptime_s"]))}</p>']
    if not s.registered:
        out.append(
            "<p><b>Not registered with GitHub yet.</b> Open the setup URL printed in the server's log to register "
            "the App.</p>"
        )
    rl = doc["rate_limit"]
    reviews = doc["reviews"]
    cards = [
        _card("installations", "?" if doc["installations"] is None else doc["installations"], "installations"),
        _card("reviews since start", reviews["total"], "reviews-total"),
        _card("in the queue", "?" if doc["queue_depth"] is None else doc["queue_depth"], "queue-depth"),
        _card(
            "waiting on GitHub",
            "?" if doc["waiting_on_github"] is None else doc["waiting_on_github"],
            "waiting-on-github",
        ),
        _card(
            "GitHub API budget left" + (f" (of {rl['limit']})" if rl else ""),
            rl["remaining"] if rl else "–",
            "rate-limit",
        ),
    ]
    out.append('<div class="cards">' + "".join(cards) + "</div>")
    if not s.runs_jobs:
        out.append(
            '<p class="muted" id="workers-hint">This server receives the deliveries; <code>npu-review worker</code> '
            "processes run the reviews, so the counts and reviews here are only those it ran itself.</p>"
        )
    if doc["waiting_on_github"]:
        out.append(
            f'<p class="neutral" id="waiting-hint">{doc["waiting_on_github"]} accepted review(s) wait for GitHub to '
            "answer again; each is tried again with growing pauses, and its check run appears when GitHub does.</p>"
        )
    counts = ", ".join(f"{e(k)}: {v}" for k, v in reviews.items() if k != "total") or "none yet"
    last = f" · last {e(_ago(s.now - s.reviews[0].finished_at))}" if s.reviews else ""
    out.append(f'<p id="conclusions">Conclusions: {counts}{last}</p>')
    if rl:
        out.append(f'<p class="muted">The lowest budget resets at {e(rl["resets_at"])}.</p>')
    if not detailed:
        hint = (
            "Installations and the last reviews are shown with the status token."
            if token_configured
            else "Installations and the last reviews are shown only when the server has a status token "
            "(<code>NPU_REVIEW_STATUS_TOKEN</code>) and you present it."
        )
        out.append(f'<p class="muted" id="details-hint">{hint}</p>')
        return page("npu-review status", "\n".join(out))
    if s.app_name:
        link = f' (<a href="{e(s.app_html_url)}">{e(s.app_html_url)}</a>)' if s.app_html_url else ""
        out.append(f"<p>App: <b>{e(s.app_name)}</b>{link}</p>")
    out.append("<h2>Installations</h2>")
    if s.installations is None:
        out.append('<p class="error">GitHub did not list the installations (see the server log).</p>')
    elif not s.installations:
        out.append("<p>None yet: install the App on an account or organisation.</p>")
    else:
        rows = "".join(
            f"<tr><td>{e(str(i['account']))}</td><td>{e(str(i['type']))}</td>"
            f"<td>{e(str(i['repository_selection']))}</td>"
            f"<td>{e(_budget_text(i['rate_limit']))}</td></tr>"
            for i in doc["installation_list"]
        )
        out.append(
            '<table id="installation-table"><tr><th>Account</th><th>Type</th><th>Repositories</th>'
            f"<th>API budget</th></tr>{rows}</table>"
        )
    if doc.get("waiting_list"):
        rows = "".join(
            f"<tr><td>{e(str(w['pull_request']))}</td><td><code>{e(str(w['head_sha'] or 'current')[:12])}</code></td>"
            f"<td>{w['tries']}</td><td>{e(str(w['failing_since']))}</td><td>{e(w['next_try_at'])}</td>"
            f"<td>{e(w['last_error'])}</td></tr>"
            for w in doc["waiting_list"]
        )
        out.append(
            '<h2>Waiting on GitHub</h2><table id="waiting-table"><tr><th>PR</th><th>Head</th><th>Tries</th>'
            f"<th>Failing since</th><th>Next try</th><th>Last error</th></tr>{rows}</table>"
        )
    out.append("<h2>Last reviews</h2>")
    if not s.reviews:
        out.append("<p>None yet: open a pull request in an installed repository.</p>")
    else:
        rows = "".join(_review_row(r, s.now) for r in s.reviews[:SHOWN_REVIEWS])
        out.append(
            '<table id="review-table"><tr><th>When</th><th>Repository</th><th>PR</th><th>Head</th>'
            f"<th>Conclusion</th><th>Findings</th><th>Duration</th></tr>{rows}</table>"
        )
    return page("npu-review status", "\n".join(out))


def _budget_text(b: Mapping[str, Any] | None) -> str:
    return "–" if b is None else f"{b['remaining']} of {b['limit']}"


def _review_row(r: ReviewRecord, now: float) -> str:
    e = html.escape
    lock = " 🔒" if r.private else ""
    return (
        f'<tr><td title="{e(_iso(r.finished_at))}">{e(_ago(now - r.finished_at))}</td>'
        f"<td>{e(r.repo)}{lock}</td><td>#{r.number}</td><td><code>{e(r.head_sha[:12])}</code></td>"
        f'<td class="{e(r.conclusion)}">{e(r.conclusion)}</td><td>{r.findings}</td><td>{r.seconds:.1f} s</td></tr>'
    )
