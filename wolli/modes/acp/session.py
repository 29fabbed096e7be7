"""One ACP session: a live session of the host, its updates, modes and prompt turns."""

from __future__ import annotations

import asyncio
import logging
import os
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

from ...ai.types import THINKING_LEVELS
from ...permissions.modes import MODES as PERMISSION_MODES
from ..interactive.commands.definition import CommandContext
from ..interactive.commands.registry import builtin_commands, command_entries, find_builtin, run_builtin
from . import updates
from .environment import FileLog
from .sdk import Client, ConfigOption, RequestError, schema
from .ui import CURRENT, AcpFront, AcpUI

if TYPE_CHECKING:
    from ...agent.events import ToolExecutionEndEvent
    from ...ai.types import AssistantMessage
    from ...runtime.events import SessionEvent
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession

log = logging.getLogger("wolli.acp")

# Built-in commands that make sense inside an editor's thread. Left out: those that replace
# the session the editor shows (new, resume, fork, tree, rewind: the editor owns its threads),
# need a clipboard, a secret input or a form (copy, login, logout, settings), or a keyboard
# (hotkeys), and quit (the editor ends the agent).
ACP_BUILTINS = ("name", "session", "export", "compact", "model", "permissions", "plan", "extensions",
                "reload", "mcp")
MODE_NAMES = {
    "default": ("Ask", "Ask before edits, writes and shell commands"),
    "accept-edits": ("Accept edits", "Edits and writes run; shell commands still ask"),
    "plan": ("Plan", "Read and plan only: nothing is changed"),
    "yolo": ("Yolo", "Everything runs without asking"),
}
EDIT_TOOLS = ("edit", "write")
StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]


