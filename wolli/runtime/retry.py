"""Which failed turns are worth retrying automatically, and how long to wait."""

from __future__ import annotations

import re

from ..ai.overflow import is_context_overflow_text

_TRANSIENT = re.compile(
    r"overloaded|rate.?limit|too many requests|\b429\b|\b5\d\d\b|service.?unavailable|server error|"
    r"internal error|connection (lost|failed|error|reset)|connecterror|readerror|remoteprotocolerror|"
    r"timed? ?out|ended (before|without)|temporarily unavailable|try again",
    re.IGNORECASE,
)


# wolli.ai.http marks failures it already retried (with the same ``retry`` settings and the
# server's retry-after hints), and those where the server asked for a longer wait than
# ``retry.maxDelayMs``: retrying them again would multiply the attempts or ignore the server.
_HTTP_FINAL = ("(gave up after", "(server asked to retry in")


def is_retryable_error(message: str | None) -> bool:
    """Transient provider failures (not context overflow: compaction handles that)."""
    if not message or is_context_overflow_text(message) or any(mark in message for mark in _HTTP_FINAL):
        return False
    return bool(_TRANSIENT.search(message))


def backoff_delay_ms(attempt: int, base_delay_ms: int, max_delay_ms: int) -> int:
    """Exponential: base, 2*base, 4*base... capped (attempt counts from 1)."""
    return int(min(max_delay_ms, base_delay_ms * (2 ** max(0, attempt - 1))))
