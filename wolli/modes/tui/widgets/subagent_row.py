"""The row of a ``task`` call: one subagent at work, collapsible like every tool row.

Collapsed, it is the call's header and one status line: the child's name, what it is doing
(the tool it runs), its tool calls, tokens and elapsed time. Expanded (a click, or Ctrl+O
for every row), it also shows the child's transcript as it happens: a line per step and
the last lines of the answer it is writing. The child's tokens cost nothing while the row
is collapsed (the adapter only keeps the latest message), and at most one redraw per frame
when expanded, so ten children streaming cost the TUI what one stream does.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.text import Text

from ....base.text_safety import terminal_safe
from ...interactive import subagent_lines
from ...interactive import tool_text as builtin
from .tool_row import RUNNING, ToolRow

if TYPE_CHECKING:
    from textual.timer import Timer

    from ....agent.tool import ToolResult
    from ....ai.types import AssistantMessage
    from ..row_context import RenderContext

MAX_STEPS = 200  # kept per child (expanded shows the last ones)
SHOWN_STEPS = 30
TAIL_LINES = 6


def _tokens(count: int) -> str:
    return f"{count / 1000:.1f}k" if count >= 1000 else str(count)


class SubagentRow(ToolRow):
    def __init__(self, tool_call_id: str, name: str, args: dict[str, Any] | None, *, context: RenderContext) -> None:
        super().__init__(tool_call_id, name, args, context=context)
        self.steps: list[str] = []
        self.stream: AssistantMessage | None = None  # the child's answer being written (its latest partial message)
        self._ticker: Timer | None = None

    @property
    def subagent(self) -> str:
        return str((self.args or {}).get("subagent_type") or "general-purpose")

    # ------------------------------------------------------------------ live state

    def on_mount(self) -> None:
        super().on_mount()
        if self.state == RUNNING:
            self._start_ticker()

    def start(self, args: dict[str, Any] | None = None) -> None:
        super().start(args)
        self._start_ticker()
        self._render_body(partial=True)

    def _start_ticker(self) -> None:
        if self._ticker is None and self.is_mounted:
            # The elapsed time moves on even while the child waits for its model.
            self._ticker = self.set_interval(1.0, lambda: self._render_body(partial=True))

    def finish(self, result: ToolResult, is_error: bool) -> None:
        if self._ticker is not None:
            self._ticker.stop()
            self._ticker = None
        self.stream = None
        super().finish(result, is_error)

    def child_event(self, event: Any) -> bool:
        """Fold in a child's event (not its tokens); True when the row should redraw."""
        if event.type == "message_update":
            self.stream = event.message
            return self.expanded
        if event.type == "message_end":
            self.stream = None
        line = subagent_lines.child_event_line(self.subagent, event, self.context.spec, self.context.cwd)
        if line is None:
            return False
        self.steps.append(line)
        del self.steps[:-MAX_STEPS]
        return self.expanded

    # ------------------------------------------------------------------ drawing

    def _render_body(self, partial: bool = False) -> None:
        if self._definition() is not None and getattr(self._definition(), "render_result", None) is not None:
            super()._render_body(partial)  # an extension drew task rows its own way
            return
        parts = [self._status_line()]
        if self.expanded and (self.steps or self.stream is not None):
            parts.append(self._transcript())
        if self.state != RUNNING and self.result is not None:
            text = "\n".join(getattr(b, "text", "") for b in self.result.content if getattr(b, "type", None) == "text")
            parts.append(builtin.result_body("task", self.args, text, None, self.state == "error", self.expanded,
                                             self.context.spec, None))
        self._set_slot("render_result", Text("\n").join(parts))

    def _status_line(self) -> Text:
        details = getattr(self.result, "details", None)
        details = details if isinstance(details, dict) else {}
        running = self.state == RUNNING
        if running:
            doing = f"running {details['currentTool']}" if details.get("currentTool") else (
                "working" if details else "starting")
        else:
            doing = {"success": "done", "error": "failed"}.get(self.state, self.state)
        elapsed = (time.monotonic() - self.started_at if running and self.started_at is not None
                   else (details.get("durationMs") or 0) / 1000 or self.elapsed_s or 0)
        figures = [f"{details.get('toolCalls', 0)} tool calls",
                   f"{_tokens(int(details.get('inputTokens', 0)) + int(details.get('outputTokens', 0)))} tokens",
                   f"{elapsed:.0f}s"]
        line = Text("↳ ", style="dim")
        line.append(self.subagent, style="bold")
        line.append(f" · {doing} · " + " · ".join(figures), style="dim")
        return line

    def _transcript(self) -> Text:
        lines = [Text(f"  {step}", style="dim") for step in self.steps[-SHOWN_STEPS:]]
        if self.stream is not None:
            said = terminal_safe(self.stream.text()) if hasattr(self.stream, "text") else ""
            for tail in said.strip().splitlines()[-TAIL_LINES:]:
                lines.append(Text(f"  │ {tail}"))
        return Text("\n").join(lines)
