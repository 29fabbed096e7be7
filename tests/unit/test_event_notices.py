"""The sentences both interactive clients show for compaction and retry events, written once."""

from __future__ import annotations

from wolli.modes.interactive.notices import event_notice
from wolli.runtime.events import (
    AutoRetryEndEvent,
    AutoRetryStartEvent,
    CompactionEndEvent,
    CompactionStartEvent,
    QueueUpdateEvent,
)


def test_compaction_start_says_why() -> None:
    assert event_notice(CompactionStartEvent(reason="threshold")) == ("Compacting older messages…", "info")
    text, level = event_notice(CompactionStartEvent(reason="overflow")) or ("", "")
    assert text.startswith("The context is full") and level == "info"


def test_failures_are_errors_and_success_has_no_sentence() -> None:
    failed = CompactionEndEvent(reason="manual", error_message="model said no")
    assert event_notice(failed) == ("Compaction failed: model said no", "error")
    # An aborted compaction and a successful one are drawn by each client itself.
    assert event_notice(CompactionEndEvent(reason="manual", error_message="x", aborted=True)) is None
    assert event_notice(CompactionEndEvent(reason="manual", result=object())) is None


def test_retry_sentences() -> None:
    start = AutoRetryStartEvent(attempt=2, max_attempts=4, delay_ms=1500, error_message="overloaded")
    assert event_notice(start) == ("Retrying in 1.5s (attempt 2 of 4): overloaded", "warning")
    assert event_notice(AutoRetryEndEvent(success=False, attempt=3, final_error="529")) == (
        "Giving up after 4 attempts: 529", "error")
    assert event_notice(AutoRetryEndEvent(success=True, attempt=1)) is None


def test_other_events_have_none() -> None:
    assert event_notice(QueueUpdateEvent(steering=[], follow_up=[])) is None
