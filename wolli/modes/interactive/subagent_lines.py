"""Subagents as short lines of text, shared by the TUI's child rows and line mode.

Only the steps a person follows are worth a line: a child starts, calls a tool, a tool
fails, it answers, it ends. Tokens never make a line (ten children streaming at once would
otherwise flood the screen and the CPU).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...base.text_safety import terminal_safe
from ...config.themes import ThemeSpec
from .tool_text import call_header

if TYPE_CHECKING:
    from ...runtime.events import SubagentEndEvent, SubagentStartEvent

_MAX = 160


def _clip(text: str, limit: int = _MAX) -> str:
    line = " ".join(terminal_safe(text).split())
    return line if len(line) <= limit else line[: limit - 1] + "…"


def start_line(event: SubagentStartEvent) -> str:
    model = f" on {event.model}" if getattr(event, "model", None) else ""
    return _clip(f"{event.name} started: {event.description}{model}")


def end_line(event: SubagentEndEvent) -> str:
    tokens = event.input_tokens + event.output_tokens
    figures = f"{event.duration_ms / 1000:.1f}s, {tokens:,} tokens"
    if event.status == "done":
        changed = f", changed {len(event.changed_files)} files" if event.changed_files else ""
        return _clip(f"{event.name} done ({figures}{changed})")
    if event.status == "aborted":
        return _clip(f"{event.name} stopped ({figures})")
    return _clip(f"{event.name} failed: {event.error or 'unknown error'} ({figures})")


def child_event_line(name: str, event: Any, spec: ThemeSpec, cwd: str | None = None) -> str | None:
    """One line for a child's event, or None when it is not a step worth showing."""
    kind = event.type
    if kind == "tool_execution_start":
        return _clip(f"{name} › {call_header(event.tool_name, event.args, spec, cwd).plain}")
    if kind == "tool_execution_end" and event.is_error:
        text = event.result.text() if hasattr(event.result, "text") else ""
        return _clip(f"{name} › {event.tool_name} failed: {text.strip().splitlines()[0] if text.strip() else ''}")
    if kind == "message_end" and getattr(event.message, "role", None) == "assistant":
        said = event.message.text().strip()
        if event.message.stop_reason == "error":
            return _clip(f"{name} › error: {event.message.error_message or ''}")
        return _clip(f"{name} › {said}") if said else None
    if kind == "notice":
        return _clip(f"{name} › {event.message}")
    if kind == "auto_retry_start":
        return _clip(f"{name} › retrying: {event.error_message}")
    return None
