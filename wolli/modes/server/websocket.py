"""WebSocket (RFC 6455) for browsers: the opening handshake and the frames, nothing else.

One protocol record per WebSocket text message (no newline). The handshake refuses a
cross-site page: when the browser sends an ``Origin`` header, its host must be the ``Host``
the page connected to (a page on another site must not drive a loopback server). Messages
are limited like JSON lines (:data:`~..common.framing.RECORD_LIMIT`).
"""

from __future__ import annotations

import base64
import hashlib
import struct
from urllib.parse import urlsplit

from ..common.framing import RECORD_LIMIT

GUID = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
HEAD_LIMIT = 16 * 1024  # the longest handshake read
TEXT, BINARY, CLOSE, PING, PONG, CONTINUATION = 0x1, 0x2, 0x8, 0x9, 0xA, 0x0


class HandshakeError(ValueError):
    """Not a WebSocket opening handshake this server accepts; ``status`` says how to answer."""

    def __init__(self, status: str, message: str) -> None:
        super().__init__(message)
        self.status = status


class ProtocolError(ValueError):
    """A frame that breaks RFC 6455 (the connection is closed with 1002 or 1009)."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code


def accept(head: bytes) -> bytes:
    """The ``101 Switching Protocols`` answer to a request head (up to its blank line)."""
    lines = head.decode("latin-1").split("\r\n")
    method, _, rest = lines[0].partition(" ")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        name, sep, value = line.partition(":")
        if sep:
            headers[name.strip().lower()] = value.strip()
    if method != "GET" or "websocket" not in headers.get("upgrade", "").lower():
        raise HandshakeError("400 Bad Request", "this is a wolli server: connect with a WebSocket, or send "
                             "JSON lines over plain TCP (docs/server.md)")
    if headers.get("sec-websocket-version") != "13" or not headers.get("sec-websocket-key"):
        raise HandshakeError("426 Upgrade Required", "WebSocket version 13 with a Sec-WebSocket-Key is required")
    origin = headers.get("origin")
    if origin is not None and urlsplit(origin).netloc.lower() != headers.get("host", "").lower():
        raise HandshakeError("403 Forbidden", f"a page from {origin} may not connect to this server")
    digest = hashlib.sha1((headers["sec-websocket-key"] + GUID).encode()).digest()
    return ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
            f"Sec-WebSocket-Accept: {base64.b64encode(digest).decode()}\r\n\r\n").encode()


def refusal(error: HandshakeError) -> bytes:
    body = (str(error) + "\n").encode()
    return (f"HTTP/1.1 {error.status}\r\nContent-Type: text/plain; charset=utf-8\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n").encode() + body


def frame(payload: bytes, opcode: int = TEXT) -> bytes:
    """A server's frame (unmasked, final)."""
    size = len(payload)
    if size < 126:
        head = struct.pack("!BB", 0x80 | opcode, size)
    elif size < 1 << 16:
        head = struct.pack("!BBH", 0x80 | opcode, 126, size)
    else:
        head = struct.pack("!BBQ", 0x80 | opcode, 127, size)
    return head + payload


class FrameReader:
    """Feed it bytes; it returns whole messages as ``(opcode, payload)`` (fragments joined)."""

    def __init__(self, limit: int = RECORD_LIMIT) -> None:
        self._buffer = bytearray()
        self._parts: list[bytes] = []
        self._opcode: int | None = None
        self.limit = limit

    def feed(self, data: bytes) -> list[tuple[int, bytes]]:
        self._buffer += data
        out: list[tuple[int, bytes]] = []
        while True:
            parsed = self._one()
            if parsed is None:
                return out
            final, opcode, payload = parsed
            if opcode >= 0x8:  # control frames come whole, even between fragments
                if not final or len(payload) > 125:
                    raise ProtocolError(1002, "a control frame must be final and at most 125 bytes")
                out.append((opcode, payload))
                continue
            if opcode == CONTINUATION:
                if self._opcode is None:
                    raise ProtocolError(1002, "a continuation frame without a message to continue")
            elif self._opcode is not None:
                raise ProtocolError(1002, "a new message began before the last one ended")
            else:
                self._opcode = opcode
            self._parts.append(payload)
            if sum(len(p) for p in self._parts) > self.limit:
                raise ProtocolError(1009, "the message is too long")
            if final:
                out.append((self._opcode, b"".join(self._parts)))
                self._parts, self._opcode = [], None

    def _one(self) -> tuple[bool, int, bytes] | None:
        buffer = self._buffer
        if len(buffer) < 2:
            return None
        first, second = buffer[0], buffer[1]
        if first & 0x70:
            raise ProtocolError(1002, "reserved bits are set (no extension was agreed)")
        if not second & 0x80:
            raise ProtocolError(1002, "a client's frames must be masked")
        size, offset = second & 0x7F, 2
        if size == 126:
            if len(buffer) < 4:
                return None
            size, offset = struct.unpack_from("!H", buffer, 2)[0], 4
        elif size == 127:
            if len(buffer) < 10:
                return None
            size, offset = struct.unpack_from("!Q", buffer, 2)[0], 10
        if size > self.limit:
            raise ProtocolError(1009, "the message is too long")
        if len(buffer) < offset + 4 + size:
            return None
        mask = bytes(buffer[offset:offset + 4])
        start = offset + 4
        data = bytes(buffer[start:start + size])
        del buffer[:start + size]
        if size:  # unmask four bytes at a time through one big integer
            repeated = (mask * (size // 4 + 1))[:size]
            data = (int.from_bytes(data, "big") ^ int.from_bytes(repeated, "big")).to_bytes(size, "big")
        return bool(first & 0x80), first & 0x0F, data
