"""``wolli serve``: the resident process, its listeners, its live sessions and its life cycle.

It starts the runtime through the one start-up path (extensions, MCP, settings, models),
then accepts clients on its Unix socket and, when asked, on TCP. Each live session has a
:class:`~.rooms.SessionRoom` of attached clients. A session nobody is attached to stays
live while it runs (a prompt in flight finishes and is saved) and is closed when idle; it
is opened again from its file by the next ``attach``. SIGINT/SIGTERM/SIGHUP end the server
cleanly: dialogs cancelled, runs aborted and saved, the socket and ``server.json`` removed.
"""

from __future__ import annotations

import asyncio
import os
import signal
import socket
import ssl
import stat
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...__about__ import __version__
from ...runtime.live.options import SessionOptions
from ...runtime.startup.request import StartupRequest
from ...runtime.startup.start import start
from ..rpc.ui import RpcUI
from .access import INFO_FILE, PROTOCOL_VERSION, ListenAddress, read_info, write_private
from .ahead import HISTORY_TAIL
from .connection import ClientConnection
from .rooms import SessionRoom

if TYPE_CHECKING:
    from ...ai.types import Model
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession


@dataclass
class ServeOptions:
    socket_path: Path
    listen: ListenAddress | None = None
    token: str | None = None  # None: TCP without a token (loopback only)
    tls_cert: str | None = None
    tls_key: str | None = None
    idle_timeout: float = 0.0  # seconds with no client and nothing running; 0: never
    # A TCP client that has not authenticated by then is disconnected.
    auth_deadline: float = 30.0
    # A client that stops reading is cut off once this much output waits for it, so one
    # stalled client never holds the server's memory (or the other clients) hostage.
    write_backlog_limit: int = 32 * 1024 * 1024


class _EveryClient:
    """The sink of the server-wide dialogs (sandbox, MCP): every connected client."""

    def __init__(self, server: ResidentServer) -> None:
        self.server = server

    def send(self, record: dict[str, Any]) -> None:
        for client in list(self.server.clients):
            client.output.send(record)


