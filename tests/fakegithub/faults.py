"""Queued faults: how the fake misbehaves on the next calls to a route, like GitHub does on a bad day."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

SECONDARY_LIMIT_MESSAGE = (
    "You have exceeded a secondary rate limit. Please wait a few minutes before you try again. "
    "If you reach out to GitHub Support for help, please include the request ID 0000:0000:000000:000000:00000000."
)
SECONDARY_LIMIT_DOCS = "https://docs.github.com/free-pro-team@latest/rest/overview/rate-limits-for-the-rest-api#about-secondary-rate-limits"


@dataclass
class Fault:
    """One misbehaving answer.

    status/body/headers: the answer given instead of the real one (body None: GitHub's usual text for status).
    delay: seconds to wait before answering.  proceed: after the delay, answer normally (a slow GitHub).
    drop: close the connection without answering.  after: do the real work first (state changes), then answer
    with the fault — the App's request succeeded but it cannot know.
    """

    status: int = 502
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    proceed: bool = False
    drop: bool = False
    after: bool = False

    @property
    def label(self) -> str:
        if self.drop:
            return "drop" + (" after" if self.after else "")
        if self.proceed:
            return f"delay {self.delay}s"
        return f"{self.status}" + (" after" if self.after else "")

    @classmethod
    def server_error(cls, status: int = 502, *, after: bool = False) -> Fault:
        return cls(status=status, after=after)

    @classmethod
    def secondary_rate_limit(cls, retry_after: int = 60, status: int = 403) -> Fault:
        """403 (or 429) with GitHub's secondary rate limit message and Retry-After."""
        return cls(
            status=status,
            body={"message": SECONDARY_LIMIT_MESSAGE, "documentation_url": SECONDARY_LIMIT_DOCS, "status": str(status)},
            headers={"Retry-After": str(retry_after)},
        )

    @classmethod
    def too_many_requests(cls, retry_after: int = 60) -> Fault:
        return cls.secondary_rate_limit(retry_after, status=429)

    @classmethod
    def slow(cls, seconds: float) -> Fault:
        return cls(delay=seconds, proceed=True)

    @classmethod
    def dropped(cls, *, after: bool = False) -> Fault:
        return cls(drop=True, after=after)

    def to_json(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "body": self.body,
            "headers": self.headers,
            "delay": self.delay,
            "proceed": self.proceed,
            "drop": self.drop,
            "after": self.after,
        }

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Fault:
        return cls(**data)


def default_body(status: int) -> tuple[Any, str]:
    """(body, content type) GitHub sends for a bare error status."""
    if status in (502, 504):
        # GitHub's edge answers these with HTML, not JSON.
        return f"<html><body><h1>{status} {'Bad Gateway' if status == 502 else 'Gateway Timeout'}</h1></body></html>", (
            "text/html; charset=utf-8"
        )
    messages = {
        500: "Server Error",
        503: "Service Unavailable",
        401: "Bad credentials",
        403: "Forbidden",
        404: "Not Found",
        409: "Conflict",
        422: "Unprocessable Entity",
        429: "Too Many Requests",
    }
    body = {
        "message": messages.get(status, "Error"),
        "documentation_url": "https://docs.github.com/rest",
        "status": str(status),
    }
    return body, "application/json; charset=utf-8"
