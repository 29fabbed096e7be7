"""The sandbox's door to the network: a small HTTP(S) proxy on a Unix socket.

A confined command has no network but its own loopback; the bridge inside passes each of
its connections to this proxy, which reads the request head (bounded) and

- ``CONNECT host:port`` (HTTPS and any TLS): opens a TCP connection if the host may be
  reached, answers ``200``, then copies bytes both ways (it never sees inside TLS);
- ``GET http://host/...`` and the other methods in absolute form (plain HTTP): the same,
  passing the request on;
- anything else, or a host that may not be reached: ``403`` with a line saying why.

Whether a host may be reached is :class:`DomainPolicy` (the allowed list: ``example.com``
also covers its subdomains, ``*.example.com`` only them) and, for hosts not listed, the
``decide`` callback (the user's answer). IP addresses are hosts like any other: only an
entry that names the address allows it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import tempfile
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

MAX_HEAD = 64 * 1024
CONNECT_TIMEOUT_S = 15.0
Decide = Callable[[str, int], Awaitable[bool]]


@dataclass
class DomainPolicy:
    allowed: list[str] = field(default_factory=list)

    def allows(self, host: str) -> bool:
        host = host.lower().rstrip(".")
        for entry in self.allowed:
            pattern = entry.strip().lower().rstrip(".")
            if not pattern:
                continue
            if pattern == "*":
                return True
            if pattern.startswith("*."):
                if host.endswith(pattern[1:]):
                    return True
            elif host == pattern or host.endswith("." + pattern):
                return True
        return False


def parse_target(head: bytes) -> tuple[str, str, int, bytes] | None:
    """(method, host, port, request head for the server) of a proxied request, or None."""
    try:
        line, _, rest = head.partition(b"\r\n")
        method, target, version = line.decode("latin-1").split(" ")
    except ValueError:
        return None
    if method == "CONNECT":
        host, sep, port = target.rpartition(":")
        if not sep or not port.isdigit():
            return None
        return method, host.strip("[]"), int(port), b""
    if not target.lower().startswith("http://"):
        return None
    authority, _, path = target[7:].partition("/")
    host, sep, port = authority.rpartition(":")
    if not sep or not port.isdigit():
        host, port = authority, "80"
    origin = f"{method} /{path} {version}\r\n".encode("latin-1") + rest
    return method, host.strip("[]"), int(port), origin


class NetworkProxy:
    def __init__(self, policy: DomainPolicy, decide: Decide | None = None) -> None:
        self.policy = policy
        self.decide = decide
        self.folder = tempfile.mkdtemp(prefix="wolli-sandbox-")
        os.chmod(self.folder, 0o700)
        self.path = os.path.join(self.folder, "proxy.sock")
        self._server: asyncio.AbstractServer | None = None
        self._answers: dict[str, asyncio.Future[bool]] = {}
        # Every host asked about and what came of it, for the record and tests.
        self.log: list[tuple[str, int, bool]] = []

    async def start(self) -> None:
        if self._server is None:
            self._server = await asyncio.start_unix_server(self._client, path=self.path)
            os.chmod(self.path, 0o600)

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        with contextlib.suppress(OSError):
            os.unlink(self.path)
        with contextlib.suppress(OSError):
            os.rmdir(self.folder)

    async def allowed(self, host: str, port: int) -> bool:
        if self.policy.allows(host):
            return True
        if self.decide is None:
            return False
        key = host.lower()
        pending = self._answers.get(key)
        if pending is None:  # one question per host, however many connections wait for it
            pending = self._answers[key] = asyncio.ensure_future(self.decide(host, port))
        try:
            return bool(await asyncio.shield(pending))
        except Exception:
            return False

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            try:
                head = await reader.readuntil(b"\r\n\r\n")
            except (asyncio.LimitOverrunError, asyncio.IncompleteReadError):
                await _refuse(writer, 400, "a request head Wolli's sandbox proxy could not read")
                return
            if len(head) > MAX_HEAD:
                await _refuse(writer, 431, "request head too large")
                return
            target = parse_target(head)
            if target is None:
                await _refuse(writer, 400, "only CONNECT and absolute http:// requests go through this proxy")
                return
            method, host, port, forward = target
            ok = await self.allowed(host, port)
            self.log.append((host, port, ok))
            if not ok:
                await _refuse(writer, 403, f"Wolli's sandbox does not allow connections to {host} "
                                           "(settings sandbox.network.allowedDomains)")
                return
            try:
                up_reader, up_writer = await asyncio.wait_for(asyncio.open_connection(host, port), CONNECT_TIMEOUT_S)
            except (OSError, TimeoutError) as exc:
                await _refuse(writer, 502, f"cannot reach {host}:{port} ({exc})")
                return
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection Established\r\n\r\n")
                await writer.drain()
            else:
                up_writer.write(forward)
            await asyncio.gather(_copy(reader, up_writer), _copy(up_reader, writer))
        except (ConnectionError, OSError):
            pass
        finally:
            writer.close()


async def _refuse(writer: asyncio.StreamWriter, status: int, why: str) -> None:
    body = (why + "\n").encode("utf-8")
    reason = {400: "Bad Request", 403: "Forbidden", 431: "Request Header Fields Too Large", 502: "Bad Gateway"}
    writer.write(f"HTTP/1.1 {status} {reason.get(status, 'Error')}\r\nContent-Type: text/plain\r\n"
                 f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode("latin-1") + body)
    with contextlib.suppress(ConnectionError, OSError):
        await writer.drain()


async def _copy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            data = await reader.read(65536)
            if not data:
                break
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(ConnectionError, OSError, RuntimeError):
            if writer.can_write_eof():
                writer.write_eof()
