"""Every RPC command: its fields (checked, with errors that name the field) and what it does.

A handler gets the server and the command object. Queries are plain functions answered at
once; the others are coroutines. A coroutine returns the response's ``data`` (``NoData`` for
none), or :class:`Later` when the command was accepted and its answer comes when the
background work ends (``bash``, ``compact``). A :class:`CommandError` becomes an error
response with its message.

Busy rules (pi's): ``prompt`` while the agent works needs ``streamingBehavior`` (``steer``
or ``followUp``) and is refused without it; an extension command (``/name``) runs at once,
even mid-run. ``compact`` and the session-replacing commands (``new_session``,
``switch_session``, ``fork``, ``clone``) abort the run first. A prompt sent while a manual
compaction runs waits for it. Nothing runs over a turn in flight.
"""

from __future__ import annotations

import asyncio
import codecs
from collections.abc import Callable, Coroutine
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final, Literal, Protocol, TypeVar, overload

from ...ai.types import THINKING_LEVELS, ImageContent
from ...runtime.handlers.hook_events import StreamingBehavior, streaming_behavior
from ...runtime.live.prompting import split_command
from . import queries

if TYPE_CHECKING:
    from ...agent.agent import QueueMode
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession
    from ...runtime.live.options import SessionOptions
    from ...runtime.startup.request import StartupRequest
    from ..common.protocol_output import RecordSink
    from .ui import RpcUI



class RpcServer(Protocol):
    """What commands use of the client's core (``core.RpcCore``, which imports this module)."""

    request: StartupRequest
    output: RecordSink
    ui: RpcUI
    manual_compaction: bool
    last_compaction_error: str | None

    @property
    def host(self) -> AgentHost: ...

    @property
    def session(self) -> LiveSession: ...

    def background(self, coroutine: Coroutine[Any, Any, Any]) -> asyncio.Task[Any]: ...

    def check_shutdown(self) -> None: ...

    def emit_notice(self, level: str, message: str) -> None: ...

    def wait_for_run_start(self) -> asyncio.Event: ...

Choice = TypeVar("Choice", bound=str)
QUEUE_MODES: tuple[QueueMode, ...] = ("all", "one-at-a-time")


class CommandError(Exception):
    """The command cannot be done; the message says why (and what to send instead)."""


class _NoData:
    def __repr__(self) -> str:
        return "NoData"


NoData: Final = _NoData()


@dataclass
class Later:
    """Accepted; the response follows when ``task`` ends (its result is the ``data``)."""

    task: asyncio.Task[Any]


# What a command answers: the response's ``data`` (a dict), ``NoData`` (a response without
# it), None (``data: null``), or ``Later`` (the response follows when the task ends).
Reply = dict[str, Any] | _NoData | Later | None
Handler = TypeVar("Handler", bound=Callable[..., Any])


@dataclass(frozen=True)
class CommandSpec:
    name: str
    kind: Literal["query", "at_once", "ordered"]
    handler: Callable[..., Any]


COMMANDS: dict[str, CommandSpec] = {}


def command(name: str, kind: Literal["query", "at_once", "ordered"] = "ordered") -> Callable[[Handler], Handler]:
    def register(fn: Handler) -> Handler:
        COMMANDS[name] = CommandSpec(name, kind, fn)
        return fn

    return register


# ---------------------------------------------------------------------------- fields


def _field(cmd: dict[str, Any], name: str, kind: type | tuple[type, ...], what: str, *, required: bool) -> Any:
    value = cmd.get(name)
    if value is None:
        if required:
            raise CommandError(f"{cmd['type']} needs '{name}' ({what})")
        return None
    if not isinstance(value, kind) or (kind is not bool and isinstance(value, bool)):
        raise CommandError(f"{cmd['type']}: '{name}' must be {what}, not {type(value).__name__}")
    return value


@overload
def _text(cmd: dict[str, Any], name: str, *, required: Literal[True] = True) -> str: ...


@overload
def _text(cmd: dict[str, Any], name: str, *, required: bool) -> str | None: ...