class ResidentServer:
    def __init__(self, request: StartupRequest, options: ServeOptions) -> None:
        self.request = request
        self.options = options
        self.token = options.token if options.listen is not None else None
        self.auth_deadline = options.auth_deadline
        self.write_backlog_limit = options.write_backlog_limit
        self.ui = RpcUI(_EveryClient(self))  # type: ignore[arg-type]
        self._host: AgentHost | None = None  # once the runtime has started
        self.clients: list[ClientConnection] = []
        self.rooms: dict[str, SessionRoom] = {}
        self._closing: dict[str, asyncio.Task[None]] = {}
        # Opens under way, by the reference asked for: a second attach of the same session
        # while its file is read waits for the first instead of opening it again.
        self._opening: dict[str, asyncio.Task[LiveSession]] = {}
        self._fresh: LiveSession | None = None  # the start-up session, until a client takes it or it goes
        self._listeners: list[asyncio.base_events.Server] = []
        self._stopped = asyncio.Event()
        self._idle_handle: asyncio.TimerHandle | None = None
        self.started = time.time()
        self.tcp_port: int | None = None
        self.model: Model | None = None

    # ------------------------------------------------------------------ life cycle

    async def run(self) -> int:
        loop = asyncio.get_running_loop()
        self.ui.loop = loop
        startup = await start(self.request, ui=self.ui)
        self._host = startup.host
        self.host.session_ui = lambda session: self.room_for(session).ui
        self._fresh = startup.session
        self.model = startup.session.model  # --model: every new session starts with it
        self.host.start_auto_reload()
        if self.host.mcp is not None:
            self.host.mcp.manager.add_listener(
                lambda status: _EveryClient(self).send({"type": "mcp_server_state", "server": status}))
            loop.create_task(self.host.start_mcp(interactive=True))
        for warning in startup.warnings:
            print(f"wolli serve: {warning}", file=sys.stderr, flush=True)
        try:
            await self._listen(loop, read_info(self.host.home))
        except OSError as exc:
            print(f"wolli serve: cannot listen: {exc}", file=sys.stderr, flush=True)
            await self.host.shutdown("quit")
            return 1
        self._write_info()
        self.client_left()  # arms the idle timer
        from ..common.signals import Interrupt

        with Interrupt(self.stop):
            await self._stopped.wait()
        await self._shutdown()
        return 0

    async def _listen(self, loop: asyncio.AbstractEventLoop, running: dict[str, Any] | None) -> None:
        path = self.options.socket_path
        _clear_stale_socket(path, running)
        path.parent.mkdir(parents=True, exist_ok=True)
        old_mask = os.umask(0o177)  # the socket is born 0600: no moment where others may connect
        try:
            unix = await loop.create_unix_server(lambda: ClientConnection(self, "unix"), str(path))
        finally:
            os.umask(old_mask)
        os.chmod(path, 0o600)
        self._listeners.append(unix)
        print(f"wolli serve {__version__}: listening on unix:{path}", flush=True)
        address = self.options.listen
        if address is not None:
            context = None
            if self.options.tls_cert:
                context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
                context.load_cert_chain(self.options.tls_cert, self.options.tls_key)
            tcp = await loop.create_server(lambda: ClientConnection(self, "tcp"), address.host, address.port,
                                           ssl=context, reuse_address=True)
            self._listeners.append(tcp)
            self.tcp_port = tcp.sockets[0].getsockname()[1]
            scheme = "tls" if context is not None else "tcp"
            print(f"wolli serve: listening on {scheme} {address.host}:{self.tcp_port}"
                  + ("" if self.token else " (no token: loopback only)"), flush=True)

    def stop(self) -> None:
        self._stopped.set()

    async def _shutdown(self) -> None:
        for listener in self._listeners:
            listener.close()
        for client in list(self.clients):
            client.stop()
        self.ui.cancel_all()
        for room in list(self.rooms.values()):
            room.close()
        await self.host.shutdown("quit")
        for path in (self.options.socket_path, self.host.home / INFO_FILE):
            try:
                os.unlink(path)
            except OSError:
                pass

    def _write_info(self) -> None:
        import json

        info = {"pid": os.getpid(), "version": __version__, "protocol": PROTOCOL_VERSION,
                "socket": str(self.options.socket_path), "startedAt": self.started,
                "listen": f"{self.options.listen.host}:{self.tcp_port}" if self.options.listen else None}
        write_private(self.host.home / INFO_FILE, json.dumps(info) + "\n")

    def hello(self, *, auth_required: bool) -> dict[str, Any]:
        return {"type": "server_hello", "version": __version__, "protocol": PROTOCOL_VERSION,
                "authRequired": auth_required}

    # ------------------------------------------------------------------ idle timeout

    def client_left(self) -> None:
        """Re-arm the idle timer (a client left, or a session went idle unattended)."""
        timeout = self.options.idle_timeout
        if timeout <= 0:
            return
        if self._idle_handle is not None:
            self._idle_handle.cancel()
        self._idle_handle = asyncio.get_running_loop().call_later(timeout, self._idle_check)

    def _idle_check(self) -> None:
        self._idle_handle = None
        busy = any(not s.is_idle() for s in self.host.resident.values())
        if self.clients or busy:
            self.client_left()
            return
        print("wolli serve: idle timeout, no clients and nothing running; exiting", flush=True)
        self.stop()

    # ------------------------------------------------------------------ sessions

    @property
    def host(self) -> AgentHost:
        if self._host is None:
            raise RuntimeError("the server's runtime has not started yet")
        return self._host

    def room_for(self, session: LiveSession) -> SessionRoom:
        room = self.rooms.get(session.session_id)
        if room is None or room.session is not session:
            room = self.rooms[session.session_id] = SessionRoom(session, asyncio.get_running_loop(), self._room_empty,
                                                                self._room_replaced)
        return room

    async def new_session(self, cwd: str | None) -> LiveSession:
        fresh, self._fresh = self._fresh, None
        folder = os.path.abspath(cwd) if cwd else self.host.cwd
        if fresh is not None and fresh.session_id in self.host.resident and fresh.cwd == folder \
                and not fresh.session_manager.entry_count():
            return fresh
        if not os.path.isdir(folder):
            from ..rpc.commands import CommandError

            raise CommandError(f"attach: {folder} is not a folder")
        options = SessionOptions(cwd=folder, model=self.model,
                                 custom_system_prompt=self.request.system_prompt,
                                 append_system_prompt=self.request.append_system_prompt or "")
        if fresh is not None and fresh.session_id in self.host.resident:
            self._schedule_close(fresh)
        return await self.host.create_session(options)

    async def open_session(self, ref: str, *, cwd: str | None = None) -> LiveSession:
        live = self.host.get_session(ref) or self._resident_by_file(ref) or self._resident_by_prefix(ref)
        if live is not None:
            return live
        for session_id, closing in list(self._closing.items()):  # being closed: let it finish
            if session_id.startswith(ref):
                await closing
        opening = self._opening.get(ref)
        if opening is None:
            # Tail-first: an attaching app is answered from the end of a long history while
            # the rest is built (docs/server.md, "Attaching to a long session").
            opening = asyncio.get_running_loop().create_task(
                self.host.open_session(ref, cwd=cwd or self.host.cwd, context_tail=HISTORY_TAIL))
            self._opening[ref] = opening
            opening.add_done_callback(lambda _: self._opening.pop(ref, None))
        # Shielded: a client that goes away mid-open does not cancel it for the others.
        return await asyncio.shield(opening)

    def _resident_by_prefix(self, ref: str) -> LiveSession | None:
        """The one resident session whose id starts with ``ref``: a new session has no file
        yet, so the host's lookup among saved sessions would not find it by a prefix."""
        prefix = ref.strip().lower()
        found = [s for s in self.host.resident.values() if prefix and s.session_id.startswith(prefix)]
        return found[0] if len(found) == 1 else None

    def _resident_by_file(self, ref: str) -> LiveSession | None:
        """The resident session saved in the file ``ref`` names, if it is one (found without
        reading the file again, as the host would to resolve the reference)."""
        if os.sep not in ref and not ref.endswith(".jsonl"):
            return None
        path = os.path.abspath(os.path.expanduser(ref))
        return next((s for s in self.host.resident.values()
                     if s.session_file is not None and os.path.abspath(s.session_file) == path), None)

    def _room_replaced(self, room: SessionRoom, target_file: str) -> None:
        """The room's session is being replaced by the live session saved in ``target_file``
        (an extension made it): its clients move there, each told with ``session_replaced``.
        Clients that moved on their own (``new_session``...) are not in the room any more."""
        new = next((s for s in self.host.resident.values()
                    if s.session_file == target_file and s is not room.session), None)
        if new is None or not room.clients:
            return
        if self.rooms.get(room.session_id) is room:
            del self.rooms[room.session_id]  # the old session is closing: no second close
        target = self.room_for(new)
        for client in list(room.clients):
            client.join(target)
            client.output.send({"type": "session_replaced", "sessionId": new.session_id,
                                "sessionFile": new.session_file, "previousSessionId": room.session_id})

    def _room_empty(self, room: SessionRoom) -> None:
        session = room.session
        if self.rooms.get(room.session_id) is not room:
            return  # replaced (its session is closing already) or closed
        if room.clients or not session.is_idle():
            return
        self.client_left()
        if session is self._fresh:
            return
        self._schedule_close(session)

    def _schedule_close(self, session: LiveSession) -> None:
        if session.session_id in self._closing:
            return
        room = self.rooms.pop(session.session_id, None)
        if room is not None:
            room.close()

        async def close() -> None:
            try:
                await self.host.close_session(session, "quit")
            finally:
                self._closing.pop(session.session_id, None)

        self._closing[session.session_id] = asyncio.get_running_loop().create_task(close())

    def describe(self) -> dict[str, Any]:
        rooms = [self.room_for(s).describe() for s in self.host.resident.values()
                 if s is not self._fresh or s.session_id in self.rooms and self.rooms[s.session_id].clients]
        return {"server": {"pid": os.getpid(), "version": __version__, "protocol": PROTOCOL_VERSION,
                           "clients": len(self.clients), "startedAt": self.started},
                "sessions": rooms}


