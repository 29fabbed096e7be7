"""One client of ``wolli serve``: a socket carrying the RPC protocol, plus the server's own
commands (``auth``, ``attach``, ``detach``, ``get_live_sessions``).

Over TCP the first line must be ``{"type": "auth", "token": T}``; anything else, or a wrong
token, is answered with an error and the connection is closed. Before ``attach`` only the
server's own commands apply. The session-replacing commands move *this* client: ``new_session``,
``switch_session``, ``fork`` and ``clone`` attach it to the new (or opened) session, and the
clients of the old one stay where they are.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ...agent.events import to_jsonable
from ...runtime.live.options import SessionOptions
from ..common.framing import OversizedRecord, decode_record, encode_record
from ..rpc import queries
from ..rpc.commands import CommandError, CommandSpec, Reply, get_messages
from ..rpc.core import RpcCore
from . import websocket
from .access import token_matches
from .rooms import SessionRoom

if TYPE_CHECKING:
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession
    from ...runtime.startup.request import StartupRequest
    from ..rpc.ui import RpcUI


class ResidentServer(Protocol):
    """What a connection needs of the server (``serve.ResidentServer``)."""

    request: StartupRequest
    ui: RpcUI
    token: str | None
    clients: list[ClientConnection]
    auth_deadline: float  # seconds a TCP client has to authenticate
    write_backlog_limit: int  # bytes of unread output after which a client is cut off

    @property
    def host(self) -> AgentHost: ...

    def hello(self, *, auth_required: bool) -> dict[str, Any]: ...

    def client_left(self) -> None: ...

    def room_for(self, session: LiveSession) -> SessionRoom: ...

    async def new_session(self, cwd: str | None) -> LiveSession: ...

    async def open_session(self, ref: str, *, cwd: str | None = None) -> LiveSession: ...

    def describe(self) -> dict[str, Any]: ...

# Commands that need no session (everything else needs ``attach`` first).
SESSIONLESS = {"auth", "attach", "detach", "get_live_sessions"}
_ids = itertools.count(1)


_last_line: tuple[object, bytes] | None = None


def encoded_line(record: object) -> bytes:
    """``record`` as a JSON line, encoded once for all the clients of a room: the room hands
    the same record object to each of them, one after the other."""
    global _last_line
    last = _last_line
    if last is not None and last[0] is record:
        return last[1]
    data = encode_record(record)
    _last_line = (record, data)
    return data


class SocketSink:
    """Records to one socket, from the loop or from a tool's worker thread.

    Records written during one turn of the loop go out in one write (a streamed answer is
    one record per token: per client that is one system call per loop turn instead of one
    per token, which is most of what a second attached client costs)."""

    def __init__(self, transport: asyncio.Transport, loop: asyncio.AbstractEventLoop, backlog_limit: int) -> None:
        self.transport = transport
        self.loop = loop
        self.backlog_limit = backlog_limit
        self.thread = threading.get_ident()
        self.closed = False
        self.encode: Callable[[object], bytes] = encoded_line  # a JSON line; a WebSocket message
        self._pending: list[bytes] = []

    def send(self, record: object) -> None:
        if self.closed:
            return
        self.send_raw(self.encode(record))

    def send_raw(self, data: bytes) -> None:
        if self.closed:
            return
        if threading.get_ident() == self.thread:
            self._queue(data)
        else:
            try:
                self.loop.call_soon_threadsafe(self._queue, data)
            except RuntimeError:  # the loop has ended: the server is going away
                self.closed = True

    def _queue(self, data: bytes) -> None:
        if not self._pending:
            self.loop.call_soon(self._flush)
        self._pending.append(data)

    def _flush(self) -> None:
        pending, self._pending = self._pending, []
        if not pending:
            return
        if self.transport.is_closing():
            self.closed = True
            return
        self.transport.write(b"".join(pending) if len(pending) > 1 else pending[0])
        if self.transport.get_write_buffer_size() > self.backlog_limit:
            self.closed = True
            print("wolli serve: a client stopped reading its output; it was disconnected", file=sys.stderr)
            self.transport.abort()

    def close(self) -> None:
        """Close once what was written has gone out."""
        self._flush()
        self.closed = True
        self.transport.close()


class ClientConnection(RpcCore, asyncio.Protocol):
    def __init__(self, server: ResidentServer, kind: str) -> None:
        super().__init__(server.request, _Unconnected(), server.ui)
        self.server = server
        self.host = server.host
        self.kind = kind  # "unix" or "tcp"
        self.client_id = next(_ids)
        self.authenticated = kind == "unix"  # the socket file is the owner's alone
        self.room: SessionRoom | None = None
        self.peer = ""
        # How records are framed: JSON lines, or WebSocket messages; over TCP the first
        # bytes decide (``GET `` opens a WebSocket handshake).
        self.framing: str | None = "lines" if kind == "unix" else None
        self._head = bytearray()
        self._frames = websocket.FrameReader()
        # Attached while the session's context was still being built: the first message this
        # client was sent and the index it was told (``historyStart``); ``get_messages``
        # corrects the client's indexes by where that message really is (see _history_shift).
        self._history_anchor: tuple[Any, int] | None = None
        self.own_commands = {
            "auth": CommandSpec("auth", "query", _auth),
            "attach": CommandSpec("attach", "ordered", _attach),
            "detach": CommandSpec("detach", "ordered", _detach),
            "get_live_sessions": CommandSpec("get_live_sessions", "query", _live_sessions),
            "get_messages": CommandSpec("get_messages", "query", _get_messages),
            "new_session": CommandSpec("new_session", "ordered", _new_session),
            "switch_session": CommandSpec("switch_session", "ordered", _switch_session),
            "fork": CommandSpec("fork", "ordered", _fork),
            "clone": CommandSpec("clone", "ordered", _clone),
            "clear_queue": CommandSpec("clear_queue", "at_once", _clear_queue),
        }

    @property
    def session(self) -> LiveSession | None:
        return self.room.session if self.room is not None else None

    # ------------------------------------------------------------------ the socket

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        loop = asyncio.get_running_loop()
        self.output = SocketSink(transport, loop, self.server.write_backlog_limit)
        peer = transport.get_extra_info("peername")
        self.peer = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) else "local"
        self.server.clients.append(self)
        self.start_intake()
        if self.framing is not None:
            self._greet()
        if not self.authenticated:
            loop.call_later(self.server.auth_deadline, self._auth_deadline)

    def _greet(self) -> None:
        self.output.send(self.server.hello(auth_required=not self.authenticated))

    def _auth_deadline(self) -> None:
        if not self.authenticated and not self.stopping:
            self.fail(None, "auth", f"no auth within {self.server.auth_deadline:g}s; closing the connection")
            self.stop()

    def data_received(self, data: bytes) -> None:
        if self.framing == "lines":
            self.feed(data)
        elif self.framing == "websocket":
            self._websocket_data(data)
        else:
            self._decide_framing(data)

    def _decide_framing(self, data: bytes) -> None:
        head = self._head
        head += data
        if not head.startswith(b"GET "):
            if b"GET ".startswith(bytes(head)):
                return  # too early to tell
            self.framing = "lines"
            self._greet()
            self.feed(bytes(head))
            head.clear()
            return
        end = head.find(b"\r\n\r\n")
        if end < 0:
            if len(head) > websocket.HEAD_LIMIT:
                self._refuse_handshake(websocket.HandshakeError("431 Request Header Fields Too Large",
                                                                "the request head is too long"))
            return
        assert isinstance(self.output, SocketSink)
        try:
            answer = websocket.accept(bytes(head[:end]))
        except websocket.HandshakeError as exc:
            self._refuse_handshake(exc)
            return
        rest = bytes(head[end + 4:])
        head.clear()
        self.output.send_raw(answer)
        self.framing = "websocket"
        self.kind = "websocket"
        self.output.encode = lambda record: websocket.frame(encoded_line(record)[:-1])
        self._greet()
        if rest:
            self._websocket_data(rest)

    def _refuse_handshake(self, error: websocket.HandshakeError) -> None:
        assert isinstance(self.output, SocketSink)
        self.output.send_raw(websocket.refusal(error))
        self.stop()

    def _websocket_data(self, data: bytes) -> None:
        assert isinstance(self.output, SocketSink)
        try:
            messages = self._frames.feed(data)
        except websocket.ProtocolError as exc:
            self._close_websocket(exc.code, str(exc))
            return
        for opcode, payload in messages:
            if self.stopping:
                return
            if opcode in (websocket.TEXT, websocket.BINARY):
                self.take_line(payload)
            elif opcode == websocket.PING:
                self.output.send_raw(websocket.frame(payload, websocket.PONG))
            elif opcode == websocket.CLOSE:
                self._close_websocket(1000, "")
                return

    def _close_websocket(self, code: int, reason: str) -> None:
        assert isinstance(self.output, SocketSink)
        self.output.send_raw(websocket.frame(code.to_bytes(2, "big") + reason.encode()[:120], websocket.CLOSE))
        self.stop()

    def eof_received(self) -> bool:
        self.feed(b"")
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.stop()

    def stop(self) -> None:
        """The client went away (or was sent away): its session runs on without it."""
        if self.stopping:
            return
        self.stopping = True
        self.end_intake("the client disconnected")
        self._leave()
        if self in self.server.clients:
            self.server.clients.remove(self)
        if isinstance(self.output, SocketSink):
            self.output.close()
        self.server.client_left()

    def _leave(self, *, moving: bool = False) -> None:
        room, self.room = self.room, None
        self.ui = self.server.ui
        if room is not None:
            room.leave(self, moving=moving)

    def join(self, room: SessionRoom) -> None:
        if room is self.room:
            return
        self._history_anchor = None
        self._leave(moving=True)
        self.room = room
        self.ui = room.ui
        room.join(self)

    def describe(self) -> dict[str, Any]:
        return {"clientId": self.client_id, "transport": self.kind, "peer": self.peer}

    # ------------------------------------------------------------------ a session still loading

    def on_event(self, event: Any, record: dict[str, Any] | None = None) -> None:
        if self._history_anchor is not None and event.type in _CONTEXT_REPLACED:  # its indexes start over
            self._history_anchor = None
        super().on_event(event, record)

    def holds_commands(self) -> bool:
        """A session opened tail-first answers ``attach`` from its tail; every later command
        waits for the whole context (a second or so for a very long session, ~70 ms for
        2,000 pairs), so none sees half a conversation."""
        session = self.session
        return session is not None and session.context_pending

    async def before_command(self, spec: CommandSpec) -> None:
        session = self.session
        if session is not None and spec.name != "attach":
            await session.context_ready()

    def history_shift(self) -> int:
        """How far this client's message indexes are from the server's: non-zero only when it
        attached before the context was built and the index's count of the older messages
        (``historyStart``) missed one the build added or dropped (a damaged line, a tool call
        left without its result far back)."""
        anchor, session = self._history_anchor, self.session
        if anchor is None or session is None:
            return 0
        message, told = anchor
        found = next((index for index, known in enumerate(session.messages) if known is message), None)
        if found is None:  # the context was replaced since (a compaction): nothing to correct
            self._history_anchor = None
            return 0
        if found == told:
            self._history_anchor = None  # right all along; later messages only append
        return found - told

    # ------------------------------------------------------------------ what may be sent

    def handle_line(self, line: bytes) -> None:
        if not self.authenticated and (line.strip() or isinstance(line, OversizedRecord)) and not _is_command(line):
            # Before auth, a line that is no command at all gets its error and the
            # connection ends, as any other first line but auth does (docs/server.md).
            asyncio.get_running_loop().call_soon(self.stop)
        super().handle_line(line)

    def refuse(self, kind: str, command: dict[str, Any]) -> str | None:
        if not self.authenticated and kind != "auth":
            asyncio.get_running_loop().call_soon(self.stop)
            return 'authenticate first: the first line over TCP is {"type": "auth", "token": "..."}'
        if self.room is None and kind not in SESSIONLESS:
            return ('attach to a session first: {"type": "attach", "new": true} or '
                    '{"type": "attach", "sessionId": "..."} (get_live_sessions lists them)')
        return None

    def answer_dialog(self, response: dict[str, Any]) -> None:
        room = self.room
        if room is not None and response.get("id") in room.ui.open_requests:
            room.ui.answer(response)
        else:
            self.server.ui.answer(response)  # a dialog of the whole server (sandbox, MCP)


def _is_command(line: bytes) -> bool:
    try:
        return isinstance(decode_record(line), dict)
    except ValueError:
        return False


class _Unconnected:
    def send(self, record: object) -> None:  # nothing is written before the socket is there
        pass


# ---------------------------------------------------------------------------- the server's commands


def _auth(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    expected = client.server.token
    if client.authenticated:
        return {"authenticated": True}
    if expected is None or token_matches(expected, cmd.get("token")):
        client.authenticated = True
        return {"authenticated": True}
    asyncio.get_running_loop().call_soon(client.stop)
    raise CommandError("wrong token (see docs/server.md for where the server stores it); closing the connection")


async def _attach(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    session_id = cmd.get("sessionId")
    if cmd.get("new") is True:
        cwd = cmd.get("cwd")
        if cwd is not None and not isinstance(cwd, str):
            raise CommandError("attach: 'cwd' must be a string (a folder path)")
        session = await client.server.new_session(cwd)
    elif isinstance(session_id, str) and session_id:
        try:
            session = await client.server.open_session(session_id)
        except (OSError, ValueError, LookupError) as exc:
            raise CommandError(f"attach: no session {session_id!r}: {exc}") from None
    else:
        raise CommandError('attach needs \'sessionId\' (a string) or \'new\': true')
    limit = cmd.get("historyLimit")
    if limit is not None and (not isinstance(limit, int) or isinstance(limit, bool) or limit < 0):
        raise CommandError("attach: 'historyLimit' must be a whole number >= 0 (messages sent with the response)")
    if session.context_pending and (limit is None or limit > len(session.messages)):
        await session.context_ready()  # more than the tail was asked for
    return _attached(client, session, limit)


def _session_of(client: ClientConnection) -> LiveSession:
    """The client's session (the commands that use it are refused before ``attach``)."""
    session = client.session
    if session is None:
        raise CommandError("attach to a session first")
    return session


