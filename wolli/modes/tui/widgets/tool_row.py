"""One tool call in the transcript: a header, and a body that fills in as results arrive.

The header comes from the tool's ``render_call`` (else the built-in renderer of its name, else
name and arguments); the body from ``render_result`` (else the built-in one). A renderer may
return text, lines, a Rich renderable or a Textual widget. One that raises (when called, or
later while its renderable is drawn) is shown as one error line in its slot, the built-in
rendering is used, and the traceback goes to the extension log: a broken extension never
hides what the tool did, and never takes the app down (live or when a session is resumed).
Rows are collapsed by default (a few lines of the body); Ctrl+O expands every row.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any, cast

from rich.text import Text
from textual import events
from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from ...interactive import tool_text as builtin
from ...interactive.render_context import ToolRenderContext
from ..rendering import as_renderable, guard_widget

if TYPE_CHECKING:
    from rich.console import RenderableType

    from ....agent.tool import ToolResult
    from ..row_context import RenderContext

PENDING, RUNNING, SUCCESS, ERROR = "pending", "running", "success", "error"


class ToolRow(Vertical):
    DEFAULT_CSS = "ToolRow { height: auto; } ToolRow > .tool-slot { height: auto; }"
    DEFAULT_CLASSES = "tool-row"

    def __init__(self, tool_call_id: str, name: str, args: dict[str, Any] | None, *, context: RenderContext) -> None:
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
        self.renderer_errors: dict[str, Text] = {}  # slot -> the error line shown in it
        self.shared: dict[str, Any] = {}  # ``context.state``: shared by the row's two renderers
        self.last: dict[str, Any] = {}  # ``context.last_component`` per slot
        self.header = Static("", classes="tool-header")
        self.body = Static("", classes="tool-body")
        self.widgets: dict[str, Widget] = {}  # slot -> a widget a renderer returned
        self._set_slot("render_call", self._header())

    def on_mount(self) -> None:
        # A row rebuilt from history (or scrolled back in) has its result and state already.
        if self.result is not None:
            self._render_body(partial=self.state == RUNNING)

    def compose(self):  # type: ignore[override]
        yield self.header
        if "render_call" in self.widgets:
            yield self.widgets["render_call"]
        yield self.body
        if "render_result" in self.widgets:
            yield self.widgets["render_result"]

    # ------------------------------------------------------------------ state

    def start(self, args: dict[str, Any] | None = None) -> None:
        if args is not None:
            self.args = args
        self.started_at = time.monotonic()
        self.set_state(RUNNING)
        self._set_slot("render_call", self._header())

    def update_partial(self, partial: ToolResult) -> None:
        self.result = partial
        self._render_body(partial=True)

    def redraw_partial(self) -> None:
        """Draw the partial result stored in ``result`` (the adapter batches these per frame)."""
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

    def invalidate(self) -> None:
        """``context.invalidate()``: draw both slots again."""
        self._set_slot("render_call", self._header())
        self._render_body(partial=self.state == RUNNING)

    def on_click(self, event: events.Click) -> None:
        """A click expands or collapses this row alone (Ctrl+O does every row)."""
        event.stop()
        self.set_expanded(not self.expanded)

    def set_state(self, state: str) -> None:
        self.remove_class(f"tool-{self.state}")
        self.state = state
        self.add_class(f"tool-{state}")

    # ------------------------------------------------------------------ rendering

    def _definition(self) -> object:
        return self.context.tool(self.tool_name)

    def _owner(self, definition: object) -> str:
        source = str(getattr(definition, "source", "") or "")
        return source.removeprefix("extension:") or self.tool_name

    def _custom(self, slot: str, *args: object) -> object:
        """What the tool's own renderer for ``slot`` returned (a widget, or a guarded
        renderable), or None for the built-in look (none given, or it raised)."""
        definition = self._definition()
        fn = getattr(definition, slot, None) if definition is not None else None
        if fn is None:
            return None
        what = f"{slot} of {self.tool_name}"

        def failed(exc: BaseException) -> Text:
            line = self.context.renderer_failed(self._owner(definition), what, exc)
            self.renderer_errors.setdefault(slot, line)
            return line

        try:
            value = fn(*args)
        except Exception as exc:  # docs/extensions.md: a failing renderer falls back to the built-in one
            if slot not in self.renderer_errors:
                failed(exc)
            return None
        self.renderer_errors.pop(slot, None)
        self.last[slot] = value
        if isinstance(value, Widget):
            return value if value is self.widgets.get(slot) else guard_widget(value, failed)
        return as_renderable(value, failed)

    def _render_context(self, partial: bool = False) -> ToolRenderContext:
        return ToolRenderContext(
            tool_call_id=self.tool_call_id, args=self.args, cwd=self.context.cwd, expanded=self.expanded,
            is_partial=partial, is_error=self.state == ERROR, execution_started=self.state != PENDING,
            args_complete=self.args is not None, show_images=False, status=self.state, state=self.shared,
            invalidate=self.invalidate)

    def _header(self) -> object:
        custom = None
        if self.args is not None:  # a row made from a result alone has no arguments to show
            context = self._render_context()
            context.last_component = self.last.get("render_call")
            custom = self._custom("render_call", self.args, self.context.ui_theme, context)
        builtin_header = builtin.call_header(self.tool_name, self.args, self.context.spec, self.context.cwd)
        if custom is None:
            error = self.renderer_errors.get("render_call")
            return Text("\n").join([builtin_header, error]) if error is not None else builtin_header
        return custom

    def _render_body(self, partial: bool = False) -> None:
        result = self.result
        if result is None:
            self._set_slot("render_result", Text(""))
            return
        options = {"expanded": self.expanded, "is_partial": partial, "is_error": self.state == ERROR}
        context = self._render_context(partial)
        context.last_component = self.last.get("render_result")
        custom = self._custom("render_result", result, options, self.context.ui_theme, context)
        if custom is None:
            text = "\n".join(getattr(b, "text", "") for b in result.content if getattr(b, "type", None) == "text")
            custom = builtin.result_body(self.tool_name, self.args, text, result.details, self.state == ERROR,
                                         self.expanded, self.context.spec, self.elapsed_s)
            error = self.renderer_errors.get("render_result")
            if error is not None:
                custom = Text("\n").join([custom, error])
        self._set_slot("render_result", custom)

    def _set_slot(self, slot: str, value: object) -> None:
        """Show ``value`` (a renderable, or a widget a renderer returned) in ``slot``."""
        static = self.header if slot == "render_call" else self.body
        old = self.widgets.get(slot)
        if isinstance(value, Widget):
            static.display = False
            if old is value:
                return
            if old is not None and old.is_mounted:
                old.remove()
            value.add_class("tool-slot")
            self.widgets[slot] = value
            if self.is_mounted:
                self.mount(value, after=static)
            return
        if old is not None:
            del self.widgets[slot]
            if old.is_mounted:
                old.remove()
        static.display = True
        static.update(cast("RenderableType", value))  # a renderable when not a widget
