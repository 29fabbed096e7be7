"""Session events -> screen updates: the one place the TUI reads the event stream.

One ``match`` over the event union (docs/architecture.md §3: the UI is a client of the runtime like
json and rpc mode). Streamed text goes through the :class:`FrameBatcher`, so a burst of
tokens costs one widget update per frame. Rows for history (a resumed session, a switch to
another session) are built lazily by the transcript. Messages are told apart by their
``role`` rather than their classes, so this module (imported before the first frame) does
not import the runtime's models; the rows' widget modules load with the first row that needs
them (the warm-up loads them once the session is on screen).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, Protocol

from textual.widget import Widget

from ..interactive.notices import event_notice, extension_error_line
from .app_view import TuiApp
from .frame_batcher import FrameBatcher
from .row_context import RenderContext
from .timers import after
from .widgets.simple_messages import BashExecutionView, CustomMessageView, NoticeView, SummaryView

if TYPE_CHECKING:
    from rich.console import RenderableType
    from rich.text import Text

    from ...agent.messages import AgentMessage, CustomMessage
    from ...ai.types import AssistantMessage, ToolCall, ToolResultMessage
    from ...runtime.events import SessionEvent
    from .widgets.assistant_message import AssistantMessageView
    from .widgets.tool_row import ToolRow


class AdaptedApp(TuiApp, Protocol):
    """The app as the adapter sees it: where rows go, and how they are drawn."""

    @property
    def render_context(self) -> RenderContext: ...
    def on_session_started(self, event: SessionEvent) -> None: ...
    def render_custom_message(self, message: CustomMessage) -> tuple[RenderableType | Widget | None, Text | None]: ...


class EventAdapter:
    def __init__(self, app: AdaptedApp) -> None:
        self.app = app
        self.batcher = FrameBatcher(self._at_frame)
        self.current: AssistantMessageView | None = None
        self.tool_rows: dict[str, ToolRow] = {}

    def _at_frame(self, delay: float, flush: Callable[[], None]) -> None:
        after(self.app, delay, flush)  # not set_timer: the batcher asks for 0 after a quiet spell

    # ------------------------------------------------------------------ the stream

    def __call__(self, event: SessionEvent) -> None:
        app = self.app
        match event.type:
            case "message_start":
                self._message_start(event.message)
            case "message_update":
                app.working.waiting(True)  # data came: the wait starts again
                view, message = self.current, event.message
                if view is not None and message.role == "assistant":
                    self.batcher.mark(view, lambda: view.sync(message))
                    self.batcher.mark(app.working, app.working.pulse)  # one screen update for both
            case "message_end":
                if event.message.role == "assistant":
                    app.working.waiting(False)
                self._message_end(event.message)
            case "turn_start":
                app.working.waiting(True)
            case "tool_execution_start":
                args = _args_dict(event.args)
                row = self._tool_row(event.tool_call_id, event.tool_name, args)
                row.start(args)
            case "tool_execution_update":
                row = self._tool_row(event.tool_call_id, event.tool_name, _args_dict(event.args))
                row.result = event.partial_result  # drawn at the next frame (one draw per frame)
                self.batcher.mark(row, row.redraw_partial)
            case "subagent_event":
                from .widgets.subagent_row import SubagentRow

                found = self.tool_rows.get(event.tool_call_id)
                if isinstance(found, SubagentRow) and found.child_event(event.event):
                    self.batcher.mark(found, found.redraw_partial)
            case "tool_execution_end":
                row = self._tool_row(event.tool_call_id, event.tool_name, None)
                self.batcher.drop(row)
                row.finish(event.result, event.is_error)
            case "run_state":
                if event.state == "idle":
                    self.batcher.flush()
                    app.working.stop()
                else:
                    app.working.start()
                    if event.state == "compacting":
                        app.working.set_message(app.working.message or "Compacting…")
            case "agent_end":
                self.batcher.flush()
                app.refresh_footer()
            case "queue_update":
                app.queued.set_queue(event.steering, event.follow_up)
            case "compaction_start" | "auto_retry_start" | "auto_retry_end":
                self._event_notice(event)
            case "compaction_end":
                if not self._event_notice(event) and event.result is not None:
                    summary = getattr(event.result, "summary", "")
                    build = partial(SummaryView, "Compacted older messages", summary)
                    app.transcript.add(build(), build)
                app.refresh_footer()
            case "model_select" | "thinking_level_select" | "permission_mode_change":
                app.refresh_footer()
            case "extension_error":
                app.add_notice(extension_error_line(app.controller.host, event), "error")
            case "notice":
                app.add_notice(event.message, event.level)
            case "session_start":
                app.on_session_started(event)
            case "session_tree":
                app.reload_transcript()
            case _:
                pass

    def _event_notice(self, event: SessionEvent) -> bool:
        """Show the shared sentence for ``event`` (:mod:`..interactive.notices`), if it has one."""
        sentence = event_notice(event)
        if sentence is not None:
            self.app.add_notice(*sentence)
        return sentence is not None

    # ------------------------------------------------------------------ messages

    def _message_start(self, message: AgentMessage) -> None:
        if message.role == "assistant":
            view = self._assistant_view()
            self.current = view
            # Rebuilt from the final message once it ends (set_rebuild below).
            self.app.transcript.add(view, partial(self._assistant_rebuild, message))
            view.sync(message)
        elif message.role == "toolResult":
            pass  # shown by its tool row
        else:
            widget = self.build_row(message)
            if widget is not None:
                self.app.transcript.add(widget, partial(self._history_row, message))

    def _message_end(self, message: AgentMessage) -> None:
        if message.role != "assistant":
            return
        view = self.current
        self.current = None
        if view is None:
            return
        self.batcher.drop(view)
        view.finish(message)
        self.app.transcript.set_rebuild(view, partial(self._assistant_rebuild, message))
        for call in message.tool_calls():
            self._tool_row(call.id, call.name, call.arguments)
        self.app.refresh_footer()

    def _assistant_view(self) -> AssistantMessageView:
        from .widgets.assistant_message import AssistantMessageView

        return AssistantMessageView(show_thinking=self.app.thinking_visible)

    def _assistant_rebuild(self, message: AssistantMessage) -> Widget:
        view = self._assistant_view()
        view.finish(message)  # applied once mounted
        return view

    def _tool_row(self, tool_call_id: str, name: str, args: dict[str, Any] | None) -> ToolRow:
        row = self.tool_rows.get(tool_call_id)
        if row is None:
            row = _row_class(name)(tool_call_id, name, args, context=self.app.render_context)
            self.tool_rows[tool_call_id] = row
            self.app.transcript.add(row, partial(self._rebuild_tool, tool_call_id))
        return row

    def _rebuild_tool(self, tool_call_id: str) -> Widget:
        from .widgets.subagent_row import SubagentRow

        old = self.tool_rows[tool_call_id]
        row = _row_class(old.tool_name)(tool_call_id, old.tool_name, old.args, context=self.app.render_context)
        row.set_state(old.state)
        row.result, row.elapsed_s, row.started_at = old.result, old.elapsed_s, old.started_at
        if isinstance(row, SubagentRow) and isinstance(old, SubagentRow):
            row.steps, row.stream = old.steps, old.stream  # a child's transcript so far
        self.tool_rows[tool_call_id] = row
        return row

    # ------------------------------------------------------------------ history

    def build_row(self, message: AgentMessage) -> Widget | None:
        """A finished row for a message that does not stream (user, bash, summaries, custom)."""
        from ...ai.types import content_text

        match message.role:
            case "user":
                from .widgets.user_message import UserMessageView

                content = message.content
                images = sum(getattr(b, "type", "") == "image" for b in content) if isinstance(content, list) else 0
                return UserMessageView(content_text(content), images)
            case "bashExecution":
                return BashExecutionView(message)
            case "compactionSummary":
                return SummaryView(f"Compacted {message.tokens_before:,} tokens of older messages", message.summary)
            case "branchSummary":
                return SummaryView("Summary of the branch left behind", message.summary)
            case "custom" if message.display:
                body, error = self.app.render_custom_message(message)
                if isinstance(body, Widget):  # the renderer made a widget of its own
                    body.add_class("message")
                    return body
                return CustomMessageView(message, body, error)
        return None

    def history_builders(self, messages: list[AgentMessage]) -> list[Callable[[], Widget]]:
        """Lazy rows for a whole conversation: tool calls get rows with their results."""
        results = {m.tool_call_id: m for m in messages if m.role == "toolResult"}
        builders: list[Callable[[], Widget]] = []
        for message in messages:
            if message.role == "assistant":
                builders.append(partial(self._assistant_rebuild, message))
                for call in message.tool_calls():
                    builders.append(partial(self._history_tool, call, results.get(call.id)))
            elif _has_row(message):
                builders.append(partial(self._history_row, message))
        return builders

    def _history_row(self, message: AgentMessage) -> Widget:
        return self.build_row(message) or NoticeView("")

    def _history_tool(self, call: ToolCall, result: ToolResultMessage | None) -> Widget:
        from ...agent.tool import ToolResult
        from .widgets.tool_row import ERROR, SUCCESS

        row = _row_class(call.name)(call.id, call.name, call.arguments, context=self.app.render_context)
        self.tool_rows[call.id] = row
        if result is not None:  # styled as done before it is mounted (a class change restyles it)
            row.result = ToolResult(content=list(result.content), details=result.details)
            row.set_state(ERROR if result.is_error else SUCCESS)
        return row

    def reset(self) -> None:
        self.current = None
        self.tool_rows.clear()


def _row_class(tool_name: str) -> type[ToolRow]:
    """A ``task`` call is a subagent at work: its row shows the child (docs/subagents.md)."""
    if tool_name == "task":
        from .widgets.subagent_row import SubagentRow

        return SubagentRow
    from .widgets.tool_row import ToolRow

    return ToolRow


def _has_row(message: AgentMessage) -> bool:
    """Whether ``build_row`` shows this message (checked without building a widget)."""
    if message.role == "custom":
        return bool(message.display)
    return message.role in ("user", "bashExecution", "compactionSummary", "branchSummary")


def _args_dict(args: object) -> dict[str, Any] | None:
    """A tool call's arguments as the rows read them (the model's JSON object; anything else
    is shown as no arguments)."""
    return args if isinstance(args, dict) else None
