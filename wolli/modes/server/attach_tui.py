"""``wolli attach``: the full-screen app as a client of a ``wolli serve`` session.

:class:`RemoteRuntime` is the remote :class:`~..interactive.client_runtime.ClientRuntime`:
the app and its widgets are the standalone ones; what they read of the session comes from
the server's records (:class:`RemoteSession`), what the user does becomes the server's
commands. Dialogs the session asks go to every attached client: this one shows them as the
standalone dialogs do, and closes its copy when another client answered first.

Slash commands that act on the session run on the server (``/model``,
``/name``, ``/compact``, ``/new``, ``/resume``, ``/copy``; extension commands, templates and
skills are prompts); the ones that need the host in this process (``/login``, ``/settings``,
``/reload``, ``/tree``...) say so instead of failing half-way (docs/server.md lists them).
"""

from __future__ import annotations

import asyncio
import socket
import time
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, cast

from ...agent.events import MessageEndEvent, to_jsonable
from ...ai.types import ImageContent, Model
from ..interactive.client_runtime import SessionFigures
from ..interactive.commands.definition import CommandEntry
from ..interactive.commands.registry import builtin_commands, split
from ..tui.wire_dialogs import DIALOG_METHODS, close_answered, dialog_screen
from . import remote_commands
from .ahead import AHEAD_ID, HISTORY_TAIL, attach_command
from .client import ServerUnavailable
from .link import Record, RemoteError, ServerLink
from .remote_commands import SESSION_COMMANDS, remote_shortcuts
from .remote_events import EventDecoder, parse_messages

if TYPE_CHECKING:
    from ...agent.messages import AgentMessage
    from ...agent.tool import ToolDefinition
    from ...extensions.registry import Shortcut
    from ...runtime.events import RunState, SessionEvent
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.startup.request import StartupRequest
    from ..tui.app import WolliApp

# Waits between reconnection attempts after the server went away (then the last, repeated).
BACKOFF = (0.2, 0.5, 1.0, 2.0, 5.0)
RECONNECT_FOR = 120.0  # seconds of trying before giving up
ATTACH_TIMEOUT = 60.0  # opening a long session on a busy server
# Older messages asked for at a time as scrolling reaches them (~250 KB of a typical session):
# a long history never crosses the socket whole just to be drawn.
HISTORY_PAGE = 200
# Built-in commands an attached client runs (on the server); every other built-in needs the
# host in this process and says so.
REMOTE_COMMANDS = {"model", "name", "compact", "new", "resume", "copy", "session", "quit", *SESSION_COMMANDS}
# Commands only an attached client has.
ATTACHED_ONLY = {"detach": "leave; the session runs on", "help": "what runs in an attached client"}


Connect = Callable[[Callable[[Record], None]], Awaitable[ServerLink]]


@dataclass
class RemoteSession:
    """The session on the server, as this client last heard of it (a ``SessionView``)."""

    session_id: str
    cwd: str
    session_file: str | None = None
    messages: list[AgentMessage] = field(default_factory=list)
    model: Model | None = None
    run_state: str = "idle"
    thinking_level: str | None = None
    session_name: str | None = None
    permission_mode: str = "default"
    clients: int = 1
    steering: list[str] = field(default_factory=list)
    follow_up: list[str] = field(default_factory=list)
    stats: dict[str, object] = field(default_factory=dict)
    all_tools: Sequence[ToolDefinition] = ()

    @property
    def is_streaming(self) -> bool:
        return self.run_state == "running"

    def is_idle(self) -> bool:
        return self.run_state == "idle"

    def take_state(self, state: dict[str, object]) -> None:
        model = state.get("model")
        self.model = Model.model_validate(model) if isinstance(model, dict) else None
        level = state.get("thinkingLevel")
        self.thinking_level = level if isinstance(level, str) else None
        name = state.get("sessionName")
        self.session_name = name if isinstance(name, str) else None
        mode = state.get("permissionMode")
        self.permission_mode = mode if isinstance(mode, str) else "default"
        run_state = state.get("runState")
        self.run_state = run_state if isinstance(run_state, str) else "idle"
        file = state.get("sessionFile")
        self.session_file = file if isinstance(file, str) else None