def _text(cmd: dict[str, Any], name: str, *, required: bool = True) -> str | None:
    text: str | None = _field(cmd, name, str, "a string", required=required)
    return text


def _count(cmd: dict[str, Any], name: str) -> int | None:
    """An optional whole number >= 0."""
    value: int | None = _field(cmd, name, int, "a whole number >= 0", required=False)
    if value is not None and value < 0:
        raise CommandError(f"{cmd['type']}: '{name}' must be a whole number >= 0, not {value}")
    return value


def _flag(cmd: dict[str, Any], name: str) -> bool:
    return bool(_field(cmd, name, bool, "true or false", required=True))


def _choice(cmd: dict[str, Any], name: str, choices: tuple[Choice, ...]) -> Choice:
    value = _text(cmd, name)
    for choice in choices:
        if value == choice:
            return choice
    raise CommandError(f"{cmd['type']}: '{name}' must be one of {', '.join(choices)}, not {value!r}")


def _images(cmd: dict[str, Any]) -> list[ImageContent]:
    """``images``: ``{type: "image", data, mimeType}`` blocks (pi's older ``source`` form too)."""
    raw = cmd.get("images")
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise CommandError(f"{cmd['type']}: 'images' must be a list of {{type: 'image', data, mimeType}} objects")
    out = []
    for index, block in enumerate(raw):
        if isinstance(block, dict) and isinstance(block.get("source"), dict):
            source = block["source"]
            block = {"type": "image", "data": source.get("data"), "mimeType": source.get("mediaType")}
        if not isinstance(block, dict) or not isinstance(block.get("data"), str) \
                or not isinstance(block.get("mimeType"), str):
            raise CommandError(f"{cmd['type']}: images[{index}] needs a base64 string 'data' and a 'mimeType'")
        _check_image(cmd["type"], index, block["data"], block["mimeType"])
        out.append(ImageContent(data=block["data"], mime_type=block["mimeType"]))
    return out


def _check_image(command: str, index: int, data: str, mime_type: str) -> None:
    """An image no provider takes is refused here: stored in the session, it would make
    every later request of that session fail (the provider's 400 each time)."""
    import binascii

    from ...runtime.startup.attachments import IMAGE_TYPES

    known = sorted(set(IMAGE_TYPES.values()))
    if mime_type not in known:
        raise CommandError(f"{command}: images[{index}]: 'mimeType' must be one of {', '.join(known)}, "
                           f"not {mime_type!r}")
    try:
        binascii.a2b_base64(data, strict_mode=True)
    except (binascii.Error, ValueError):
        raise CommandError(f"{command}: images[{index}]: 'data' is not valid base64") from None


def _behavior(cmd: dict[str, Any]) -> StreamingBehavior | None:
    try:
        return streaming_behavior(_text(cmd, "streamingBehavior", required=False))
    except ValueError:
        value = cmd.get("streamingBehavior")
        raise CommandError(f"prompt: 'streamingBehavior' must be 'steer' or 'followUp', not {value!r}") from None


# ---------------------------------------------------------------------------- prompting

BUSY = ("Agent is already processing. Specify streamingBehavior ('steer' or 'followUp') to queue the message, "
        "or send steer / follow_up.")


