"""Counters and gauges for GET /metrics in Prometheus' text format (kept by hand: a handful of series)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

# Upper bounds (seconds) of the run-duration histogram buckets.
RUN_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600)


class Metrics:
    def __init__(self) -> None:
        self.deliveries: Counter[tuple[str, str]] = Counter()
        self.runs: Counter[str] = Counter()
        self.run_buckets: Counter[float] = Counter()
        self.run_seconds_sum = 0.0
        self.run_count = 0
        self.github_calls: Counter[tuple[str, str]] = Counter()
        self.retries = 0
        self.rate_limit_remaining: int | None = None

    def delivery(self, event: str, outcome: str) -> None:
        self.deliveries[(event, outcome)] += 1

    def run(self, outcome: str, seconds: float) -> None:
        self.runs[outcome] += 1
        self.run_count += 1
        self.run_seconds_sum += seconds
        for b in RUN_BUCKETS:
            if seconds <= b:
                self.run_buckets[b] += 1

    def github_call(self, method: str, status: int | str) -> None:
        self.github_calls[(method, str(status))] += 1

    def snapshot(self) -> dict[str, Any]:
        """The counters as JSON (the embedded worker process hands them to its server, bot/embedded.py)."""
        return {
            "deliveries": [[e, o, n] for (e, o), n in self.deliveries.items()],
            "runs": dict(self.runs),
            "run_buckets": [[b, n] for b, n in self.run_buckets.items()],
            "run_seconds_sum": self.run_seconds_sum,
            "run_count": self.run_count,
            "github_calls": [[m, s, n] for (m, s), n in self.github_calls.items()],
            "retries": self.retries,
            "rate_limit_remaining": self.rate_limit_remaining,
        }

    @classmethod
    def from_snapshot(cls, data: dict[str, Any]) -> Metrics:
        m = cls()
        m.deliveries.update({(str(e), str(o)): int(n) for e, o, n in data.get("deliveries", [])})
        m.runs.update({str(k): int(v) for k, v in data.get("runs", {}).items()})
        m.run_buckets.update({float(b): int(n) for b, n in data.get("run_buckets", [])})
        m.run_seconds_sum = float(data.get("run_seconds_sum", 0.0))
        m.run_count = int(data.get("run_count", 0))
        m.github_calls.update({(str(a), str(s)): int(n) for a, s, n in data.get("github_calls", [])})
        m.retries = int(data.get("retries", 0))
        remaining = data.get("rate_limit_remaining")
        m.rate_limit_remaining = int(remaining) if remaining is not None else None
        return m

    @classmethod
    def total(cls, parts: Iterable[Metrics]) -> Metrics:
        """The sum of several processes' counters; the rate limit GitHub last reported to any of them (the
        later parts win)."""
        out = cls()
        for m in parts:
            out.deliveries.update(m.deliveries)
            out.runs.update(m.runs)
            out.run_buckets.update(m.run_buckets)
            out.run_seconds_sum += m.run_seconds_sum
            out.run_count += m.run_count
            out.github_calls.update(m.github_calls)
            out.retries += m.retries
            if m.rate_limit_remaining is not None:
                out.rate_limit_remaining = m.rate_limit_remaining
        return out

    def render(self, queue_depth: int | None = 0, waiting_on_github: int | None = 0) -> str:
        """queue_depth and waiting_on_github None: the queue could not say (its storage fails)."""
        out = [
            "# HELP npu_review_deliveries_total Webhook deliveries by event and outcome.",
            "# TYPE npu_review_deliveries_total counter",
        ]
        out += [
            f'npu_review_deliveries_total{{event="{e}",outcome="{o}"}} {n}'
            for (e, o), n in sorted(self.deliveries.items())
        ]
        out += ["# HELP npu_review_runs_total Reviews by conclusion.", "# TYPE npu_review_runs_total counter"]
        out += [f'npu_review_runs_total{{conclusion="{c}"}} {n}' for c, n in sorted(self.runs.items())]
        out += [
            "# HELP npu_review_run_duration_seconds Time from queue start to completed check run.",
            "# TYPE npu_review_run_duration_seconds histogram",
        ]
        out += [f'npu_review_run_duration_seconds_bucket{{le="{b}"}} {self.run_buckets[b]}' for b in RUN_BUCKETS]
        out += [
            f'npu_review_run_duration_seconds_bucket{{le="+Inf"}} {self.run_count}',
            f"npu_review_run_duration_seconds_sum {self.run_seconds_sum:.6f}",
            f"npu_review_run_duration_seconds_count {self.run_count}",
            "# HELP npu_review_github_requests_total GitHub API calls by method and status.",
            "# TYPE npu_review_github_requests_total counter",
        ]
        out += [
            f'npu_review_github_requests_total{{method="{m}",status="{s}"}} {n}'
            for (m, s), n in sorted(self.github_calls.items())
        ]
        out += [
            "# HELP npu_review_github_retries_total GitHub calls retried after a failure or a rate limit.",
            "# TYPE npu_review_github_retries_total counter",
            f"npu_review_github_retries_total {self.retries}",
        ]
        if queue_depth is not None and waiting_on_github is not None:
            out += [
                "# HELP npu_review_queue_depth Reviews running, waiting, or waiting on GitHub.",
                "# TYPE npu_review_queue_depth gauge",
                f"npu_review_queue_depth {queue_depth}",
                "# HELP npu_review_jobs_waiting_on_github Accepted jobs GitHub could not serve yet, to be tried again.",
                "# TYPE npu_review_jobs_waiting_on_github gauge",
                f"npu_review_jobs_waiting_on_github {waiting_on_github}",
            ]
        if self.rate_limit_remaining is not None:
            out += [
                "# HELP npu_review_github_rate_limit_remaining Last x-ratelimit-remaining GitHub sent.",
                "# TYPE npu_review_github_rate_limit_remaining gauge",
                f"npu_review_github_rate_limit_remaining {self.rate_limit_remaining}",
            ]
        return "\n".join(out) + "\n"