class AcpSession:
    def __init__(self, host: AgentHost, live: LiveSession, client: Client, ui: AcpUI, files: FileLog) -> None:
        self.host = host
        self.live = live
        self.client = client
        self.ui = ui
        self.files = files
        self.id = live.session_id
        self.stream = updates.UpdateStream(lambda update: client.session_update(session_id=self.id, update=update))
        self._cancels = 0  # session/cancel calls so far: a turn is cancelled if this moved during it
        self._turns = asyncio.Lock()  # one turn at a time; a prompt sent during a turn waits its end
        self._running: dict[str, tuple[str, Any]] = {}  # tool call id -> (name, args)
        self._in_terminal: set[str] = set()
        self._stop_observing = live.observe(self._on_event)
        self._title = self.title()  # what the client was last told (session/list says it for saved ones)

    # ------------------------------------------------------------------ out

    def say(self, text: str) -> None:
        """Text of the agent's message (a notice, a command's output)."""
        self.stream.text("agent_message_chunk", text if text.endswith("\n") else text + "\n")

    async def flush(self) -> None:
        await self.stream.drained()

    def _on_event(self, event: SessionEvent) -> None:
        if event.type == "message_update":
            delta = event.assistant_message_event
            if delta.type == "text_delta":
                self.stream.text("agent_message_chunk", delta.delta)
            elif delta.type == "thinking_delta":
                self.stream.text("agent_thought_chunk", delta.delta)
        elif event.type == "tool_execution_start":
            self._running[event.tool_call_id] = (event.tool_name, event.args)
            self.stream.update(updates.tool_start(event.tool_call_id, event.tool_name, event.args, self.live.cwd))
        elif event.type == "tool_execution_update":
            if event.tool_call_id not in self._in_terminal:
                text = updates.result_text(event.partial_result)
                self.stream.update(updates.tool_progress(event.tool_call_id, text))
        elif event.type == "tool_execution_end":
            self._tool_end(event)
        elif event.type == "permission_mode_change":
            self.stream.update(schema.CurrentModeUpdate(session_update="current_mode_update",
                                                        current_mode_id=event.mode))
            self.stream.update(self.config_update())
        elif event.type == "model_select" or event.type == "thinking_level_select":
            self.stream.update(self.config_update())
        elif event.type == "session_start" and event.reason == "reload":  # /reload: commands may have changed
            self.stream.update(self.commands_update())
        elif event.type == "notice":
            self.say(event.message if event.level == "info" else f"{event.level.capitalize()}: {event.message}")
        elif event.type == "extension_error":
            log.warning("extension %s failed in %s: %s", event.extension_path, event.event, event.error)

    def _tool_end(self, event: ToolExecutionEndEvent) -> None:
        name, args = self._running.pop(event.tool_call_id, (event.tool_name, {}))
        self._in_terminal.discard(event.tool_call_id)
        details = getattr(event.result, "details", None)
        diff = line = path = None
        if name in EDIT_TOOLS and isinstance(args, dict):
            path = details.get("path") if isinstance(details, dict) else None
            path = path or os.path.normpath(os.path.join(self.live.cwd, str(args.get("path", ""))))
            written = self.files.take(path)
            if written is not None:
                diff = updates.diff_content(path, written[0], written[1])
            if isinstance(details, dict) and isinstance(details.get("first_changed_line"), int):
                line = details["first_changed_line"]
        self.stream.update(updates.tool_end(event.tool_call_id, event.result, event.is_error, diff, line, path))
        plan = updates.plan_from_tool(name, args, event.result)
        if plan is not None:
            self.stream.update(plan)

    def on_terminal(self, command: str, terminal_id: str) -> None:
        """bash started a client terminal: embed it in the tool call that runs ``command``."""
        bash = [i for i, (name, args) in self._running.items() if name == "bash" and i not in self._in_terminal]
        exact = [i for i in bash if isinstance(self._running[i][1], dict) and self._running[i][1].get("command") == command]
        chosen = (exact or bash)[-1:] if (exact or bash) else []
        for tool_call_id in chosen:
            self._in_terminal.add(tool_call_id)
            self.stream.update(schema.ToolCallProgress(
                session_update="tool_call_update", tool_call_id=tool_call_id,
                content=[schema.TerminalToolCallContent(type="terminal", terminal_id=terminal_id)]))

    def proposed_diff(self, tool_name: str, args: dict[str, Any]) -> schema.FileEditToolCallContent | None:
        """The diff a write would make, shown in its permission question."""
        if tool_name != "write" or not isinstance(args.get("content"), str):
            return None
        path = os.path.normpath(os.path.join(self.live.cwd, str(args.get("path", ""))))
        old = self.files.seen.get(path)
        if old is None and os.path.isfile(path):
            try:
                with open(path, encoding="utf-8") as handle:
                    old = handle.read(4 * 1024 * 1024)
            except (OSError, UnicodeDecodeError):
                return None
        return updates.diff_content(path, old, args["content"])

    # ------------------------------------------------------------------ modes and options

    def modes(self) -> schema.SessionModeState:
        return schema.SessionModeState(
            current_mode_id=str(self.live.permissions.mode),
            available_modes=[schema.SessionMode(id=m, name=MODE_NAMES[m][0], description=MODE_NAMES[m][1])
                             for m in PERMISSION_MODES])

    def config_options(self) -> list[ConfigOption]:
        options: list[ConfigOption] = [schema.SessionConfigOptionSelect(
            type="select", id="mode", name="Mode", category="mode", current_value=str(self.live.permissions.mode),
            options=[schema.SessionConfigSelectOption(value=m, name=MODE_NAMES[m][0], description=MODE_NAMES[m][1])
                     for m in PERMISSION_MODES])]
        model = self.live.model
        models = self.host.model_registry.available()
        if model is not None or models:
            current = f"{model.provider}/{model.id}" if model is not None else f"{models[0].provider}/{models[0].id}"
            choices = [schema.SessionConfigSelectOption(value=f"{m.provider}/{m.id}", name=m.name or m.id,
                                                        description=m.provider) for m in models]
            if current not in {c.value for c in choices}:
                choices.insert(0, schema.SessionConfigSelectOption(value=current, name=current))
            options.append(schema.SessionConfigOptionSelect(
                type="select", id="model", name="Model", category="model", current_value=current, options=choices))
        if model is None or getattr(model, "reasoning", False):
            options.append(schema.SessionConfigOptionSelect(
                type="select", id="thought_level", name="Thinking", category="thought_level",
                current_value=str(self.live.thinking_level),
                options=[schema.SessionConfigSelectOption(value=level, name=level) for level in THINKING_LEVELS]))
        return options

    def config_update(self) -> schema.ConfigOptionUpdate:
        return schema.ConfigOptionUpdate(session_update="config_option_update", config_options=self.config_options())

    async def set_mode(self, mode_id: str) -> None:
        if mode_id not in PERMISSION_MODES:
            raise RequestError.invalid_params({"message": f"unknown mode {mode_id!r}; one of {', '.join(PERMISSION_MODES)}"})
        await self.live.permissions.set_mode(mode_id, source="user")

    async def set_option(self, option_id: str, value: str | bool) -> None:
        if option_id == "mode":
            await self.set_mode(str(value))
        elif option_id == "model":
            try:
                model = self.host.model_registry.resolve(str(value))[0]
            except ValueError as exc:
                raise RequestError.invalid_params({"message": str(exc)}) from None
            if model is None or not await self.live.set_model(model):
                raise RequestError.invalid_params({"message": f"model {value!r} is not available (no API key?)"})
        elif option_id == "thought_level":
            if value not in THINKING_LEVELS:
                raise RequestError.invalid_params({"message": f"unknown thinking level {value!r}"})
            await self.live.set_thinking_level(str(value))
        else:
            raise RequestError.invalid_params({"message": f"unknown config option {option_id!r}"})

    # ------------------------------------------------------------------ commands

    def commands_update(self) -> schema.AvailableCommandsUpdate:
        allowed = {name for name in ACP_BUILTINS if name in builtin_commands()}
        entries = [e for e in command_entries(self.host, self.live)
                   if (e.source != "builtin" or e.name in allowed) and e.availability == "enabled"]
        commands = [schema.AvailableCommand(
            name=e.name, description=e.description or e.name,
            input=schema.AvailableCommandInput(root=schema.UnstructuredCommandInput(hint=e.usage)) if e.usage else None)
            for e in entries]
        return schema.AvailableCommandsUpdate(session_update="available_commands_update", available_commands=commands)

    # ------------------------------------------------------------------ turns

    async def prompt(self, text: str, images: list[Any]) -> StopReason:
        cancels = self._cancels
        async with self._turns:
            if self._cancels != cancels:  # cancelled while it waited for the turn before it
                return "cancelled"
            return await self._turn(text, images, cancels)

    async def _turn(self, text: str, images: list[Any], cancels: int) -> StopReason:
        from ...extensions.errors import CommandUnavailable, ExtensionCommandError
        from ...runtime.live.live_session import NoModelError

        token = CURRENT.set(self)
        try:
            await self.live.wait_for_idle()  # a run an extension started
            found = find_builtin(text)
            if found is not None and found[0].name in ACP_BUILTINS:
                await run_builtin(CommandContext(AcpFront(self, self.ui), self.host, self.live), text)
                self._report_title()  # /name
                await self.stream.drained()
                return "cancelled" if self._cancels != cancels else "end_turn"
            before = len(self.live.messages)
            try:
                await self.live.prompt(text, images)
            except (ExtensionCommandError, CommandUnavailable) as exc:
                self.say(str(exc))
            except NoModelError as exc:
                raise RequestError.internal_error({"message": str(exc)}) from None
            self._report_usage()
            self._report_title()
            try:
                return self._stop_reason(before, cancelled=self._cancels != cancels)
            finally:  # what the turn said reaches the editor before its answer
                await self.stream.drained()
        finally:
            CURRENT.reset(token)

    def _stop_reason(self, before: int, *, cancelled: bool) -> StopReason:
        if cancelled:
            return "cancelled"
        answers = [m for m in self.live.messages[before:] if getattr(m, "role", None) == "assistant"]
        if not answers:
            return "end_turn"
        last = answers[-1]
        if last.stop_reason == "length":
            return "max_tokens"
        if last.stop_reason == "aborted":
            return "cancelled"
        if last.stop_reason == "error" and _refused(last):
            self.say("\n\n" + (last.error_message or "The model refused to answer."))
            return "refusal"
        if last.stop_reason == "error":
            raise RequestError.internal_error({"message": last.error_message or "the model's answer failed"})
        return "end_turn"

    def title(self) -> str | None:
        """The session's name, or the first line of its first prompt (as ``session/list``)."""
        name = self.live.session_manager.get_session_name()
        if name:
            return first_line(name)
        first = next((m for m in self.live.messages if getattr(m, "role", None) == "user"), None)
        return first_line(_user_text(first.content)) if first is not None else None

    def _report_title(self) -> None:
        """A new or renamed session's title (``session_info_update``), once it changed."""
        title = self.title()
        if title is not None and title != self._title:
            self._title = title
            now = datetime.now(UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")
            self.stream.update(schema.SessionInfoUpdate(session_update="session_info_update", title=title,
                                                        updated_at=now))

    def _report_usage(self) -> None:
        """How full the context window is, once per turn (``usage_update``)."""
        usage = self.live.context_usage()
        if usage["context_window"]:
            self.stream.update(schema.UsageUpdate(session_update="usage_update", used=max(0, int(usage["tokens"])),
                                                  size=int(usage["context_window"])))

    def cancel(self) -> None:
        """Abort the running turn; prompts waiting for it answer ``cancelled`` unrun."""
        self._cancels += 1
        self.live.abort()

    # ------------------------------------------------------------------ history

    async def replay(self) -> None:
        """The session's conversation as updates (``session/load``), sent before the answer.
        Its calls are kept apart from the running ones: a turn may be going on (the editor
        opened the thread again), and its calls in progress must stay known."""
        calls: dict[str, tuple[str, Any]] = {}
        for message in self.live.messages:
            role = getattr(message, "role", None)
            if role == "user":
                content = message.content
                if isinstance(content, str):
                    self.stream.text("user_message_chunk", content)
                else:
                    for block in content:
                        if getattr(block, "type", None) == "text":
                            self.stream.text("user_message_chunk", block.text)
            elif role == "assistant":
                for block in message.content:
                    if block.type == "text":
                        self.stream.text("agent_message_chunk", block.text)
                    elif block.type == "thinking" and not getattr(block, "redacted", False):
                        self.stream.text("agent_thought_chunk", block.thinking)
                    elif block.type == "toolCall":
                        calls[block.id] = (block.name, block.arguments)
                        start = updates.tool_start(block.id, block.name, block.arguments, self.live.cwd)
                        self.stream.update(start)
            elif role == "toolResult":
                name, args = calls.pop(message.tool_call_id, (message.tool_name, {}))
                self.stream.update(updates.tool_end(message.tool_call_id, message, message.is_error))
                plan = updates.plan_from_tool(name, args, message)
                if plan is not None:
                    self.stream.update(plan)
        await self.stream.drained()

    async def close(self) -> None:
        self._stop_observing()
        try:
            await asyncio.wait_for(self.stream.drained(), 2)
        except TimeoutError:
            pass
        self.stream.close()


def first_line(text: str | None) -> str | None:
    """A title from free text: its first non-blank line, at most 80 characters."""
    if not text or not text.strip():
        return None
    return text.strip().splitlines()[0][:80] or None


def _user_text(content: object) -> str:
    if isinstance(content, str):
        return content
    return " ".join(getattr(block, "text", "") for block in content if getattr(block, "type", None) == "text") \
        if isinstance(content, list) else ""


def _refused(message: AssistantMessage) -> bool:
    """The provider declined to answer (Anthropic's ``refusal``, a content filter)."""
    return getattr(message, "error_kind", None) == "content_filter" or "(stop reason refusal)" in str(
        message.error_message or "")
