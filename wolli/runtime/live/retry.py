"""Which failed turns the session retries automatically, and how long it waits.

Decided on data the failed message carries (``error_kind``, ``retry_after_ms``: see
:mod:`wolli.ai.failures`), not on its wording; messages from older session files, which
have only text, are classified by the strict text fallback.
"""

from __future__ import annotations

from ...ai.failures import TRANSIENT_KINDS, classify
from ...ai.types import AssistantMessage


def failure_kind(message: AssistantMessage) -> str:
    return message.error_kind or classify(message.error_message)


def is_retryable(message: AssistantMessage, *, max_delay_ms: int) -> bool:
    """A transient failure, unless the server asked for a longer wait than ``max_delay_ms``.

    A context overflow is not retried here: compaction handles it.
    """
    if message.stop_reason != "error" or failure_kind(message) not in TRANSIENT_KINDS:
        return False
    return not wait_too_long(message, max_delay_ms)


def wait_too_long(message: AssistantMessage, max_delay_ms: int) -> bool:
    """The server asked for a longer wait than the user allows (a quota reset, say)."""
    return message.retry_after_ms is not None and message.retry_after_ms > max_delay_ms


def retry_delay_ms(message: AssistantMessage, attempt: int, base_delay_ms: int, max_delay_ms: int) -> int:
    """The server's requested wait when it gave one, else exponential back-off; capped."""
    if message.retry_after_ms is not None:
        return int(min(max_delay_ms, max(0, message.retry_after_ms)))
    return backoff_delay_ms(attempt, base_delay_ms, max_delay_ms)


def backoff_delay_ms(attempt: int, base_delay_ms: int, max_delay_ms: int) -> int:
    """Exponential: base, 2*base, 4*base... capped (attempt counts from 1)."""
    return int(min(max_delay_ms, base_delay_ms * (2 ** max(0, attempt - 1))))