class RemoteRuntime:
    """The app's runtime when it is attached to a server's session."""

    def __init__(self, app: WolliApp, request: StartupRequest, connect: Connect, session_id: str | None,
                 *, join_live: bool = False, ahead: socket.socket | None = None) -> None:
        """``ahead``: a connection on which ``attach_command(session_id, request.cwd)`` was
        already sent (see ``ahead.py``); the first attach takes its response."""
        self.app = app
        self.request = request
        self.ready = asyncio.Event()
        self._connect = connect
        self._wanted = session_id  # the session to attach to (None: a new one in request.cwd)
        self._join_live = join_live  # without a session id: join the running (or latest live) one
        self._link: ServerLink | None = None
        self._session: RemoteSession | None = None
        self._decoder = EventDecoder()
        self._dialogs: dict[str, object] = {}  # open dialog screens by request id
        self._commands: list[CommandEntry] = []
        self._shortcuts: dict[str, Shortcut] = {}  # the server's extension shortcuts, by canonical key
        self._resources: list[dict[str, str]] = []  # the server's MCP resources, for @ completion
        self._closing = False
        self._watch: asyncio.Task[None] | None = None
        self._history_shown = 0  # counts the histories shown: a page for an older one is dropped
        self._older = 0  # messages of the shown history before the ones this client has
        self._paging: asyncio.Task[None] | None = None
        self._ahead = ahead

    @property
    def session(self) -> RemoteSession | None:
        return self._session

    @property
    def host(self) -> AgentHost | None:
        return None  # no host in this process: extension shortcuts and renderers live on the server

    # ------------------------------------------------------------------ connecting

    async def start(self) -> None:
        from ...base import code_cache, startup_gc

        # The answers' markdown module loads in a thread while the server sends the history
        # (the standalone app warms it the same way); the rows it draws need it next.
        warm = asyncio.create_task(asyncio.to_thread(_load_markdown))
        try:
            await self._attach(self._wanted, history=True)
        except (ServerUnavailable, RemoteError, TimeoutError) as exc:
            self.app.exit(return_code=1, message=f"wolli: {exc}")
            return
        finally:
            startup_gc.resume()  # paused by the command line: the history is built, collect from here
            code_cache.stop_recording_patterns()  # later patterns may come from the session's data
            await warm
        self.ready.set()
        for text in self.request.messages:  # `wolli attach` has no prompt words today; kept for symmetry
            await self.send(text)

    async def _attach(self, session_id: str | None, *, history: bool) -> None:
        ahead, self._ahead = self._ahead, None
        if ahead is not None:
            link, answer = await ServerLink.adopt(ahead, self._on_record, AHEAD_ID)
            self._link = link
            data = await asyncio.wait_for(answer, ATTACH_TIMEOUT)
        else:
            link = await self._connect(self._on_record)
            if session_id is None and self._join_live:
                session_id = _live_choice(await link.call({"type": "get_live_sessions"}))
            self._link = link
            data = await link.call(attach_command(session_id, self.request.cwd), ATTACH_TIMEOUT)
        assert isinstance(data, dict)
        self._show_attached(data, history=history)
        self._watch = asyncio.create_task(self._watch_link(link))
        await self._refresh_side_data()

    def _show_attached(self, data: dict[str, object], *, history: bool) -> None:
        session = RemoteSession(session_id=str(data["sessionId"]), cwd=str(data.get("cwd") or self.request.cwd))
        state = data.get("state")
        session.take_state(state if isinstance(state, dict) else {})
        session.messages = list(parse_messages(data.get("messages")))
        clients = data.get("clients")
        session.clients = clients if isinstance(clients, int) else 1
        self._session, self._wanted = session, session.session_id
        self._decoder = EventDecoder()
        self._history_shown += 1
        self.app.reload_transcript()
        older = data.get("historyStart")
        self._expect_older(session, older if isinstance(older, int) and older > 0 else 0)
        if session.run_state != "idle":  # joined while it works: the row shows it at once
            self.app.adapter(_run_state(session.run_state))
        streaming = data.get("streamMessage")
        if isinstance(streaming, dict):  # an answer in flight: shown so far, its deltas follow
            start = self._decoder.decode({"type": "message_start", "message": streaming})
            if start is not None:
                self.app.adapter(start)
        running = data.get("runningTools")
        for tool in running if isinstance(running, list) else []:  # their rows run from here
            started = self._decoder.decode({**tool, "type": "tool_execution_start"}) if isinstance(tool, dict) else None
            if started is not None:
                self.app.adapter(started)
        if history:
            others = session.clients - 1
            self.app.add_notice(f"Attached to session {session.session_id} on the server"
                                + (f" ({others} other client{'s' if others != 1 else ''} attached)" if others else "")
                                + "; /detach leaves it running.", "muted")

    def _expect_older(self, session: RemoteSession, count: int) -> None:
        """The ``count`` messages before the shown ones are fetched a page at a time, as
        scrolling reaches them."""
        self._older = count
        if count:
            shown = self._history_shown
            self.app.expect_history(count, lambda: self._fetch_history(session, shown))

    def _fetch_history(self, session: RemoteSession, shown: int) -> None:
        if self._paging is None or self._paging.done():
            self._paging = asyncio.get_running_loop().create_task(self._page_history(session, shown))

    async def _page_history(self, session: RemoteSession, shown: int) -> None:
        """The page of history just before what is shown, put above it."""
        link, end = self._link, self._older
        if link is None or not end:
            return
        start = max(0, end - HISTORY_PAGE)
        try:
            data = await link.call({"type": "get_messages", "start": start, "end": end})
        except (ServerUnavailable, RemoteError, TimeoutError):
            return  # the rows above stay unknown; scrolling up again, a reconnect or /resume asks again
        if shown != self._history_shown or session is not self._session:
            return  # another history replaced this one meanwhile
        older, start = _from_a_row(list(parse_messages(data.get("messages") if isinstance(data, dict) else None)),
                                   start)
        self._older = start
        session.messages[:0] = older
        self.app.prepend_history(older, unfetched=start)

    async def _refresh_side_data(self) -> None:
        """The footer's totals and the command list (extension commands, templates, skills)."""
        link, session = self._link, self._session
        if link is None or session is None:
            return
        try:
            stats = await link.call({"type": "get_session_stats"})
            commands = await link.call({"type": "get_commands"})
            shortcuts = await link.call({"type": "get_shortcuts"})
        except (ServerUnavailable, RemoteError, TimeoutError):
            return
        self._shortcuts = remote_shortcuts(shortcuts)
        await self._refresh_resources()
        session.stats = stats if isinstance(stats, dict) else {}
        found = commands.get("commands") if isinstance(commands, dict) else None
        self._commands = [CommandEntry(str(c["name"]), str(c.get("description") or ""),
                                       "Skill" if c.get("source") == "skill" else
                                       "Prompt" if c.get("source") == "prompt" else "Extension", str(c.get("source")))
                          for c in found or [] if isinstance(c, dict) and c.get("name")]
        self.app.refresh_footer()

    async def _refresh_resources(self) -> None:
        link = self._link
        if link is None:
            return
        try:
            data = await link.call({"type": "get_mcp_resources"})
        except (ServerUnavailable, RemoteError, TimeoutError):
            return
        found = data.get("resources") if isinstance(data, dict) else None
        self._resources = [{str(k): str(v) for k, v in r.items()} for r in found or [] if isinstance(r, dict)]

    async def _watch_link(self, link: ServerLink) -> None:
        await link.closed.wait()
        if self._closing or link is not self._link:
            return
        self._close_dialogs()
        self.app.add_notice("The server went away; reconnecting…", "warning")
        deadline = time.monotonic() + RECONNECT_FOR
        attempt = 0
        while time.monotonic() < deadline and not self._closing:
            await asyncio.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            attempt += 1
            try:
                await self._attach(self._wanted, history=False)
            except (ServerUnavailable, RemoteError, TimeoutError, OSError):
                continue
            self.app.add_notice("Reconnected.", "muted")
            return
        if not self._closing:
            self.app.add_notice("Gave up reconnecting: start the server again and run wolli attach.", "error")

    def settle_before_exit(self) -> None:
        return None  # the session runs on, on the server

    async def shutdown(self) -> None:
        self._closing = True
        if self._link is not None:
            self._link.close()

    # ------------------------------------------------------------------ what the server says

    def _on_record(self, record: Record) -> None:
        kind = record.get("type")
        if kind == "extension_ui_request":
            self._ui_request(record)
            return
        if kind == "extension_ui_closed":
            screen = self._dialogs.pop(str(record.get("id")), None)
            if screen is not None:
                close_answered(screen)
            return
        if kind == "session_replaced":  # an extension put another session in this one's place
            self._wanted = str(record.get("sessionId"))
            asyncio.get_running_loop().create_task(self._moved())
            return
        if kind == "mcp_server_state":  # a server of the server's came up: its resources, for @ completion
            status = record.get("server")
            if isinstance(status, dict) and status.get("state") == "ready":
                asyncio.get_running_loop().create_task(self._refresh_resources())
            return
        if kind == "response":  # a fire-and-forget command that failed
            if not record.get("success"):
                self.app.add_notice(f"{record.get('command')}: {record.get('error')}", "error")
            return
        event = self._decoder.decode(record)
        if event is None:
            return
        self._follow(kind, record, event)
        self.app.adapter(event)

    def _follow(self, kind: object, record: Record, event: object) -> None:
        """Keep the session view in step with the events it is sent."""
        session = self._session
        if session is None:
            return
        if kind == "run_state":
            session.run_state = str(record.get("state"))
        elif isinstance(event, MessageEndEvent):
            session.messages.append(event.message)
        elif kind == "queue_update":
            steering, follow_up = record.get("steering"), record.get("followUp")
            session.steering = [str(t) for t in steering] if isinstance(steering, list) else []
            session.follow_up = [str(t) for t in follow_up] if isinstance(follow_up, list) else []
        elif kind == "model_select":
            model = record.get("model")
            session.model = Model.model_validate(model) if isinstance(model, dict) else session.model
        elif kind == "thinking_level_select":
            session.thinking_level = str(record.get("level"))
        elif kind == "permission_mode_change":
            session.permission_mode = str(record.get("mode"))
        elif kind in ("agent_end", "compaction_end"):
            asyncio.get_running_loop().create_task(self._refresh_side_data())

        elif kind in ("session_tree", "session_start"):
            asyncio.get_running_loop().create_task(self._reload_messages())
            if kind == "session_start":  # a reload on the server: commands and shortcuts may differ
                asyncio.get_running_loop().create_task(self._refresh_side_data())

    async def _reload_messages(self) -> None:
        """The session's messages are another list (a /tree move, a reload on the server):
        its tail again, the older part fetched as scrolling reaches it, as on attach."""
        link, session = self._link, self._session
        if link is None or session is None:
            return
        try:
            state = await link.call({"type": "get_state"})
            count = state.get("messageCount") if isinstance(state, dict) else None
            start = max(0, count - HISTORY_TAIL) if isinstance(count, int) else 0
            data = await link.call({"type": "get_messages", "start": start})
        except (ServerUnavailable, RemoteError, TimeoutError):
            return
        if session is not self._session:
            return
        messages, start = _from_a_row(list(parse_messages(data.get("messages") if isinstance(data, dict) else None)),
                                      start)
        session.messages = messages
        if isinstance(state, dict):
            session.take_state(state)
        self._history_shown += 1
        self.app.reload_transcript()
        self._expect_older(session, start)

    def _ui_request(self, record: Record) -> None:
        method, request_id = record.get("method"), str(record.get("id"))
        if method == "notify":
            level = {"warning": "warning", "error": "error"}.get(str(record.get("notifyType")), "info")
            self.app.add_notice(str(record.get("message", "")), level)
            return
        if method == "set_editor_text":
            self.app.front.set_editor_text(str(record.get("text", "")))
            return
        if method == "setStatus":
            text = record.get("statusText")
            self.app.ui.set_status(str(record.get("statusKey")), None if text is None else str(text))
            return
        if method == "setWidget":
            lines = record.get("widgetLines")
            self.app.ui.set_widget(str(record.get("widgetKey")),
                                   [str(line) for line in lines] if isinstance(lines, list) else None,
                                   placement=str(record.get("widgetPlacement") or "aboveEditor"))
            return
        if method == "setTitle":
            self.app.ui.set_title(str(record.get("title", "")))
            return
        if method not in DIALOG_METHODS:
            return  # what else a client draws only with the extension in-process (a footer, an editor)
        screen = dialog_screen(str(method), record)
        self._dialogs[request_id] = screen

        def answered(value: object) -> None:
            if self._dialogs.pop(request_id, None) is None:
                return  # closed because another client answered first
            self._answer(request_id, method, value)

        self.app.push_screen(screen, callback=answered)

    def _answer(self, request_id: str, method: object, value: object) -> None:
        response: Record = {"type": "extension_ui_response", "id": request_id}
        if value is None:
            response["cancelled"] = True
        elif method == "confirm":
            response["confirmed"] = bool(value)
        else:
            response["value"] = str(value)
        if self._link is not None:
            self._link.send(response)

    def _close_dialogs(self) -> None:
        dialogs, self._dialogs = self._dialogs, {}
        for screen in dialogs.values():
            close_answered(screen)

    # ------------------------------------------------------------------ what the user does

    def _send(self, command: Record) -> None:
        if self._link is None or self._link.closed.is_set():
            self.app.add_notice("Not connected to the server (reconnecting); try again in a moment.", "warning")
            return
        self._link.send(command)

    async def _call(self, command: Record, timeout: float | None = 60.0) -> object:
        if self._link is None:
            raise ServerUnavailable("not connected to the server")
        return await self._link.call(command, timeout)

    async def send(self, text: str, *, follow_up: bool = False, images: list[ImageContent] | None = None) -> None:
        await self.ready.wait()
        session = self._session
        if session is None:
            return
        if not images and await self._builtin(text):
            self.app.refresh_footer()
            return
        stripped = text.strip()
        bash = stripped.lstrip("!").strip()
        if stripped.startswith("!") and bash:
            self._send({"type": "bash", "command": bash, "excludeFromContext": stripped.startswith("!!")})
            return
        command: Record = {"type": "prompt", "message": text}
        if images:
            command["images"] = [to_jsonable(image) for image in images]
        # Always with a streaming behaviour: what this client last heard of the run state can be
        # stale (another client's run just started), and without one a busy session refuses the
        # line; an idle session runs it as a prompt either way.
        command["streamingBehavior"] = "followUp" if follow_up else "steer"
        self._send(command)

    async def run_command(self, text: str) -> None:
        await self.send(text)

    async def _builtin(self, text: str) -> bool:
        """Run a built-in command the remote way; False when ``text`` is not a built-in."""
        parsed = split(text)
        if parsed is None:
            return False
        name, args = parsed
        command = builtin_commands().get(name)
        if command is None and name not in ATTACHED_ONLY:
            return False  # an extension command, a template or a skill: the server runs it
        name = command.name if command is not None else name
        if name not in REMOTE_COMMANDS and name not in ATTACHED_ONLY:
            self.app.add_notice(f"/{name} is not available in a client attached to a server (it needs the "
                                "host in this process); run it in a standalone wolli, or on the server's side.",
                                "warning")
            return True
        try:
            await self._remote_command(name, args)
        except (RemoteError, ServerUnavailable, TimeoutError) as exc:
            self.app.add_notice(f"/{name}: {exc}", "error")
        return True

    async def _remote_command(self, name: str, args: str) -> None:
        front, session = self.app.front, self._session
        assert session is not None
        if name in SESSION_COMMANDS:
            await remote_commands.run(name, args, _SessionHost(self), front)
        elif name in ("quit", "detach"):
            self.app.exit(0)
        elif name == "model":
            data = await self._call({"type": "get_available_models"})
            records = data.get("models") if isinstance(data, dict) else None
            models = [Model.model_validate(m) for m in records or [] if isinstance(m, dict)]
            picked = await front.pick_model(models, session.model, args)
            if isinstance(picked, Model):
                await self._call({"type": "set_model", "provider": picked.provider, "modelId": picked.id})
        elif name == "name":
            if args:
                await self._call({"type": "set_session_name", "name": args})
                session.session_name = args
            else:
                front.notify(f"Session name: {session.session_name or '(none)'}; /name TEXT sets it.")
        elif name == "compact":
            await self._call({"type": "compact", **({"customInstructions": args} if args else {})})
        elif name == "new":
            await self._call({"type": "new_session"})
            await self._moved()
        elif name == "resume":
            await self._resume(args)
        elif name == "copy":
            text = await self._call({"type": "get_last_assistant_text"})
            found = text.get("text") if isinstance(text, dict) else None
            if not found:
                front.notify("Nothing to copy yet.", "warning")
            else:
                front.notify(f"Copied the last answer ({front.copy_to_clipboard(str(found))}).")
        elif name == "session":
            front.show_text("Session", f"id: {session.session_id}\nfile: {session.session_file}\ncwd: {session.cwd}\n"
                                       f"server: wolli {self._link.hello.get('version') if self._link and self._link.hello else '?'}"
                                       f"\nattached clients: {session.clients}")
        elif name == "help":
            front.show_text("Attached to a server", "Run on the server's session: /" + ", /".join(sorted(REMOTE_COMMANDS))
                            + ", /detach\nExtension commands, prompt templates and skills run on the server too "
                            "(docs/server.md).")

    async def _moved(self) -> None:
        """This client was moved to another session (new, resume): show that one."""
        state = await self._call({"type": "get_state"})
        data = await self._call({"type": "get_messages"})
        if isinstance(state, dict):
            self._show_attached({"sessionId": state.get("sessionId"), "cwd": self._session.cwd if self._session else "",
                                 "state": state, "messages": data.get("messages") if isinstance(data, dict) else [],
                                 "clients": 1}, history=False)
        await self._refresh_side_data()

    async def _resume(self, args: str) -> None:
        target = args
        if not target:
            data = await self._call({"type": "get_live_sessions"})
            rooms = data.get("sessions") if isinstance(data, dict) else None
            labels: dict[str, str] = {}
            for room in rooms or []:
                if isinstance(room, dict) and room.get("sessionId") != self._wanted:
                    name = f" {room['name']}" if room.get("name") else ""
                    labels[f"{room['sessionId']}{name} ({room.get('runState')}, {room.get('cwd')})"] = str(room["sessionId"])
            if not labels:
                self.app.front.notify("No other live session on the server; /resume ID opens a saved one.")
                return
            chosen = await self.app.front.select("Attach to a live session", list(labels))
            target = labels.get(chosen, "") if isinstance(chosen, str) else ""
        if target:
            data = await self._call(attach_command(target, self.request.cwd))
            if isinstance(data, dict):
                self._show_attached(data, history=True)
                await self._refresh_side_data()

    def command_entries(self) -> list[CommandEntry]:
        out = [CommandEntry(name, command.description, command.category, "builtin", command.usage)
               for name, command in builtin_commands().items() if name == command.name and name in REMOTE_COMMANDS]
        out += [CommandEntry(name, description, "Server", "builtin") for name, description in ATTACHED_ONLY.items()]
        return out + [entry for entry in self._commands if entry.name not in REMOTE_COMMANDS]

    async def argument_completions(self, name: str, prefix: str) -> object:
        return None

    def abort(self) -> list[str]:
        session = self._session
        if session is None:
            return []
        queued = [*session.steering, *session.follow_up]
        self._send({"type": "clear_queue"})
        self._send({"type": "abort"})
        self._send({"type": "abort_bash"})
        return queued

    def stop_user_command(self) -> bool:
        if self._session is not None:
            self._send({"type": "abort_bash"})  # the server's reply does not say whether one ran
        return False

    async def cycle_thinking_level(self) -> str | None:
        data = await self._call({"type": "cycle_thinking_level"})
        level = data.get("level") if isinstance(data, dict) else None
        return str(level) if level is not None else None

    async def cycle_permission_mode(self) -> None:
        await self.ready.wait()
        data = await self._call({"type": "cycle_permission_mode"})
        if isinstance(data, dict) and data.get("mode"):
            self.app.front.notify(f"Permission mode: {data['mode']}")
        self.app.refresh_footer()

    async def cycle_model(self, step: int) -> None:
        await self.ready.wait()
        data = await self._call({"type": "cycle_model"})
        model = data.get("model") if isinstance(data, dict) else None
        if isinstance(model, dict):
            self.app.front.notify(f"Model: {model.get('provider')}/{model.get('id')}")
        self.app.refresh_footer()

    def mcp_resources(self) -> list[dict[str, str]]:
        return self._resources

    def shortcut(self, key: str) -> Shortcut | None:
        """The server's extension shortcut for a key event's name (None when a built-in key
        of this app has it, as standalone)."""
        if not self._shortcuts:
            return None
        from ...config.keys import event_canonical
        from ..interactive.hotkeys import builtin_keys

        canonical = event_canonical(key)
        found = self._shortcuts.get(canonical)
        return None if found is None or canonical in builtin_keys() else found

    async def run_shortcut(self, shortcut: Shortcut) -> None:
        """Runs on the server (its handler is code there); its dialogs open here meanwhile."""
        try:
            data = await self._call({"type": "run_shortcut", "key": shortcut.key}, timeout=None)
        except (RemoteError, ServerUnavailable) as exc:
            self.app.add_notice(str(exc), "error")
            return
        error = data.get("error") if isinstance(data, dict) else None
        if error:
            self.app.add_notice(str(error), "error")

    def figures(self) -> SessionFigures | None:
        session = self._session
        if session is None:
            return None
        model = session.model
        stats = session.stats
        tokens = stats.get("tokens")
        tokens = tokens if isinstance(tokens, dict) else {}
        usage = stats.get("contextUsage")
        cost = stats.get("cost")
        return SessionFigures(
            model=f"{model.provider}/{model.id}" if model is not None else "no model", cwd=session.cwd,
            tokens_in=int(tokens.get("input", 0)), tokens_out=int(tokens.get("output", 0)),
            cache_read=int(tokens.get("cacheRead", 0)), cache_write=int(tokens.get("cacheWrite", 0)),
            cost=float(cost) if isinstance(cost, int | float) else 0.0,
            thinking=session.thinking_level if model is not None and model.reasoning else None,
            context_percent=usage.get("percent") if isinstance(usage, dict) else None,
            session_name=session.session_name, permission_mode=session.permission_mode)


