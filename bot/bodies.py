"""The budget of bytes held for webhook bodies whose signature is not checked yet, one per server."""

from __future__ import annotations

# Bytes of bodies not yet verified held at once, over all connections. GitHub's deliveries are tens of KB, so
# only a flood (or a forger) reaches it; past it, the webhook answers 503 with Retry-After.
UNVERIFIED_BYTES_LIMIT = 32 * 1024 * 1024


class UnverifiedBytes:
    """The budget of bytes held for bodies whose signature is not checked yet (one per server)."""

    def __init__(self, limit: int = UNVERIFIED_BYTES_LIMIT) -> None:
        self.limit = limit
        self.held = 0

    def take(self, n: int) -> bool:
        if self.held + n > self.limit:
            return False
        self.held += n
        return True

    def give(self, n: int) -> None:
        self.held -= n