def _attached(client: ClientConnection, session: LiveSession, history_limit: int | None) -> dict[str, Any]:
    """The attach response. With ``history_limit`` only the history's tail is sent
    (``historyStart`` says where it begins): a client draws the screen from it and pages the
    rest with ``get_messages`` ``end``, rather than wait for a long history to cross the socket."""
    client.join(client.server.room_for(session))
    start = 0 if history_limit is None else queries.history_tail_start(session, history_limit)
    data = {"sessionId": session.session_id, "sessionFile": session.session_file, "cwd": session.cwd,
            "state": queries.session_state(session), "messages": queries.messages(session, start),
            "clients": len(client.room.clients) if client.room is not None else 1}
    if history_limit is not None:
        data["historyStart"] = session.older_messages + start
    if session.context_pending:  # answered from the tail: the rest is built once this is sent
        if start < len(session.messages):
            client._history_anchor = (session.messages[start], session.older_messages + start)
        _finish_context_soon(client, session)
    streaming = session.agent.state.stream_message
    if streaming is not None:  # the answer in flight so far; its next deltas follow this response
        data["streamMessage"] = to_jsonable(streaming)
    room = client.room
    if room is not None and room.running_tools:  # their updates and ends follow this response
        data["runningTools"] = [to_jsonable(tool) for tool in room.running_tools.values()]
    return data


