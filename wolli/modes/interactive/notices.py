"""One-line notices the interactive front ends (TUI, line mode) show for session events."""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

if TYPE_CHECKING:
    from ...runtime.events import ExtensionErrorEvent, SessionEvent


def extension_error_line(host: object, event: ExtensionErrorEvent) -> str:
    """``<extension>: <event> handler failed: <Type>: <message>`` for an ``extension_error``
    (the event names the extension by its file; the line by its name)."""
    owner = str(event.extension_path)
    runtime = getattr(host, "extensions", None)
    if runtime is not None and hasattr(runtime, "name_of"):
        owner = runtime.name_of(owner)
    what = event.event if str(event.event).startswith("command:") else f"{event.event} handler"
    return f"{owner}: {what} failed: {event.error}"


Level = Literal["info", "warning", "error"]


def event_notice(event: SessionEvent) -> tuple[str, Level] | None:
    """The sentence both interactive clients show for a compaction or retry event, with its
    level; ``None`` when the event has no sentence of its own (each client draws the rest
    in its own way: the TUI as widgets, line mode as scrollback lines)."""
    # Imported here: the TUI draws its first frame before the runtime (and pydantic) loads.
    from ...runtime.events import (
        AutoRetryEndEvent,
        AutoRetryStartEvent,
        CompactionEndEvent,
        CompactionStartEvent,
    )

    match event:
        case CompactionStartEvent():
            if event.reason == "overflow":
                return "The context is full: compacting older messages…", "info"
            return "Compacting older messages…", "info"
        case CompactionEndEvent() if event.error_message and not event.aborted:
            return f"Compaction failed: {event.error_message}", "error"
        case AutoRetryStartEvent():
            return (f"Retrying in {event.delay_ms / 1000:.1f}s (attempt {event.attempt} of "
                    f"{event.max_attempts}): {event.error_message}", "warning")
        case AutoRetryEndEvent() if not event.success:
            return f"Giving up after {event.attempt + 1} attempts: {event.final_error}", "error"
    return None
