"""Running one child: build its session, give it the task, watch it, make its tool result.

The child is a linked session: its file lives in ``subagents/`` beside the parent's, its
header names the parent (``parentSession`` and ``subagent``), and the parent's ``task``
result records the child's session id and file in its ``details``. While it runs, every
child event reaches the parent's front ends as a :class:`SubagentEvent`, and the ``task``
call gets a partial result at each step that matters (a tool starts or ends, an answer
ends), never per token. The tool result is the child's final answer plus the files it
changed; a child that fails makes the call fail with its error.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from ...agent.tool import OnUpdate, ToolResult
from ...ai.types import TextContent
from ...config.subagent_files import SubagentDefinition
from ..events import SessionEvent, SubagentEndEvent, SubagentEvent, SubagentStartEvent, SubagentStatus
from .child import ChildServices, ChildUI, SubagentHost, SubagentInfo, child_mode, may_ask, resolve_model
from .tool_selection import select_tools

if TYPE_CHECKING:
    from ...ai.abort import AbortSignal
    from ...session.manager import SessionManager
    from ..live.live_session import LiveSession

# Tools whose ``path`` argument names a file they change (the result lists them).
_WRITING_TOOLS = frozenset({"edit", "write"})
MAX_CHANGED_FILES = 50


class SubagentError(RuntimeError):
    """The child failed; ``details`` go to the ``task`` result like a successful run's."""

    def __init__(self, message: str, details: dict[str, Any]) -> None:
        super().__init__(message)
        self.details = details


@dataclass
class ChildProgress:
    """What a running child has done so far (partial results, the end event, details)."""

    info: SubagentInfo
    definition: SubagentDefinition
    session_file: str | None
    model: str | None
    started: float = field(default_factory=time.monotonic)
    current_tool: str | None = None
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    tool_calls: int = 0
    changed_files: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    _paths: dict[str, str] = field(default_factory=dict)

    def elapsed_ms(self) -> int:
        return int((time.monotonic() - self.started) * 1000)

    def observe(self, event: SessionEvent) -> bool:
        """Fold one child event in; True when it is worth a partial result."""
        if event.type == "tool_execution_start":
            self.current_tool = event.tool_name
            self.tool_calls += 1
            path = event.args.get("path") if isinstance(event.args, dict) else None
            if event.tool_name in _WRITING_TOOLS and isinstance(path, str):
                self._paths[event.tool_call_id] = path
            return True
        if event.type == "tool_execution_end":
            self.current_tool = None
            path = self._paths.pop(event.tool_call_id, None)
            if path is not None and not event.is_error and path not in self.changed_files:
                if len(self.changed_files) < MAX_CHANGED_FILES:
                    self.changed_files.append(path)
            return True
        if event.type == "message_end" and event.message.role == "assistant":
            usage = event.message.usage
            self.input_tokens += usage.input + usage.cache_read + usage.cache_write
            self.output_tokens += usage.output
            return True
        if event.type == "turn_end":
            self.turns += 1
        return False

    def details(self, status: str, **extra: object) -> dict[str, Any]:
        return {
            "subagent": self.info.name,
            "sessionId": self.info.id,
            "sessionFile": self.session_file,
            "description": self.info.description,
            "status": status,
            "model": self.model,
            "currentTool": self.current_tool,
            "turns": self.turns,
            "toolCalls": self.tool_calls,
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "durationMs": self.elapsed_ms(),
            "changedFiles": list(self.changed_files),
            **({"notes": list(self.notes)} if self.notes else {}),
            **extra,
        }

    def line(self) -> str:
        """One line for the partial result: the step the child is at."""
        doing = f"running {self.current_tool}" if self.current_tool else "thinking"
        return (f"{self.info.name}: {doing} · {self.tool_calls} tool calls · "
                f"{self.input_tokens + self.output_tokens} tokens · {self.elapsed_ms() / 1000:.1f}s")


