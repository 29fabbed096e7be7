"""Which failed turns are worth retrying automatically, and how long to wait."""

from __future__ import annotations

import re

from ..ai.overflow import is_context_overflow_text
from ..ai.retry_marks import FINAL_MARKS

_TRANSIENT = re.compile(
    r"overloaded|rate.?limit|too many requests|\b429\b|\b5\d\d\b|service.?unavailable|server error|"
    r"internal error|connection (lost|failed|error|reset)|connecterror|readerror|remoteprotocolerror|"
    r"timed? ?out|ended (before|without)|temporarily unavailable|try again",
    re.IGNORECASE,
)




def is_retryable_error(message: str | None) -> bool:
    """Transient provider failures (not context overflow: compaction handles that).

    Failures the HTTP layer marked final (it already spent the same ``retry`` budget, or the
    server asked for a longer wait than allowed) are not retried again.
    """
    if not message or is_context_overflow_text(message) or any(mark in message for mark in FINAL_MARKS):
        return False
    return bool(_TRANSIENT.search(message))


def backoff_delay_ms(attempt: int, base_delay_ms: int, max_delay_ms: int) -> int:
    """Exponential: base, 2*base, 4*base... capped (attempt counts from 1)."""
    return int(min(max_delay_ms, base_delay_ms * (2 ** max(0, attempt - 1))))