def _clear_stale_socket(path: Path, running: dict[str, object] | None) -> None:
    """A socket file left by a server that died is removed. A live server of this version is
    refused; one of another version is upgraded: asked to stop when no client is attached,
    refused (with its clients named) while any is."""
    if not path.exists():
        return
    if not stat.S_ISSOCK(path.lstat().st_mode):  # someone's file: never removed to make room
        raise OSError(f"{path} exists and is not a socket; give --socket another path, or move that file away")
    probe = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        probe.settimeout(2)
        probe.connect(str(path))
    except OSError:
        path.unlink(missing_ok=True)
        return
    finally:
        probe.close()
    who = "a server"
    if running is not None and running.get("socket") == str(path):
        who = f"a wolli {running.get('version')} server (pid {running.get('pid')})"
        if running.get("version") != __version__:
            _upgrade(path, running, who)
            return
    raise OSError(f"{who} already listens on {path} (wolli serve --list shows it and its clients)")


UPGRADE_WAIT_S = 15.0  # how long the old server may take to stop for an upgrade


def _upgrade(path: Path, running: dict[str, object], who: str) -> None:
    """Take over from a server of another version, unless clients are attached to it."""
    from .client import ServerClient, ServerUnavailable

    try:
        client = ServerClient.unix(path)
        try:
            described = client.call({"type": "get_live_sessions"}, timeout=10)
        finally:
            client.close()
    except (ServerUnavailable, RuntimeError, TimeoutError, OSError) as exc:
        raise OSError(f"{who} listens on {path} and did not say who is attached ({exc}); stop it to upgrade") from None
    server = described.get("server") if isinstance(described, dict) else None
    counted = server.get("clients") if isinstance(server, dict) else None
    clients = counted - 1 if isinstance(counted, int) else None  # not counting this question's own connection
    if clients is None or clients > 0:
        raise OSError(f"{who} listens on {path} with {clients} client(s) attached; upgrading it to wolli "
                      f"{__version__} would cut them off. Detach them (wolli serve --list shows them), "
                      "then start this one again")
    pid = running.get("pid")
    if not isinstance(pid, int):
        raise OSError(f"{who} listens on {path}; its pid is unknown, so stop it by hand to upgrade")
    print(f"wolli serve: stopping {who} (no client attached) to upgrade to {__version__}", flush=True)
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        pass
    deadline = time.monotonic() + UPGRADE_WAIT_S
    while path.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    if path.exists():
        raise OSError(f"{who} did not stop within {UPGRADE_WAIT_S:.0f}s; stop it by hand to upgrade")


def run_serve(request: StartupRequest, options: ServeOptions) -> int:
    from ..common.run import run_sync

    return run_sync(ResidentServer(request, options).run())


