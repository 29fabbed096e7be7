"""Running Claude Code command hooks on Wolli's events, with Claude Code's contract.

Each hook is a shell command. It gets one JSON object on stdin (``session_id``,
``transcript_path``, ``cwd``, ``permission_mode``, ``hook_event_name`` and the event's own
fields), runs in the session's working directory with ``CLAUDE_PROJECT_DIR`` (and, for a
plugin, ``CLAUDE_PLUGIN_ROOT``) set, and answers by exit code and stdout:

- exit 0: stdout may be a JSON object (``continue``, ``stopReason``, ``systemMessage``,
  ``decision``/``reason``, ``hookSpecificOutput``); for ``UserPromptSubmit`` and
  ``SessionStart`` plain stdout is context for the model;
- exit 2: a blocking error: stderr goes to the model (PreToolUse blocks the call,
  PostToolUse adds it to the result, Stop makes the agent go on) or to the user
  (UserPromptSubmit drops the prompt, PreCompact cancels the compaction);
- any other exit, a timeout, or JSON that does not parse: a non-blocking error, shown as a
  notice; the run goes on.

The mapping of each Claude Code event onto a Wolli handler event is in docs/packages.md
("Claude Code hooks"). Tool names are shown to hooks as Claude Code spells them (``Bash``,
``Read``, ``Write``, ``Edit``, ``Grep``, ``Glob``, ``LS``) and matchers see both spellings;
``path`` arguments appear as ``file_path``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

from ..base.json_input import parse_json
from ..packages.claude_hooks import CommandHook

if TYPE_CHECKING:
    from .host import ContextView

# Wolli's tool names as Claude Code spells its own.
CLAUDE_TOOL_NAMES = {"bash": "Bash", "read": "Read", "write": "Write", "edit": "Edit", "grep": "Grep",
                     "find": "Glob", "ls": "LS"}
_PATH_TOOLS = ("read", "write", "edit")
PERMISSION_MODES = {"default": "default", "accept-edits": "acceptEdits", "plan": "plan", "yolo": "bypassPermissions"}
START_SOURCES = {"startup": "startup", "resume": "resume", "new": "clear", "fork": "resume"}
END_REASONS = {"quit": "prompt_input_exit", "new": "clear", "resume": "other", "fork": "other"}
OUTPUT_LIMIT = 1024 * 1024
# A Stop hook that keeps the agent going is stopped after this many rounds in a row.
MAX_STOP_CONTINUATIONS = 8
# Wolli's handler event for each Claude Code event (SessionStart also after a compaction).
EVENT_MAP = {
    "PreToolUse": ("tool_call",),
    "PostToolUse": ("tool_result",),
    "UserPromptSubmit": ("input",),
    "Stop": ("agent_end",),
    "SessionStart": ("session_start", "compaction_end"),
    "SessionEnd": ("session_shutdown",),
    "PreCompact": ("compaction_start", "session_before_compact"),
    "Notification": ("notice",),
}


class _ToolCallView(Protocol):
    """What a ``tool_call`` event offers these hooks (``input`` is patched in place)."""

    @property
    def tool_name(self) -> str: ...

    @property
    def tool_call_id(self) -> str: ...

    @property
    def input(self) -> dict[str, Any]: ...


class _ToolResultView(_ToolCallView, Protocol):
    @property
    def content(self) -> list[Any]: ...

    @property
    def is_error(self) -> bool: ...


class _InputView(Protocol):
    @property
    def text(self) -> str: ...


@dataclass
class HookRun:
    hook: CommandHook
    code: int | None  # None: it did not finish (timeout) or could not start
    stdout: str
    stderr: str
    error: str | None = None

    @property
    def data(self) -> dict[str, Any] | None:
        text = self.stdout.strip()
        if self.code != 0 or not text.startswith("{"):
            return None
        try:
            found = parse_json(text)
        except ValueError:
            return None
        return found if isinstance(found, dict) else None

    @property
    def plain_text(self) -> str:
        return "" if self.stdout.strip().startswith("{") else self.stdout.strip()


Report = Callable[[str], None]


class ClaudeHookRunner:
    """The command hooks of one source (a plugin, a settings file), as Wolli handlers."""

    def __init__(self, hooks: list[CommandHook], report: Report) -> None:
        self.hooks = hooks
        self.report = report
        self._compaction_trigger: dict[int, str] = {}
        self._stop_rounds: dict[int, int] = {}

    def events(self) -> list[str]:
        return sorted({e for h in self.hooks for e in EVENT_MAP.get(h.event, ())})

    def handlers(self) -> dict[str, Callable[..., Any]]:
        wanted = {h.event for h in self.hooks}
        table: dict[str, Callable[..., Any]] = {}
        if "PreToolUse" in wanted:
            table["tool_call"] = self.pre_tool_use
        if "PostToolUse" in wanted:
            table["tool_result"] = self.post_tool_use
        if "UserPromptSubmit" in wanted or "Stop" in wanted:
            table["input"] = self.user_prompt_submit
        if "Stop" in wanted:
            table["agent_end"] = self.stop
        if "SessionStart" in wanted:
            table["session_start"] = self.session_start
            table["compaction_end"] = self.after_compaction
        if "SessionEnd" in wanted:
            table["session_shutdown"] = self.session_end
        if "PreCompact" in wanted:
            table["compaction_start"] = self.note_compaction
            table["session_before_compact"] = self.pre_compact
        if "Notification" in wanted:
            table["notice"] = self.notification
        return table

    # ------------------------------------------------------------------ running one hook

    def _matching(self, event: str, *names: str | None) -> list[CommandHook]:
        return [h for h in self.hooks if h.event == event and h.matches(*names)]

    async def _run_all(self, event: str, names: tuple[str | None, ...], fields: dict[str, Any], ctx: ContextView) -> list[HookRun]:
        runs = []
        for hook in self._matching(event, *names):
            run = await self.run(hook, {**_common(ctx, event), **fields}, _cwd(ctx))
            runs.append(run)
            if run.error is not None:
                self.report(f"{hook.event} hook `{hook.command}` ({hook.source}): {run.error}")
            data = run.data
            if data and isinstance(data.get("systemMessage"), str):
                _notify(ctx, data["systemMessage"], "warning")
        return runs

    async def run(self, hook: CommandHook, payload: dict[str, Any], cwd: str) -> HookRun:
        from ..tools.proctree import live_tree, signal_tree
        from ..tools.supervisor import supervise

        command = hook.command
        env = dict(os.environ)
        env["CLAUDE_PROJECT_DIR"] = cwd
        if hook.plugin_root:
            env["CLAUDE_PLUGIN_ROOT"] = hook.plugin_root
            command = command.replace("${CLAUDE_PLUGIN_ROOT}", hook.plugin_root)
        shell = shutil.which("bash") or "/bin/sh"
        unit = supervise()
        try:
            process = await asyncio.create_subprocess_exec(
                shell, "-c", command, cwd=cwd if os.path.isdir(cwd) else None, env=unit.env(env),
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
                start_new_session=True)
        except OSError as exc:
            unit.release()
            return HookRun(hook, None, "", "", f"could not start: {exc.strerror or exc}")
        unit.add(process.pid)
        assert process.stdin is not None and process.stdout is not None and process.stderr is not None

        async def feed() -> None:
            try:
                process.stdin.write(json.dumps(payload).encode())  # type: ignore[union-attr]
                await process.stdin.drain()  # type: ignore[union-attr]
            except (BrokenPipeError, ConnectionResetError):
                pass  # a hook that does not read stdin
            finally:
                process.stdin.close()  # type: ignore[union-attr]

        reads = asyncio.gather(feed(), _bounded(process.stdout), _bounded(process.stderr), process.wait())
        try:
            _, out, err, code = await asyncio.wait_for(reads, hook.timeout_s)
        except TimeoutError:
            signal_tree(process.pid, live_tree(process.pid, set()), signal.SIGKILL)
            await process.wait()
            return HookRun(hook, None, "", "", f"timed out after {hook.timeout_s:g} s and was stopped")
        except BaseException:
            signal_tree(process.pid, live_tree(process.pid, set()), signal.SIGKILL)
            raise
        finally:
            unit.release()
        run = HookRun(hook, code, out, err)
        if code not in (0, 2):
            run.error = f"exited with {code}" + (f": {err.strip()[:500]}" if err.strip() else "")
        elif code == 0 and out.strip().startswith("{") and run.data is None:
            run.error = "printed output that is not a JSON object; ignored"
        return run

    # ------------------------------------------------------------------ events

    async def pre_tool_use(self, event: _ToolCallView, ctx: ContextView) -> dict[str, Any] | None:
        name = event.tool_name
        claude_name = CLAUDE_TOOL_NAMES.get(name, name)
        allowed = False
        for hook in self._matching("PreToolUse", claude_name, name):
            fields = {"tool_name": claude_name, "tool_input": to_claude_input(name, event.input),
                      "tool_use_id": event.tool_call_id}
            run = await self.run(hook, {**_common(ctx, "PreToolUse"), **fields}, _cwd(ctx))
            if run.error is not None:
                self.report(f"PreToolUse hook `{hook.command}` ({hook.source}): {run.error}")
            if run.code == 2:
                return {"block": True, "reason": run.stderr.strip() or f"blocked by the PreToolUse hook `{hook.command}`"}
            data = run.data or {}
            if isinstance(data.get("systemMessage"), str):
                _notify(ctx, data["systemMessage"], "warning")
            specific = _specific(data)
            decision = specific.get("permissionDecision") or {"approve": "allow", "block": "deny"}.get(
                str(data.get("decision")))
            reason = specific.get("permissionDecisionReason") or data.get("reason")
            updated = specific.get("updatedInput")
            if isinstance(updated, dict):
                apply_updated_input(name, event.input, updated)
            if data.get("continue") is False:
                return {"abort": True, "reason": str(data.get("stopReason") or reason or "stopped by a PreToolUse hook")}
            if decision == "deny":
                return {"block": True, "reason": str(reason or f"denied by the PreToolUse hook `{hook.command}`")}
            if decision == "ask":
                if not await _ask(ctx, claude_name, reason):
                    return {"block": True, "reason": str(reason or "the user did not approve this call")}
                allowed = True
            elif decision == "allow":
                allowed = True
        return {"allow": True} if allowed else None

    async def post_tool_use(self, event: _ToolResultView, ctx: ContextView) -> dict[str, Any] | None:
        name = event.tool_name
        claude_name = CLAUDE_TOOL_NAMES.get(name, name)
        text = "\n".join(getattr(b, "text", None) or (b.get("text", "") if isinstance(b, dict) else "")
                         for b in event.content)
        fields = {"tool_name": claude_name, "tool_input": to_claude_input(name, event.input),
                  "tool_response": {"content": text, "is_error": bool(event.is_error)},
                  "tool_use_id": event.tool_call_id}
        notes = []
        for run in await self._run_all("PostToolUse", (claude_name, name), fields, ctx):
            data = run.data or {}
            specific = _specific(data)
            if run.code == 2 and run.stderr.strip():
                notes.append(run.stderr.strip())
            if data.get("decision") == "block" and data.get("reason"):
                notes.append(str(data["reason"]))
            if isinstance(specific.get("additionalContext"), str):
                notes.append(specific["additionalContext"])
        if not notes:
            return None
        from ..ai.types import TextContent

        extra = [TextContent(text=f"PostToolUse hook feedback:\n{n}") for n in notes]
        return {"content": [*event.content, *extra]}

    async def user_prompt_submit(self, event: _InputView, ctx: ContextView) -> dict[str, Any] | None:
        self._stop_rounds.pop(_key(ctx), None)  # a new prompt: Stop hooks start over
        if not any(h.event == "UserPromptSubmit" for h in self.hooks):
            return None
        context = []
        for run in await self._run_all("UserPromptSubmit", (), {"prompt": event.text}, ctx):
            data = run.data or {}
            if run.code == 2 or data.get("decision") == "block" or data.get("continue") is False:
                why = run.stderr.strip() if run.code == 2 else str(data.get("reason") or data.get("stopReason") or "")
                _notify(ctx, f"The prompt was blocked by a UserPromptSubmit hook{': ' + why if why else ''}", "warning")
                return {"action": "handled"}
            specific = _specific(data)
            extra = specific.get("additionalContext") if isinstance(specific.get("additionalContext"), str) else run.plain_text
            if run.code == 0 and extra:
                context.append(extra)
        if not context:
            return None
        return {"action": "transform", "text": event.text + "\n\n" + "\n\n".join(context)}

    async def stop(self, event: object, ctx: ContextView) -> dict[str, Any] | None:
        key = _key(ctx)
        rounds = self._stop_rounds.get(key, 0)
        reasons: list[str] = []
        for run in await self._run_all("Stop", (), {"stop_hook_active": rounds > 0}, ctx):
            data = run.data or {}
            if data.get("continue") is False:
                reasons = []
                break
            if run.code == 2 and run.stderr.strip():
                reasons.append(run.stderr.strip())
            elif data.get("decision") == "block":
                reasons.append(str(data.get("reason") or "A Stop hook asked to continue."))
        if not reasons:
            self._stop_rounds.pop(key, None)
            return None
        if rounds >= MAX_STOP_CONTINUATIONS:
            self.report(f"Stop hooks kept the agent going {rounds} times in a row; stopping here")
            self._stop_rounds.pop(key, None)
            return None
        self._stop_rounds[key] = rounds + 1
        return {"follow_up": "\n\n".join(reasons)}

    async def session_start(self, event: object, ctx: ContextView) -> None:
        source = START_SOURCES.get(getattr(event, "reason", ""), None)
        if source is not None:
            await self._start(source, ctx)

    async def after_compaction(self, event: object, ctx: ContextView) -> None:
        if getattr(event, "result", None) is not None:
            await self._start("compact", ctx)

    async def _start(self, source: str, ctx: ContextView) -> None:
        context = []
        for run in await self._run_all("SessionStart", (source,), {"source": source}, ctx):
            data = run.data or {}
            specific = _specific(data)
            extra = specific.get("additionalContext") if isinstance(specific.get("additionalContext"), str) else run.plain_text
            if run.code == 0 and extra:
                context.append(extra)
        if context:
            await ctx.session.send_message({"custom_type": "claude-hook-context", "content": "\n\n".join(context),
                                            "display": False}, deliver_as="next_turn")

    async def session_end(self, event: object, ctx: ContextView) -> None:
        reason = END_REASONS.get(getattr(event, "reason", ""))
        if reason is not None:
            await self._run_all("SessionEnd", (reason,), {"reason": reason}, ctx)

    async def note_compaction(self, event: object, ctx: ContextView) -> None:
        self._compaction_trigger[_key(ctx)] = "manual" if getattr(event, "reason", "") == "manual" else "auto"

    async def pre_compact(self, event: object, ctx: ContextView) -> dict[str, Any] | None:
        trigger = self._compaction_trigger.pop(_key(ctx), "auto")
        fields = {"trigger": trigger, "custom_instructions": getattr(event, "custom_instructions", None) or ""}
        for run in await self._run_all("PreCompact", (trigger,), fields, ctx):
            data = run.data or {}
            if run.code == 2 or data.get("decision") == "block" or data.get("continue") is False:
                why = run.stderr.strip() if run.code == 2 else str(data.get("reason") or data.get("stopReason") or "")
                _notify(ctx, f"Compaction was cancelled by a PreCompact hook{': ' + why if why else ''}", "warning")
                return {"cancel": True}
        return None

    async def notification(self, event: object, ctx: ContextView) -> None:
        kind = f"wolli_{getattr(event, 'level', 'info')}"
        await self._run_all("Notification", (kind,), {"message": getattr(event, "message", ""),
                                                       "notification_type": kind}, ctx)


# ---------------------------------------------------------------------------- helpers


def _specific(data: dict[str, Any]) -> dict[str, Any]:
    found = data.get("hookSpecificOutput")
    return found if isinstance(found, dict) else {}


def to_claude_input(tool: str, arguments: object) -> dict[str, Any]:
    data = dict(arguments) if isinstance(arguments, dict) else dict(getattr(arguments, "__dict__", {}) or {})
    if tool in _PATH_TOOLS and "path" in data:
        data["file_path"] = data.pop("path")
    return data


def apply_updated_input(tool: str, arguments: dict[str, Any], updated: dict[str, Any]) -> None:
    """``updatedInput`` replaces the arguments (Claude Code's spelling taken back)."""
    new = dict(updated)
    if tool in _PATH_TOOLS and "file_path" in new:
        new["path"] = new.pop("file_path")
    arguments.clear()
    arguments.update(new)


def _key(ctx: ContextView) -> int:
    session = getattr(ctx, "session", None)
    return id(getattr(session, "_session", session))


def _cwd(ctx: ContextView) -> str:
    try:
        return str(ctx.session.session_manager.get_cwd())
    except Exception:
        return os.getcwd()


def _common(ctx: ContextView, event: str) -> dict[str, Any]:
    view = getattr(getattr(ctx, "session", None), "session_manager", None)

    def read(name: str) -> object:
        try:
            value = getattr(view, name)
            return value() if callable(value) else value
        except Exception:
            return None

    mode = getattr(ctx, "permission_mode", "default")
    return {"session_id": read("get_session_id") or "", "transcript_path": read("get_session_file") or "",
            "cwd": _cwd(ctx), "permission_mode": PERMISSION_MODES.get(str(mode), str(mode)),
            "hook_event_name": event}


def _notify(ctx: ContextView, text: str, level: str) -> None:
    ui = getattr(ctx, "ui", None)
    if ui is not None:
        try:
            ui.notify(text, level)
        except Exception:
            pass


async def _ask(ctx: ContextView, tool: str, reason: object) -> bool:
    """A hook said ``ask``: the person decides; where nobody can answer, the call is refused."""
    if getattr(ctx, "mode", None) not in ("tui", "plain", "acp"):
        return False
    message = f"A hook asks before this {tool} call runs" + (f": {reason}" if reason else ".")
    try:
        return bool(await ctx.ui.confirm("Allow this tool call?", message))
    except Exception:
        return False


async def _bounded(stream: asyncio.StreamReader) -> str:
    """Everything the stream says, keeping the first ``OUTPUT_LIMIT`` bytes."""
    kept = bytearray()
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            break
        if len(kept) < OUTPUT_LIMIT:
            kept += chunk[: OUTPUT_LIMIT - len(kept)]
    return kept.decode("utf-8", "replace")
