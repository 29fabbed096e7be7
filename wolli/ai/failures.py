"""What kind of failure ended a request, so callers decide on data instead of on wording.

The HTTP layer and the providers know why a request failed (a status code, a dropped
connection, an in-stream error event) and record it on the failed message as
``AssistantMessage.error_kind`` (``errorKind`` in files). :func:`classify` is the fallback for
messages that carry only text: errors from older session files, and providers that report
an error inside the stream with no code. It is deliberately strict: wording it does not
recognise is ``"other"``, which is never retried.
"""

from __future__ import annotations

import re
from typing import Literal

from .overflow import is_context_overflow_text

ErrorKind = Literal[
    "overloaded",  # 529 / "overloaded_error": the provider is busy, try again
    "rate_limited",  # 429: over quota for now
    "server_error",  # 5xx
    "timeout",  # 408, read/connect timeouts
    "connection",  # could not connect, or the connection dropped
    "stream_cut",  # the stream ended before the final event
    "context_overflow",  # the prompt did not fit (compaction handles it, not retry)
    "auth",  # 401/403: a key is missing or wrong
    "invalid_request",  # 400/404/422...: retrying the same request cannot help
    "content_filter",  # the provider refused the content
    "aborted",  # the user or the caller cancelled it
    "other",
]

# Failures where the same request may well succeed a moment later.
TRANSIENT_KINDS: frozenset[str] = frozenset(
    {"overloaded", "rate_limited", "server_error", "timeout", "connection", "stream_cut"}
)


def kind_for_status(status: int, text: str = "") -> ErrorKind:
    """The kind of an HTTP error answer (the body text refines 400/413 into overflow)."""
    if is_context_overflow_text(text):
        return "context_overflow"
    if status == 529 or (status == 503 and "overloaded" in text.lower()):
        return "overloaded"
    if status == 429:
        return "rate_limited"
    if status == 408:
        return "timeout"
    if status in (401, 403):
        return "auth"
    if status >= 500 or status == 409:  # 409: Anthropic's "try again" conflict
        return "server_error"
    return "invalid_request"


_TEXT_KINDS: list[tuple[ErrorKind, re.Pattern[str]]] = [
    ("overloaded", re.compile(r"\boverloaded", re.IGNORECASE)),
    ("rate_limited", re.compile(r"rate.?limit|too many requests|^429\b|resource.?exhausted", re.IGNORECASE)),
    ("server_error", re.compile(r"^5\d\d\b|internal server error|service unavailable|bad gateway", re.IGNORECASE)),
    ("timeout", re.compile(r"timed out|timeout", re.IGNORECASE)),
    ("connection", re.compile(r"^connection (failed|lost|reset|refused)|could not connect", re.IGNORECASE)),
    ("stream_cut", re.compile(r"stream ended before|ended without a final message|closed early", re.IGNORECASE)),
    ("auth", re.compile(r"^40[13]\b|invalid (x-)?api.?key|unauthori[sz]ed|authentication", re.IGNORECASE)),
    ("content_filter", re.compile(r"content.?filter", re.IGNORECASE)),
    ("aborted", re.compile(r"^request was (aborted|cancelled)", re.IGNORECASE)),
]


def classify(text: str | None) -> ErrorKind:
    """The kind a failure's text describes, or ``"other"`` when the wording is not known."""
    if not text:
        return "other"
    if is_context_overflow_text(text):
        return "context_overflow"
    for kind, pattern in _TEXT_KINDS:
        if pattern.search(text):
            return kind
    return "other"