class _SessionHost:
    """The runtime as ``remote_commands`` sees it."""

    def __init__(self, runtime: RemoteRuntime) -> None:
        self._runtime = runtime

    @property
    def cwd(self) -> str:
        session = self._runtime.session
        return session.cwd if session is not None else self._runtime.request.cwd

    async def call(self, command: Record, timeout: float | None = 60.0) -> object:
        return await self._runtime._call(command, timeout)

    def send(self, command: Record) -> None:
        self._runtime._send(command)

    async def moved(self) -> None:
        await self._runtime._moved()

    async def refresh(self) -> None:
        await self._runtime._refresh_side_data()

    @property
    def shortcuts(self) -> dict[str, Shortcut]:
        return self._runtime._shortcuts

    @property
    def theme_names(self) -> list[str]:
        return sorted(self._runtime.app.themes)

    @property
    def model(self) -> Model | None:
        session = self._runtime.session
        return session.model if session is not None else None


def _run_state(state: str) -> SessionEvent:
    from ...runtime.events import RunStateEvent

    return RunStateEvent(cast("RunState", state), "idle")  # a state the server named


def _load_markdown() -> None:
    from ..tui.widgets import markdown_view  # noqa: F401  (~200 ms of imports)


def _live_choice(data: object) -> str | None:
    """The live session to join: one that is running, else the last opened; None when the
    server has none."""
    rooms = [r for r in data.get("sessions") or [] if isinstance(r, dict)] if isinstance(data, dict) else []
    running = [r for r in rooms if r.get("runState") != "idle"]
    chosen = (running or rooms)[-1] if rooms else None
    return str(chosen["sessionId"]) if chosen is not None else None


def _from_a_row(messages: list[AgentMessage], start: int) -> tuple[list[AgentMessage], int]:
    """``messages`` (from index ``start``) without the tool results they open with, and where
    they then start: a result whose call is further up comes with the page holding that call."""
    results = next((i for i, m in enumerate(messages) if getattr(m, "role", None) != "toolResult"), 0)
    return (messages[results:], start + results) if start and results else (messages, start)


def run_attach_tui(request: StartupRequest, socket_path: Path, session_id: str | None, *,
                   join_live: bool = False, ahead: socket.socket | None = None) -> int:
    """The full-screen app attached to the server on ``socket_path`` (already known to run);
    ``ahead`` as for :class:`RemoteRuntime`: the caller sends it first thing (``send_ahead``);
    without one the app connects and attaches itself."""
    from ..tui import run_tui

    async def connect(on_record: Callable[[Record], None]) -> ServerLink:
        return await ServerLink.unix(socket_path, on_record)

    def runtime(app: WolliApp, startup: StartupRequest) -> RemoteRuntime:
        return RemoteRuntime(app, startup, connect, session_id, join_live=join_live, ahead=ahead)

    return run_tui(request, runtime=runtime)

