"""Failure kinds: set where the failure is known, a strict text fallback, and the retry decision."""

from __future__ import annotations

import pytest

from wolli.ai.failures import TRANSIENT_KINDS, classify, kind_for_status
from wolli.ai.types import AssistantMessage
from wolli.runtime.live.retry import is_retryable, retry_delay_ms, wait_too_long


@pytest.mark.parametrize(
    ("status", "text", "kind"),
    [
        (529, "529 Overloaded", "overloaded"),
        (503, "503 The model is overloaded.", "overloaded"),
        (503, "503 Service Unavailable", "server_error"),
        (429, "429 Rate limit reached", "rate_limited"),
        (408, "408 Request Timeout", "timeout"),
        (401, "401 invalid x-api-key", "auth"),
        (400, "400 prompt is too long: 250000 tokens > 200000 maximum", "context_overflow"),
        (400, "400 model 'x' does not exist", "invalid_request"),
        (404, "404 Not Found", "invalid_request"),
    ],
)
def test_kind_for_status(status: int, text: str, kind: str) -> None:
    assert kind_for_status(status, text) == kind


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("529 Overloaded", "overloaded"),
        ("Overloaded", "overloaded"),
        ("Connection failed: could not reach http://127.0.0.1:9/v1 (ConnectError)", "connection"),
        ("Anthropic stream ended before completion (no message_stop event)", "stream_cut"),
        ("prompt is too long: 250000 tokens > 200000 maximum", "context_overflow"),
        ("The tool is not allowed to run", "other"),
        ("Server said: try again please", "other"),  # vague wording is never retried
        ("", "other"),
        (None, "other"),
    ],
)
def test_classify_is_strict(text: str | None, kind: str) -> None:
    assert classify(text) == kind


def failed(kind: str | None, text: str = "boom", retry_after_ms: int | None = None) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=text, error_kind=kind, retry_after_ms=retry_after_ms)


def test_retry_follows_the_kind_not_the_wording() -> None:
    assert is_retryable(failed("overloaded", "something odd"), max_delay_ms=60_000)
    assert not is_retryable(failed("invalid_request", "503 overloaded"), max_delay_ms=60_000)
    assert not is_retryable(failed("context_overflow"), max_delay_ms=60_000)
    # No kind (a message from an older session file): the text decides.
    assert is_retryable(failed(None, "529 Overloaded"), max_delay_ms=60_000)
    assert not is_retryable(AssistantMessage(error_kind="overloaded"), max_delay_ms=60_000)  # not an error
    assert {"overloaded", "rate_limited", "server_error", "connection", "stream_cut", "timeout"} == TRANSIENT_KINDS


def test_the_server_wait_is_honoured_and_capped() -> None:
    asked = failed("rate_limited", retry_after_ms=2_500)
    assert retry_delay_ms(asked, 1, 1000, 60_000) == 2_500
    assert retry_delay_ms(failed("rate_limited"), 3, 1000, 60_000) == 4_000  # back-off: base * 2^(n-1)
    assert retry_delay_ms(failed("rate_limited"), 10, 1000, 30_000) == 30_000
    too_long = failed("rate_limited", retry_after_ms=120_000)
    assert wait_too_long(too_long, 60_000) and not is_retryable(too_long, max_delay_ms=60_000)
