"""Session events -> lines in scrollback: the one place the line mode reads the event stream.

Answers stream as they arrive (:class:`StreamedBlock`), thinking is shown dimmed or as one
line when hidden, a tool call is a one-line summary when it starts and its result's first
lines when it ends, and a status line follows each run. Everything else (notices, retries,
compaction, extension errors) is a short line of its own. Anything printed while an answer
line is unfinished first takes that line off the screen and puts it back afterwards.

Text from the model, tools, files and servers is made :func:`terminal_safe` here, before
it is styled (tool rows in ``tool_text``): escape sequences in it are shown, never obeyed.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any

from ...base.text_safety import terminal_safe
from ...config.themes import ThemeSpec
from ..interactive import tool_text
from ..interactive.highlighting import AnsiTheme
from ..interactive.notices import event_notice, extension_error_line
from ..interactive.render_context import ToolRenderContext
from .markdown import MarkdownLines
from .status import status_parts
from .streaming import StreamedBlock
from .terminal import Terminal

if TYPE_CHECKING:
    from ...agent.messages import AgentMessage, BashExecutionMessage, CustomMessage
    from ...ai.types import AssistantMessage
    from ...runtime.events import SessionEvent, SubagentEndEvent, SubagentEvent, SubagentStartEvent
    from ...runtime.live.live_session import LiveSession

MARKERS = {  # colour terminal, plain output
    "tool": ("●", "*"),
    "info": ("·", "-"),
    "warning": ("!", "!"),
    "error": ("✗", "x"),
    "user": ("›", ">"),
    "subagent": ("↳", "|"),
}
NOTICE_TOKENS = {"info": "muted", "warning": "warning", "error": "error"}
REPLAY_LIMIT = 20  # messages shown of a resumed session (older ones: /export)


class LineOutput:
    def __init__(self, terminal: Terminal, spec: ThemeSpec, *, show_thinking: bool = True) -> None:
        self.terminal = terminal
        self.spec = spec
        self.theme = AnsiTheme(spec)
        self.show_thinking = show_thinking
        self.statuses: dict[str, str] = {}
        self.session: LiveSession | None = None  # the active session, for the status line
        self.cwd: str | None = None
        self.typed = 0  # user messages the person typed at the prompt: already on the screen
        self._block: StreamedBlock | None = None
        self._block_index = -1
        self._block_done = 0  # characters of the current block written
        self._streamed: dict[int, str] = {}  # block index -> its text printed so far (this message)
        self._markdown = MarkdownLines(spec, terminal.width)
        self._tools: dict[str, tuple[str, Any, float]] = {}  # id -> (name, args, started)
        self._render_state: dict[str, dict[str, Any]] = {}  # ``context.state`` per tool call
        self._last_tool: tuple[str, int] | None = None  # (tool call id, terminal writes) after its header
        self._ran = False
        self._failure: str | None = None  # a failed answer's error, held back one event

    # ------------------------------------------------------------------ styling

    def set_theme(self, spec: ThemeSpec) -> None:
        self.spec = spec
        self.theme = AnsiTheme(spec)
        self._markdown = MarkdownLines(spec, self.terminal.width)

    def fg(self, token: str, text: str) -> str:
        return self.theme.fg(token, text) if self.terminal.colour else text

    def marker(self, kind: str) -> str:
        return MARKERS[kind][0 if self.terminal.colour else 1]

    # ------------------------------------------------------------------ printing around a stream

    def print_line(self, text: str, *, separate: bool = False) -> None:
        """A line of its own, even in the middle of a streamed answer."""
        block = self._block
        if block is not None:
            block.suspend()
        if separate:
            self.terminal.separate()
        self.terminal.line(text)
        if block is not None:
            block.resume()

    def notice(self, text: str, level: str = "info") -> None:
        level = level if level in NOTICE_TOKENS else "info"
        first, *rest = terminal_safe(str(text)).split("\n")
        lines = [f"{self.marker(level)} {first}", *(f"  {line}" for line in rest)]
        self.print_line("\n".join(self.fg(NOTICE_TOKENS[level], line) for line in lines))

    # ------------------------------------------------------------------ the stream

    def __call__(self, event: SessionEvent) -> None:
        if self._failure is not None and event.type not in ("message_end", "turn_end"):
            failure, self._failure = self._failure, None
            if event.type not in ("auto_retry_start", "auto_retry_end"):  # they repeat the error themselves
                self.notice(failure, "error")
        match event.type:
            case "message_start":
                self._message_start(event.message)
            case "message_update":
                self._sync(event.message)
            case "message_end":
                self._message_end(event.message)
            case "tool_execution_start":
                self._tool_start(event.tool_call_id, event.tool_name, event.args)
            case "tool_execution_end":
                self._tool_end(event.tool_call_id, event.tool_name, event.result, event.is_error)
            case "agent_start":
                self._ran = True
            case "run_state" if event.state == "idle" and self._ran:
                self._ran = False
                self.status()
            case "compaction_start" | "auto_retry_start" | "auto_retry_end":
                if (sentence := event_notice(event)) is not None:
                    self.notice(*sentence)
            case "compaction_end":
                if (sentence := event_notice(event)) is not None:
                    self.notice(*sentence)
                elif event.result is not None:
                    self.notice(f"Compacted older messages ({getattr(event.result, 'tokens_before', 0):,} tokens "
                                "before).")
            case "model_select" if event.source != "restore":
                model = event.model
                self.notice(f"Model: {model.provider}/{model.id}")
            case "thinking_level_select":
                self.notice(f"Thinking: {event.level}")
            case "permission_mode_change":
                from ...permissions.modes import DESCRIPTIONS

                self.notice(f"Permission mode: {event.mode} ({DESCRIPTIONS.get(event.mode, '')})")
            case "extension_error":
                self.notice(extension_error_line(getattr(self.session, "services", None), event), "error")
            case "notice":
                self.notice(event.message, event.level)
            case "subagent_start" | "subagent_end" | "subagent_event":
                self._subagent(event)
            case "session_tree":
                self.notice("Moved to another point of the session; the conversation from there:")
                if self.session is not None:
                    self.replay(list(self.session.messages))
            case _:
                pass

    def _subagent(self, event: SubagentStartEvent | SubagentEndEvent | SubagentEvent) -> None:
        """One line per step of a child (docs/subagents.md): never its tokens."""
        from ..interactive import subagent_lines

        line: str | None
        if event.type == "subagent_start":
            line = subagent_lines.start_line(event)
        elif event.type == "subagent_end":
            line = subagent_lines.end_line(event)
        else:
            line = subagent_lines.child_event_line(event.name, event.event, self.spec, self.cwd)
        if line is not None:
            self.print_line(self.fg("dim", f"  {self.marker('subagent')} {line}"))

    def status(self) -> None:
        parts = status_parts(self.session, self.statuses)
        if not self.terminal.colour:
            from .terminal import strip_ansi

            parts = [strip_ansi(part) for part in parts]
        if parts:
            self.print_line(self.fg("dim", ("── " if self.terminal.colour else "-- ") + " · ".join(parts)),
                            separate=True)

    # ------------------------------------------------------------------ messages

    def _message_start(self, message: AgentMessage) -> None:
        match message.role:
            case "assistant":
                self._block, self._block_index, self._block_done = None, -1, 0
                self._streamed.clear()
                self._markdown.reset()
                self._sync(message)
            case "user":
                if self.typed > 0:
                    self.typed -= 1
                    return
                from ...ai.types import content_text

                self.user(content_text(message.content))
            case "bashExecution":
                self.bash(message)
            case "custom" if message.display:
                from ...ai.types import content_text

                shown = self._custom_message(message)
                if shown is None:
                    label = self.fg("customMessageLabel", f"[{terminal_safe(message.custom_type)}]")
                    shown = f"{label} {terminal_safe(content_text(message.content))}"
                self.print_line(shown, separate=True)
            case "compactionSummary" | "branchSummary":
                pass  # announced by the compaction events
            case _:
                pass

    def user(self, text: str) -> None:
        first, *rest = terminal_safe(text).split("\n")
        self.print_line("\n".join([f"{self.fg('accent', self.marker('user'))} {first}", *(f"  {r}" for r in rest)]),
                        separate=True)

    def _sync(self, message: AgentMessage) -> None:
        """Write what the partial message has beyond what is on the screen."""
        if message.role != "assistant":
            return
        for index, block in enumerate(message.content):
            if index < self._block_index or block.type not in ("text", "thinking"):
                continue
            text = block.text if block.type == "text" else block.thinking
            self._streamed[index] = text
            if index > self._block_index:
                self._end_block()
                self._start_block(index, block.type)
            if self._block is not None:  # a CR is dropped (as the block did), then the rest shown safely
                self._block.feed(terminal_safe(text[self._block_done:].replace("\r", "")))
            self._block_done = len(text)

    def _start_block(self, index: int, kind: str) -> None:
        self._block_index, self._block_done = index, 0
        self.terminal.separate()
        if kind == "text":
            self._markdown.reset()
            self._markdown.width = self.terminal.width
            self._block = StreamedBlock(self.terminal, self._markdown.render, lambda text: text)
        elif self.show_thinking:
            if not self.terminal.colour:
                self.terminal.write("Thinking: ")
            style = self.theme.fg if self.terminal.colour else None
            self._block = StreamedBlock(self.terminal, None, (lambda text: self.theme.italic(
                style("thinkingText", text))) if style else (lambda text: text))
        else:
            self.terminal.line(self.fg("dim", "Thinking…"))
            self._block = None

    def _end_block(self) -> None:
        if self._block is not None:
            self._block.finish()
            self._block = None

    def _message_end(self, message: AgentMessage) -> None:
        if message.role != "assistant":
            return
        if self._diverged(message):
            # A ``message_end`` handler replaced the message (a redaction, a rewrite): scrollback
            # cannot be taken back, so say so and print the answer as it was kept.
            self._end_block()
            self.notice("An extension changed this answer when it ended; as kept:", "warning")
            self._block, self._block_index, self._block_done = None, -1, 0
            self._streamed.clear()
        self._sync(message)
        self._end_block()
        self._block_index = -1
        if message.stop_reason == "error" and message.error_message:
            self._failure = message.error_message  # shown unless a retry or giving up says it
        elif message.stop_reason == "aborted":
            self.notice("Stopped.", "warning")

    def _diverged(self, message: AssistantMessage) -> bool:
        """Whether a block printed so far is not the start of the same block of ``message``."""
        for index, shown in self._streamed.items():
            block = message.content[index] if index < len(message.content) else None
            kind = getattr(block, "type", None)
            final = getattr(block, kind, None) if kind in ("text", "thinking") else None
            if final is None or not final.startswith(shown):
                return True
        return False

    # ------------------------------------------------------------------ tools

    def _tool_start(self, tool_call_id: str, name: str, args: object) -> None:
        self._tools[tool_call_id] = (name, args, time.monotonic())
        self._tool_header(name, args, tool_call_id)
        self._last_tool = (tool_call_id, self.terminal.writes)

    def _tool_header(self, name: str, args: object, tool_call_id: str = "") -> None:
        custom = None
        if args is not None:  # a call known only from its result has no arguments to show
            custom = self._custom(name, "render_call", args, self.ui_theme,
                                  self._render_context(tool_call_id, args, "running"))
        header = custom.split("\n")[0] if custom is not None else self.terminal.rich(
            tool_text.call_header(name, args, self.spec, self.cwd))
        self.print_line(f"{self.fg('toolTitle', self.marker('tool'))} {header}", separate=True)

    def _tool_end(self, tool_call_id: str, name: str, result: object, is_error: bool) -> None:
        from ...ai.types import content_text

        name, args, started = self._tools.pop(tool_call_id, (name, None, time.monotonic()))
        if self._last_tool != (tool_call_id, self.terminal.writes):  # something came in between: say which tool
            self._tool_header(name, args, tool_call_id)
        options = {"expanded": False, "is_partial": False, "is_error": is_error}
        custom = self._custom(name, "render_result", result, options, self.ui_theme,
                              self._render_context(tool_call_id, args, "error" if is_error else "success"))
        self._render_state.pop(tool_call_id, None)
        if custom is not None:
            rendered = custom.rstrip("\n")
        else:
            text = content_text(getattr(result, "content", []) or [])
            body = tool_text.result_body(name, args, text, getattr(result, "details", None), is_error, False,
                                         self.spec, time.monotonic() - started if name == "bash" else None, hint="")
            rendered = self.terminal.rich(body).rstrip("\n")
        if rendered.strip():
            self.print_line("\n".join("  " + line for line in rendered.split("\n")))
        self._last_tool = None

    # ------------------------------------------------------------------ history

    def replay(self, messages: list[Any], limit: int = REPLAY_LIMIT) -> None:
        """A conversation's last messages, as they looked when they streamed (a resumed
        session, a move in the tree)."""
        shown = [m for m in messages if m.role in ("user", "assistant", "bashExecution", "custom")]
        if len(shown) > limit:
            self.print_line(self.fg("dim", f"… {len(shown) - limit} earlier messages (all of them: /export)"),
                            separate=True)
            first = shown[-limit]
            messages = messages[next(i for i, m in enumerate(messages) if m is first):]
        results = {m.tool_call_id: m for m in messages if m.role == "toolResult"}
        typed, self.typed = self.typed, 0
        try:
            for message in messages:
                if message.role == "toolResult":
                    continue
                self._message_start(message)
                if message.role != "assistant":
                    continue
                self._message_end(message)
                for call in message.tool_calls():
                    self._tool_start(call.id, call.name, call.arguments)
                    result = results.get(call.id)
                    if result is not None:
                        self._tool_end(call.id, call.name, result, result.is_error)
        finally:
            self.typed = typed

    # ------------------------------------------------------------------ extension renderers

    @property
    def ui_theme(self) -> object:
        from ...extensions.ui import PLAIN_THEME

        return self.theme if self.terminal.colour else PLAIN_THEME

    def _render_context(self, tool_call_id: str, args: object, status: str) -> ToolRenderContext:
        """The render context of docs/extensions.md; scrollback cannot be redrawn, so ``invalidate`` does
        nothing and nothing is expanded."""
        return ToolRenderContext(tool_call_id=tool_call_id, args=args, cwd=self.cwd, is_error=status == "error",
                                 execution_started=True, args_complete=args is not None, status=status,
                                 state=self._render_state.setdefault(tool_call_id, {}))

    def _custom(self, tool_name: str, slot: str, *args: object) -> str | None:
        """A tool's own ``render_call``/``render_result`` as text, or None for the built-in
        look (none given, it failed, or it returned a widget that only the TUI can show)."""
        session = self.session
        tool = next((t for t in getattr(session, "all_tools", None) or [] if t.name == tool_name), None)
        fn = getattr(tool, slot, None) if tool is not None else None
        if fn is None:
            return None
        try:
            return self.as_text(fn(*args))
        except Exception as exc:  # docs/extensions.md: a failing renderer falls back to the built-in one
            self.notice(f"{slot} of {tool_name} failed: {type(exc).__name__}: {exc}", "error")
            return None

    def as_text(self, value: object) -> str | None:
        """What an extension renderer returned, as lines for this terminal."""
        from .terminal import strip_ansi

        if value is None:
            return None
        if isinstance(value, list | tuple):
            value = "\n".join(str(v) if not hasattr(v, "__rich_console__") else self.terminal.rich(v) for v in value)
        if isinstance(value, str):
            return value if self.terminal.colour else strip_ansi(value)
        if hasattr(value, "__rich_console__") or hasattr(value, "__rich__"):
            return self.terminal.rich(value)
        widgets = sys.modules.get("textual.widget")  # loaded only if the extension made one
        if widgets is not None and isinstance(value, widgets.Widget):
            return None  # the full-screen app's only: the built-in look here
        return terminal_safe(str(value))  # a number, a dict: shown as the full-screen app shows it

    def _custom_message(self, message: CustomMessage) -> str | None:
        host = getattr(self.session, "services", None)
        registry = getattr(getattr(host, "extensions", None), "registry", None)
        renderer = registry.renderers.get(message.custom_type) if registry is not None else None
        if renderer is None:
            return None
        try:
            return self.as_text(renderer(message, {"expanded": False}, self.ui_theme))
        except Exception as exc:
            self.notice(f"renderer for {message.custom_type!r} failed: {type(exc).__name__}: {exc}", "error")
            return None

    def bash(self, message: BashExecutionMessage) -> None:
        """``!cmd``: the command, its output's last lines, its exit code."""
        header = self.fg("bashMode", "$ ") + terminal_safe(message.command)
        if message.exclude_from_context:
            header += self.fg("dim", "  (not sent to the model)")
        self.print_line(header, separate=True)
        details = {"exit_code": message.exit_code}
        body = tool_text.bash_body(message.output or "", details, bool(message.exit_code), False, self.spec, hint="")
        rendered = self.terminal.rich(body).rstrip("\n")
        if message.cancelled:
            rendered += "\n" + self.fg("warning", "(stopped)")
        if rendered.strip():
            self.print_line("\n".join("  " + line for line in rendered.strip("\n").split("\n")))