async def run_child(
    host: SubagentHost,
    parent: LiveSession,
    definition: SubagentDefinition,
    *,
    prompt: str,
    description: str,
    tool_call_id: str,
    signal: AbortSignal | None,
    on_update: OnUpdate,
) -> ToolResult:
    """Run ``definition`` on ``prompt`` as a child of ``parent``; its answer as a tool result."""
    from ..live.live_session import LiveSession
    from ..live.options import SessionOptions

    model, model_note = resolve_model(definition.model, parent.model, host.model_registry)
    info_ref: list[SubagentInfo] = []
    services = ChildServices(host, ChildUI(host.ui, definition.name, may_ask(definition)), info_ref,
                             parent.checkpoints)
    manager = _child_manager(parent, definition, tool_call_id)
    manager.claim_writer()
    options = SessionOptions(
        cwd=parent.cwd, model=model, thinking_level=parent.thinking_level, active_tools=[],
        custom_system_prompt=definition.system_prompt or None,
        append_system_prompt=_preloaded_skills(host, parent.cwd, definition),
        permission_mode=child_mode(parent.permissions.mode, definition.permission_mode),
    )
    child = LiveSession(cast(Any, services), manager, options)
    info = SubagentInfo(child.session_id, definition.name, parent.session_id, tool_call_id, description)
    info_ref.append(info)
    selection = select_tools(definition, [t.name for t in child.all_tools])
    child.set_active_tools(selection.names)
    progress = ChildProgress(info, definition, child.session_file,
                             f"{model.provider}/{model.id}" if model is not None else None)
    if model_note:
        progress.notes.append(model_note)
    if selection.unknown:
        progress.notes.append(f"no such tools: {', '.join(selection.unknown)}")
    host.subagent_runs[info.id] = progress
    max_turns_hit = False

    def forward(event: SessionEvent) -> None:
        nonlocal max_turns_hit
        parent.publish(SubagentEvent(info.id, info.name, tool_call_id, event))
        if progress.observe(event):
            on_update(ToolResult(content=[TextContent(text=progress.line())], details=progress.details("running")))
        if (event.type == "turn_end" and definition.max_turns is not None and progress.turns >= definition.max_turns
                and event.message.stop_reason == "toolUse"):
            max_turns_hit = True
            child.abort()

    child.observe(forward)
    follow_mode = parent.observe(lambda event: _follow_mode(event, child, definition))
    await parent.emit(SubagentStartEvent(info.id, info.name, tool_call_id, description, prompt,
                                         child.session_file, progress.model))
    loop = asyncio.get_running_loop()
    stop = signal.add_listener(lambda: loop.call_soon_threadsafe(child.abort)) if signal is not None else None
    status: SubagentStatus = "error"
    text, error = "", None
    try:
        await child.start("new")
        if signal is None or not signal.aborted:
            await child.submit(prompt, source="extension")
        status, text, error = _outcome(child, signal, max_turns_hit, definition)
    except asyncio.CancelledError:
        status, error = "aborted", "the subagent was stopped"
        raise
    except Exception as exc:  # the child's own failure (no model, a closed session...)
        status, error = "error", str(exc) or type(exc).__name__
    finally:
        if stop is not None:
            stop()
        follow_mode()
        await _close(child)
        host.release_handle(child)
        host.subagent_runs.pop(info.id, None)
        await parent.emit(SubagentEndEvent(
            info.id, info.name, tool_call_id, status, text, error, progress.elapsed_ms(), progress.turns,
            progress.input_tokens, progress.output_tokens, list(progress.changed_files), child.session_file))
    details = progress.details(status)
    if status != "done":
        raise SubagentError(f"subagent {info.name} {'was aborted' if status == 'aborted' else 'failed'}: {error}",
                            details)
    return ToolResult(content=[TextContent(text=_result_text(text, progress))], details=details)


def _child_manager(parent: LiveSession, definition: SubagentDefinition, tool_call_id: str) -> SessionManager:
    from ...session.entries import SubagentOrigin
    from ...session.manager import SUBAGENT_FOLDER, SessionManager

    origin = SubagentOrigin(name=definition.name, parent_session_id=parent.session_id, tool_call_id=tool_call_id)
    parent_file = parent.session_file
    if parent_file is None or parent.session_manager.writing_stopped:
        manager = SessionManager.in_memory(parent.cwd)
        manager.get_header().subagent = origin
        return manager
    return SessionManager.create(parent.cwd, folder=Path(parent_file).parent / SUBAGENT_FOLDER,
                                 parent_session=parent_file, subagent=origin)


def _preloaded_skills(host: SubagentHost, cwd: str, definition: SubagentDefinition) -> str:
    """The full text of the skills the definition names (Claude Code preloads them)."""
    if not definition.skills:
        return ""
    from ..resources.loading import expand_skill

    skills = {s.name: s for s in host.resources(cwd).skills}
    parts = []
    for name in definition.skills:
        skill = skills.get(name)
        if skill is not None:
            parts.append(expand_skill(skill, ""))
    return "\n\n".join(parts)


def _outcome(child: LiveSession, signal: AbortSignal | None, max_turns_hit: bool,
             definition: SubagentDefinition) -> tuple[SubagentStatus, str, str | None]:
    answers = [m for m in child.messages if getattr(m, "role", None) == "assistant"]
    last = answers[-1] if answers else None
    if max_turns_hit:
        said = next((m.text() for m in reversed(answers) if m.stop_reason != "aborted" and m.text().strip()), "")
        return "done", f"{said}\n\n(stopped after {definition.max_turns} turns: the definition's maxTurns)".strip(), None
    if signal is not None and signal.aborted or (last is not None and last.stop_reason == "aborted"):
        return "aborted", "", "aborted by the user"
    if last is None:
        return "error", "", "the subagent gave no answer"
    if last.stop_reason == "error":
        return "error", "", last.error_message or "the model request failed"
    return "done", last.text(), None


def _result_text(answer: str, progress: ChildProgress) -> str:
    text = answer.strip() or "(the subagent finished without a final answer)"
    if progress.changed_files:
        text += "\n\nFiles changed: " + ", ".join(progress.changed_files)
    return text


def _follow_mode(event: SessionEvent, child: LiveSession, definition: SubagentDefinition) -> None:
    """The parent's mode changed while the child runs: the child follows when that is
    stricter (plan mode entered mid-run binds running children at once)."""
    if event.type != "permission_mode_change" or child.closed:
        return
    wanted = child_mode(event.mode, definition.permission_mode)
    if wanted != child.permissions.mode:
        asyncio.ensure_future(child.permissions.set_mode(wanted, "extension"))


async def _close(child: LiveSession) -> None:
    try:
        await child.close("quit")
    except Exception:  # a handler's failure on shutdown must not hide the child's result
        child.session_manager.release_writer()