# Events after which a session's messages are another list (clients fetch it again).
_CONTEXT_REPLACED = frozenset({"compaction_end", "session_tree", "session_start"})


def _finish_context_soon(client: ClientConnection, session: LiveSession) -> None:
    """Build the rest of a tail-first session's context after the running command's response
    is written (its worker thread would otherwise compete with writing it). The build is
    shielded: this client going away does not stop it."""
    asyncio.get_running_loop().call_soon(lambda: client.background(session.context_ready()))


def _get_messages(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    """The protocol's ``get_messages``, with ``start``/``end`` in the client's count
    (:meth:`ClientConnection.history_shift`)."""
    if "start" not in cmd and "end" not in cmd:
        client._history_anchor = None  # it takes the whole list: it counts as the server does
        return get_messages(client, cmd)  # type: ignore[arg-type]
    shift = client.history_shift()
    if shift:
        cmd = {**cmd, **{key: max(0, value + shift) for key in ("start", "end")
                         if isinstance(value := cmd.get(key), int) and not isinstance(value, bool) and value >= 0}}
    return get_messages(client, cmd)  # type: ignore[arg-type]


async def _detach(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    client._leave()
    return {"detached": True}


def _live_sessions(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    return client.server.describe()


async def _new_session(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    parent = cmd.get("parentSession")
    if parent is not None and not isinstance(parent, str):
        raise CommandError("new_session: 'parentSession' must be a string")
    old = _session_of(client)
    options = SessionOptions(cwd=old.cwd, model=old.model, thinking_level=old.thinking_level,
                             active_tools=list(old.active_tool_names), parent_session=parent,
                             persist=old.session_file is not None)
    session = await client.host.create_session(options)
    client.join(client.server.room_for(session))
    return {"cancelled": False}


async def _switch_session(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    path = cmd.get("sessionPath")
    if not isinstance(path, str) or not path:
        raise CommandError("switch_session needs 'sessionPath' (a string)")
    try:
        session = await client.server.open_session(path, cwd=_session_of(client).cwd)
    except (OSError, ValueError, LookupError) as exc:
        raise CommandError(f"switch_session: cannot open {path}: {exc}") from None
    client.join(client.server.room_for(session))
    if session.context_pending:
        _finish_context_soon(client, session)
    return {"cancelled": False}


async def _fork_to(client: ClientConnection, entry_id: str | None, kind: str) -> None:
    """Move this client to a new session holding the branch up to ``entry_id``; the others
    stay on the original. A running session is not forked under its other clients."""
    origin = _session_of(client)
    if not origin.is_idle():
        raise CommandError(f"{kind}: the session is running; abort it (or wait for it) first")
    if entry_id is None:
        options = SessionOptions(cwd=origin.cwd, model=origin.model, thinking_level=origin.thinking_level,
                                 parent_session=origin.session_file, persist=origin.session_file is not None)
        session = await client.host.create_session(options)
    else:
        session = await client.host.fork_session(entry_id, source=origin, replace=False)
    client.join(client.server.room_for(session))


async def _fork(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    entry_id = cmd.get("entryId")
    session = _session_of(client)
    choices = {m["entryId"]: m["text"] for m in queries.fork_messages(session)}
    if not isinstance(entry_id, str) or entry_id not in choices:
        raise CommandError(f"fork: {entry_id!r} is not a user message of the current branch (see get_fork_messages)")
    entry = session.session_manager.get_entry(entry_id)
    if entry is None:
        raise CommandError(f"fork: no entry {entry_id!r}")
    await _fork_to(client, entry.parent_id, "fork")
    return {"text": choices[entry_id], "cancelled": False}


async def _clone(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    await _fork_to(client, _session_of(client).session_manager.get_leaf_id(), "clone")
    return {"cancelled": False}


async def _clear_queue(client: ClientConnection, cmd: dict[str, Any]) -> Reply:
    """Take the queued steering and follow-up messages back (Esc in an attached app puts
    them into its editor)."""
    steering, follow_up = _session_of(client).clear_queue()
    return {"steering": steering, "followUp": follow_up}
