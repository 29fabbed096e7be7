"""An asyncio connection to ``wolli serve`` for clients that live on an event loop (the
full-screen app attached to a server, the browser front).

Records that answer a command resolve that command's future; every other record (events,
dialogs, ``extension_ui_closed``) goes to ``on_record`` in the order it arrived. When the
connection ends, every pending command fails with :class:`ServerUnavailable` and ``closed``
is set, so the owner can reconnect.
"""

from __future__ import annotations

import asyncio
import itertools
import socket
import ssl
from collections.abc import Callable
from pathlib import Path
from typing import TypeAlias

from ..common.framing import LineSplitter, OversizedRecord, decode_record, encode_record
from .access import PROTOCOL_VERSION
from .client import ServerUnavailable

Record: TypeAlias = dict[str, object]
HELLO_TIMEOUT_S = 15.0


class RemoteError(RuntimeError):
    """The server answered a command with an error (the message is the server's)."""


class _Reader(asyncio.Protocol):
    def __init__(self, link: ServerLink) -> None:
        self.link = link
        self.splitter = LineSplitter()

    def data_received(self, data: bytes) -> None:
        for line in self.splitter.feed(data):
            self.link._take(line)

    def eof_received(self) -> bool:
        for line in self.splitter.finish():
            self.link._take(line)
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        self.link._lost()


class ServerLink:
    def __init__(self, on_record: Callable[[Record], None]) -> None:
        self.on_record = on_record
        self.transport: asyncio.Transport | None = None
        self.hello: Record | None = None
        self.closed = asyncio.Event()
        self._hello = asyncio.get_running_loop().create_future()
        self._pending: dict[str, asyncio.Future[object]] = {}
        self._ids = itertools.count(1)

    @classmethod
    async def unix(cls, path: str | Path, on_record: Callable[[Record], None]) -> ServerLink:
        link = cls(on_record)
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await asyncio.wait_for(loop.create_unix_connection(lambda: _Reader(link), str(path)), 5.0)
        except (OSError, TimeoutError) as exc:
            raise ServerUnavailable(f"no server answers on {path}: {getattr(exc, 'strerror', None) or exc}") from None
        await link._greeted(transport)
        return link

    @classmethod
    async def adopt(cls, sock: socket.socket, on_record: Callable[[Record], None],
                    sent: str) -> tuple[ServerLink, asyncio.Future[object]]:
        """A Unix-socket connection opened before the loop ran, on which the command with id
        ``sent`` was already written: the link, and the future its response resolves."""
        link = cls(on_record)
        answer: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        link._pending[sent] = answer  # before the first read: the response may be waiting
        try:
            transport, _ = await asyncio.get_running_loop().create_unix_connection(lambda: _Reader(link), sock=sock)
        except OSError as exc:
            sock.close()
            raise ServerUnavailable(f"the server connection broke: {exc.strerror or exc}") from None
        await link._greeted(transport)
        return link, answer

    @classmethod
    async def tcp(cls, host: str, port: int, token: str | None, on_record: Callable[[Record], None], *,
                  tls: ssl.SSLContext | None = None) -> ServerLink:
        link = cls(on_record)
        loop = asyncio.get_running_loop()
        try:
            transport, _ = await asyncio.wait_for(
                loop.create_connection(lambda: _Reader(link), host, port, ssl=tls), 5.0)
        except (OSError, TimeoutError) as exc:
            raise ServerUnavailable(f"no server answers on {host}:{port}: {getattr(exc, 'strerror', None) or exc}") from None
        assert isinstance(transport, asyncio.Transport)
        link.transport = transport
        auth = link._send_command({"type": "auth", "token": token or ""})  # over TCP the client speaks first
        await link._greeted(transport)
        await link._await(auth, 15.0)
        return link

    async def _greeted(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        try:
            hello = await asyncio.wait_for(asyncio.shield(self._hello), HELLO_TIMEOUT_S)
        except TimeoutError:
            self.close()
            raise ServerUnavailable("the other end is not a wolli server (no server_hello)") from None
        if hello.get("protocol") != PROTOCOL_VERSION:
            self.close()
            raise ServerUnavailable(
                f"the server runs wolli {hello.get('version')} (protocol {hello.get('protocol')}); this client "
                f"speaks protocol {PROTOCOL_VERSION}: restart the server with this version")
        self.hello = hello

    # ------------------------------------------------------------------ records

    def _take(self, line: bytes) -> None:
        if isinstance(line, OversizedRecord):
            return
        try:
            value = decode_record(line)
        except ValueError:
            return
        if not isinstance(value, dict):
            return
        if not self._hello.done():
            if value.get("type") == "server_hello":
                self._hello.set_result(value)
                return
        if value.get("type") == "response":
            future = self._pending.pop(str(value.get("id")), None)
            if future is not None and not future.done():
                if value.get("success"):
                    future.set_result(value.get("data"))
                else:
                    future.set_exception(RemoteError(str(value.get("error"))))
                return
        self.on_record(value)

    def _lost(self) -> None:
        self.closed.set()
        if not self._hello.done():
            self._hello.set_exception(ServerUnavailable("the server closed the connection"))
        for future in self._pending.values():
            if not future.done():
                future.set_exception(ServerUnavailable("the server went away"))
        self._pending.clear()

    # ------------------------------------------------------------------ commands

    def send(self, record: Record) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(encode_record(record))

    def _send_command(self, command: Record) -> asyncio.Future[object]:
        request_id = f"l{next(self._ids)}"
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        if self.closed.is_set():
            future.set_exception(ServerUnavailable("the server went away"))
            return future
        self._pending[request_id] = future
        self.send({**command, "id": request_id})
        return future

    @staticmethod
    async def _await(future: asyncio.Future[object], timeout: float | None) -> object:
        return await asyncio.wait_for(future, timeout)

    async def call(self, command: Record, timeout: float | None = 60.0) -> object:
        """Send ``command``; its response's data (:class:`RemoteError` when it failed)."""
        return await self._await(self._send_command(command), timeout)

    def close(self) -> None:
        if self.transport is not None:
            self.transport.close()
