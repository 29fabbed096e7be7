"""One tool call in the transcript: a header, and a body that fills in as results arrive.

The header comes from the tool's ``render_call`` (else the built-in renderer of its name, else
name and arguments); the body from ``render_result`` (else the built-in one). A renderer that
raises is shown as a one-line error in its slot and the built-in rendering is used, so a
broken extension never hides what the tool did. Rows are collapsed by default (a few lines of
the body); Ctrl+O expands every row.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

from rich.console import RenderableType
from rich.text import Text
from textual.containers import Vertical
from textual.widgets import Static

from ... import tool_text as builtin
from ..rendering import as_renderable

if TYPE_CHECKING:
    from ....agent.tool import ToolResult

PENDING, RUNNING, SUCCESS, ERROR = "pending", "running", "success", "error"


class ToolRow(Vertical):
    DEFAULT_CSS = "ToolRow { height: auto; }"
    DEFAULT_CLASSES = "tool-row"

    def __init__(self, tool_call_id: str, name: str, args: Any, *, context: Any) -> None:
        super().__init__(classes=f"tool-{PENDING}")
        self.tool_call_id = tool_call_id
        self.tool_name = name
        self.args = args
        self.context = context  # the TUI's render context: theme spec, ansi theme, tool lookup, cwd
        self.state = PENDING
        self.expanded = context.tools_expanded
        self.result: ToolResult | None = None
        self.started_at: float | None = None
        self.elapsed_s: float | None = None
        self.header = Static(self._header(), classes="tool-header")
        self.body = Static("", classes="tool-body")
        self.renderer_errors: list[str] = []

    def on_mount(self) -> None:
        # A row rebuilt from history (or scrolled back in) has its result and state already.
        if self.result is not None:
            self._render_body(partial=self.state == RUNNING)

    def compose(self):  # type: ignore[override]
        yield self.header
        yield self.body

    # ------------------------------------------------------------------ state

    def start(self, args: Any = None) -> None:
        if args is not None:
            self.args = args
        self.started_at = time.monotonic()
        self.set_state(RUNNING)
        self.header.update(self._header())

    def update_partial(self, partial: ToolResult) -> None:
        self.result = partial
        self._render_body(partial=True)

    def finish(self, result: ToolResult, is_error: bool) -> None:
        self.result = result
        if self.started_at is not None:
            self.elapsed_s = time.monotonic() - self.started_at
        self.set_state(ERROR if is_error else SUCCESS)
        self._render_body()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self._render_body(partial=self.state == RUNNING)

    def on_click(self, event: Any) -> None:
        """A click expands or collapses this row alone (Ctrl+O does every row)."""
        event.stop()
        self.set_expanded(not self.expanded)

    def set_state(self, state: str) -> None:
        self.remove_class(f"tool-{self.state}")
        self.state = state
        self.add_class(f"tool-{state}")

    # ------------------------------------------------------------------ rendering

    def _definition(self) -> Any:
        return self.context.tool(self.tool_name)

    def _custom(self, slot: str, *args: Any) -> RenderableType | None:
        definition = self._definition()
        fn = getattr(definition, slot, None) if definition is not None else None
        if fn is None:
            return None
        try:
            return as_renderable(fn(*args))
        except Exception as exc:  # the spec: a failing renderer falls back to the built-in one
            message = f"{slot} of {self.tool_name} failed: {type(exc).__name__}: {exc}"
            if message not in self.renderer_errors:
                self.renderer_errors.append(message)
                self.context.report_renderer_error(message)
            return None

    def _header(self) -> RenderableType:
        custom = self._custom("render_call", self.args, self.context.ui_theme, self._render_context())
        if custom is not None:
            return custom
        return builtin.call_header(self.tool_name, self.args, self.context.spec, self.context.cwd)

    def _render_context(self) -> dict[str, Any]:
        return {"tool_call_id": self.tool_call_id, "cwd": self.context.cwd, "expanded": self.expanded,
                "state": self.state}

    def _render_body(self, partial: bool = False) -> None:
        result = self.result
        if result is None:
            self.body.update("")
            return
        options = {"expanded": self.expanded, "is_partial": partial, "is_error": self.state == ERROR}
        custom = self._custom("render_result", result, options, self.context.ui_theme, self._render_context())
        parts: list[RenderableType] = []
        if custom is not None:
            parts.append(custom)
        else:
            text = "\n".join(getattr(b, "text", "") for b in result.content if getattr(b, "type", None) == "text")
            parts.append(builtin.result_body(self.tool_name, self.args, text, result.details, self.state == ERROR,
                                             self.expanded, self.context.spec, self.elapsed_s))
        for error in self.renderer_errors:
            parts.append(Text(error, style=self.context.spec.color("error") or "red"))
        if len(parts) == 1:
            self.body.update(parts[0])
        elif all(isinstance(p, Text) for p in parts):
            self.body.update(Text("\n").join(parts))  # type: ignore[arg-type]
        else:
            from rich.console import Group

            self.body.update(Group(*parts))
