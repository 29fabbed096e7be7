"""One-line notices the interactive front ends (TUI, line mode) show for session events."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...runtime.events import ExtensionErrorEvent


def extension_error_line(host: object, event: ExtensionErrorEvent) -> str:
    """``<extension>: <event> handler failed: <Type>: <message>`` for an ``extension_error``
    (the event names the extension by its file; the line by its name)."""
    owner = str(event.extension_path)
    runtime = getattr(host, "extensions", None)
    if runtime is not None and hasattr(runtime, "name_of"):
        owner = runtime.name_of(owner)
    what = event.event if str(event.event).startswith("command:") else f"{event.event} handler"
    return f"{owner}: {what} failed: {event.error}"