async def _accept(server: RpcServer, text: str, images: list[ImageContent], behavior: StreamingBehavior | None) -> None:
    """Hand ``text`` to the session; return once it is accepted: its run started, or it was
    queued or handled. Failures before that raise; later ones are reported as a notice."""
    session = server.session
    started = server.wait_for_run_start()
    task = server.background(session.prompt(text, images, streaming_behavior=behavior, source="rpc"))
    waiter = asyncio.ensure_future(started.wait())
    try:
        await asyncio.wait({task, waiter}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if task.done():
        from ...runtime.live.live_session import NoModelError

        try:
            task.result()
        except NoModelError as exc:  # said in the response; no traceback for an expected case
            raise CommandError(str(exc)) from None
        return

    def report(done: asyncio.Task[Any]) -> None:
        if not done.cancelled() and done.exception() is not None:
            server.emit_notice("error", f"the prompt failed: {done.exception()}")

    task.add_done_callback(report)


def _extension_command(server: RpcServer, text: str) -> object:
    parsed = split_command(text)
    return server.host.find_command(parsed[0]) if parsed is not None else None


async def _settle_manual_compaction(server: RpcServer) -> None:
    """A prompt after ``compact`` waits for that compaction instead of being refused."""
    if server.session.run_state == "compacting" and server.manual_compaction:
        await server.session.wait_for_idle()


def _message(cmd: dict[str, Any]) -> tuple[str, list[ImageContent]]:
    """A prompt's text and images; nothing to say at all is refused, as every other front end
    refuses an empty prompt (a request for nothing would still cost a model call)."""
    text = _text(cmd, "message")
    images = _images(cmd)
    if not text.strip() and not images:
        raise CommandError(f"{cmd['type']}: 'message' is empty")
    return text, images


@command("prompt")
async def prompt(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    text, images = _message(cmd)
    behavior = _behavior(cmd)
    session = server.session
    found = _extension_command(server, text)
    if found is not None:  # runs now, even mid-run; it drives the model itself if it wants to
        task = server.background(session.prompt(text, images, source="rpc"))

        def report(done: asyncio.Task[Any]) -> None:
            server.check_shutdown()
            if not done.cancelled() and done.exception() is not None:
                from ...runtime.event_records import event_record
                from ...runtime.events import ExtensionErrorEvent

                owner = getattr(found, "owner", "") or "extension"
                server.output.send(event_record(ExtensionErrorEvent(owner, f"command:{text.split()[0]}",
                                                                    str(done.exception()))))

        task.add_done_callback(report)
        return NoData
    await _settle_manual_compaction(server)
    if not session.is_idle() and behavior is None:
        raise CommandError(BUSY)
    await _accept(server, text, images, behavior)
    return NoData


async def _queue_message(server: RpcServer, cmd: dict[str, Any], behavior: StreamingBehavior) -> Reply:
    text, images = _message(cmd)
    if _extension_command(server, text) is not None:
        raise CommandError(f"{cmd['type']}: extension commands cannot be queued; send them with prompt")
    await _settle_manual_compaction(server)
    # Busy: queued for the run. Idle: there is no run to join, so it starts one.
    await _accept(server, text, images, behavior)
    return NoData


@command("steer")
async def steer(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return await _queue_message(server, cmd, "steer")


@command("follow_up")
async def follow_up(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return await _queue_message(server, cmd, "follow_up")


@command("abort", "at_once")
async def abort(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    session = server.session
    session.abort()
    await session.wait_for_idle()
    return NoData


# ---------------------------------------------------------------------------- sessions


async def _stop_run(server: RpcServer) -> None:
    session = server.session
    if not session.is_idle():
        session.abort()
        await session.wait_for_idle()


def _options_like(server: RpcServer, session: LiveSession, **overrides: object) -> SessionOptions:
    """Options for a session that carries on from ``session``: same folder, model, level,
    tools and system prompt options, saved when it was saved."""
    from ...runtime.live.options import SessionOptions

    request = server.request
    values: dict[str, Any] = {
        "cwd": session.cwd, "persist": session.session_file is not None, "model": session.model,
        "thinking_level": session.thinking_level, "active_tools": list(session.active_tool_names),
        "custom_system_prompt": request.system_prompt, "append_system_prompt": request.append_system_prompt or "",
    }
    values.update(overrides)
    return SessionOptions(**values)


@command("new_session")
async def new_session(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    parent = _text(cmd, "parentSession", required=False)
    session = server.session
    await _stop_run(server)
    await server.host.new_session(_options_like(server, session, parent_session=parent))
    return {"cancelled": False}


@command("switch_session")
async def switch_session(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    import os

    path = _text(cmd, "sessionPath")
    if not path.strip():
        raise CommandError("switch_session: 'sessionPath' must name a session file or id, not be empty")
    if (path.endswith(".jsonl") or os.sep in path) and not os.path.isfile(os.path.join(server.session.cwd, path)):
        raise CommandError(f"switch_session: cannot open {path}: there is no session file there")
    await _stop_run(server)
    try:
        await server.host.resume_session(path)
    except (OSError, ValueError, LookupError) as exc:
        raise CommandError(f"switch_session: cannot open {path}: {exc}") from None
    return {"cancelled": False}


async def _fork_at(server: RpcServer, entry_id: str | None) -> None:
    """A new active session holding the branch up to ``entry_id`` (None: nothing of it)."""
    session = server.session
    await _stop_run(server)
    if entry_id is not None:
        await server.host.fork_session(entry_id, source=session)
        return
    await server.host.new_session(_options_like(server, session, parent_session=session.session_file))


@command("fork")
async def fork(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    entry_id = _text(cmd, "entryId")
    choices = {m["entryId"]: m["text"] for m in queries.fork_messages(server.session)}
    if entry_id not in choices:
        raise CommandError(f"fork: {entry_id!r} is not a user message of the current branch (see get_fork_messages)")
    entry = server.session.session_manager.get_entry(entry_id)
    if entry is None:  # listed a moment ago: only a concurrent edit of the tree gets here
        raise CommandError(f"fork: {entry_id!r} is gone from the session")
    await _fork_at(server, entry.parent_id)
    return {"text": choices[entry_id], "cancelled": False}


@command("clone")
async def clone(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    await _fork_at(server, server.session.session_manager.get_leaf_id())
    return {"cancelled": False}


@command("set_session_name")
async def set_session_name(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    name = _text(cmd, "name").strip()
    if not name:
        raise CommandError("Session name cannot be empty")
    server.session.session_manager.append_session_info(name)
    return NoData


@command("export_html")
async def export_html(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    import os

    from ...session.export_html import export_session_html

    out = _text(cmd, "outputPath", required=False)
    path = server.session.session_file
    if path is None:
        raise CommandError("export_html: this session is not saved (--no-session), so there is no file to export")
    if not os.path.exists(path):
        raise CommandError("export_html: nothing to export yet (the session file is written with the first answer)")
    if out is not None:
        out = os.path.join(server.session.cwd, os.path.expanduser(out))
    try:
        target = await asyncio.to_thread(export_session_html, path, out)
    except (OSError, ValueError) as exc:
        raise CommandError(f"export_html: {exc}") from None
    return {"path": str(target)}


# ---------------------------------------------------------------------------- queries


@command("get_state", "query")
def get_state(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return queries.session_state(server.session)


@command("get_messages", "query")
def get_messages(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    start = _count(cmd, "start") or 0
    end = _count(cmd, "end")
    return {"messages": queries.messages(server.session, start, end)}


@command("get_session_stats", "query")
def get_session_stats(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return queries.session_stats(server.session)


@command("get_fork_messages", "query")
def get_fork_messages(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return {"messages": queries.fork_messages(server.session)}


@command("get_last_assistant_text", "query")
def get_last_assistant_text(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return {"text": queries.last_assistant_text(server.session)}


@command("get_commands", "query")
def get_commands(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return {"commands": queries.commands(server.host, server.session)}


@command("get_available_models", "query")
def get_available_models(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return {"models": [queries.model_record(m) for m in server.host.model_registry.available()]}


@command("get_available_thinking_levels", "query")
def get_available_thinking_levels(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    model = server.session.model
    return {"levels": list(THINKING_LEVELS) if model is not None and model.reasoning else ["off"]}


# ---------------------------------------------------------------------------- model and thinking


@command("set_model")
async def set_model(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    provider = _text(cmd, "provider")
    model_id = _text(cmd, "modelId")
    registry = server.host.model_registry
    model = next((m for m in registry.available() if m.provider == provider and m.id == model_id), None)
    if model is None:
        known = registry.find(provider, model_id)
        why = "no API key is set for its provider" if known is not None else "see get_available_models"
        raise CommandError(f"Model not found: {provider}/{model_id} ({why})")
    if not await server.session.set_model(model):
        raise CommandError(f"set_model: no API key for provider {provider!r}")
    return queries.model_record(model)


@command("cycle_model")
async def cycle_model(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """The next model of the scope the TUI's Ctrl+P cycles (settings ``enabledModels``)."""
    from ..interactive.commands.model import model_key, scoped_models

    session = server.session
    scope = scoped_models(server.host)
    keys = [model_key(m) for m, _ in scope]
    current = model_key(session.model) if session.model is not None else None
    index = keys.index(current) if current in keys else -1
    for step in range(1, len(scope) + 1):
        model, level = scope[(index + step) % len(scope)]
        if model_key(model) == current:
            return None  # no other model in scope
        if await session.set_model(model, "cycle"):
            if level is not None:
                await session.set_thinking_level(level)
            return {"model": queries.model_record(model), "thinkingLevel": session.thinking_level,
                    "isScoped": bool(server.host.settings.get("enabledModels"))}
    return None


@command("set_thinking_level")
async def set_thinking_level(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    level = _choice(cmd, "level", tuple(THINKING_LEVELS))
    await server.session.set_thinking_level(level)
    return NoData


@command("cycle_thinking_level")
async def cycle_thinking_level(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    from ..interactive.commands.model import cycle_thinking

    level = await cycle_thinking(server.session)
    return None if level is None else {"level": level}


# ---------------------------------------------------------------------------- settings


def _save_setting(server: RpcServer, values: dict[str, Any]) -> None:
    """Saved in the agent's settings like pi does; the process follows it at once."""
    from ...config.settings import SettingsError

    try:
        server.session.settings.update(values)
    except SettingsError as exc:
        raise CommandError(str(exc)) from None


@command("set_steering_mode")
async def set_steering_mode(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    mode = _choice(cmd, "mode", QUEUE_MODES)
    _save_setting(server, {"steeringMode": mode})
    server.session.agent.steering_mode = mode  # a run in flight follows it too
    return NoData


@command("set_follow_up_mode")
async def set_follow_up_mode(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    mode = _choice(cmd, "mode", QUEUE_MODES)
    _save_setting(server, {"followUpMode": mode})
    server.session.agent.follow_up_mode = mode
    return NoData


@command("set_auto_compaction")
async def set_auto_compaction(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    _save_setting(server, {"compaction": {"enabled": _flag(cmd, "enabled")}})
    return NoData


@command("set_auto_retry")
async def set_auto_retry(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    _save_setting(server, {"retry": {"enabled": _flag(cmd, "enabled")}})
    return NoData


# ---------------------------------------------------------------------------- compaction and retry


@command("compact")
async def compact(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    from ...agent.events import to_jsonable

    instructions = _text(cmd, "customInstructions", required=False)
    await _stop_run(server)
    session = server.session

    async def run() -> object:
        result = await session.compact(instructions)
        if result is None:
            raise CommandError(f"compact: {server.last_compaction_error or 'the compaction was cancelled'}")
        return to_jsonable(result)

    task = server.background(run())
    await asyncio.sleep(0)  # let it reach ``compacting`` before the next command is taken
    return Later(task)


@command("abort_retry", "at_once")
async def abort_retry(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    server.session.abort_retry()
    return NoData


# ---------------------------------------------------------------------------- bash


@command("bash")
async def bash(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    command_text = _text(cmd, "command")
    if not command_text.strip():
        raise CommandError("bash: 'command' is empty")
    session = server.session
    request_id = cmd.get("id")
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def stream(data: bytes) -> None:  # pi's bash_execution_update: every piece, as it comes
        delta = decoder.decode(data)
        if delta:
            record: dict[str, Any] = {"type": "bash_execution_update"}
            if request_id is not None:
                record["id"] = request_id
            record["delta"] = delta
            server.output.send(record)

    async def run() -> dict[str, Any]:
        message = await session.run_bash(command_text, on_output=stream)
        data: dict[str, Any] = {"output": message.output, "exitCode": message.exit_code,
                                "cancelled": message.cancelled, "truncated": message.truncated}
        if message.full_output_path:
            data["fullOutputPath"] = message.full_output_path
        return data

    return Later(server.background(run()))


@command("abort_bash", "at_once")
async def abort_bash(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    server.session.abort_bash()
    return NoData
