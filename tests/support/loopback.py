"""A real HTTP/1.1 server on 127.0.0.1 that replays scripted responses.

Providers are tested against it exactly as against the real APIs: the client opens a TCP
connection, sends its JSON body, and reads a chunked response written in small random
pieces (split inside lines, inside UTF-8 characters, between ``\\r`` and ``\\n``). A
response can be cut mid-body (the socket closes without the final chunk) to exercise the
dropped-connection path. Every request is recorded for assertions on what was sent.
"""

from __future__ import annotations

import json
import random
import socket
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from tests.support.waiting import wait_for_value_sync


@dataclass
class RecordedRequest:
    method: str
    path: str
    headers: dict[str, str]
    body: bytes

    @property
    def json(self) -> Any:
        return json.loads(self.body.decode("utf-8")) if self.body else None


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    content_type: str = "text/event-stream; charset=utf-8"
    # Random write sizes in [min, max]; every write is flushed separately.
    chunk_sizes: tuple[int, int] = (1, 200)
    # Close the connection after this many body bytes (None: send it all).
    cut_after: int | None = None
    # Seconds to pause between writes (to give abort tests a window).
    pause: float = 0.0
    # After the body, keep the connection open until the client goes away.
    hang: bool = False
    # After the body, send this chunk again and again until the client goes away (an
    # endless stream: a line that never ends, tokens that never stop).
    repeat: bytes | None = None
    # Called before each write with the number of body bytes sent so far (0 first), and once
    # with the full length after the last: lets a test act at an exact point of a stream.
    on_write: Callable[[int], None] | None = None


Handler = Callable[[RecordedRequest], Reply]


def sse_reply(body: bytes | str, **kwargs: Any) -> Reply:
    data = body.encode("utf-8") if isinstance(body, str) else body
    return Reply(body=data, **kwargs)


def json_reply(status: int, payload: Any, headers: dict[str, str] | None = None) -> Reply:
    body = payload if isinstance(payload, bytes | str) else json.dumps(payload)
    data = body.encode("utf-8") if isinstance(body, str) else body
    return Reply(status=status, body=data, headers=headers or {}, content_type="application/json")


class LoopbackServer:
    def __init__(self, seed: int | None = None) -> None:
        self._sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._sock.bind(("127.0.0.1", 0))
        self._sock.listen(16)
        self.port = self._sock.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}"
        self.requests: list[RecordedRequest] = []
        self._replies: deque[Reply | Handler] = deque()
        self._random = random.Random(seed)
        self._closed = threading.Event()
        self._conns: set[socket.socket] = set()  # open client connections, closed with the server
        self._lock = threading.Lock()
        self._thread = threading.Thread(target=self._serve, name="loopback", daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ scripting

    def push(self, *replies: Reply | Handler) -> LoopbackServer:
        with self._lock:
            self._replies.extend(replies)
        return self

    def discard_pending(self) -> int:
        """Drop the scripted replies nobody asked for (a client that died early); returns how many."""
        with self._lock:
            count = len(self._replies)
            self._replies.clear()
        return count

    @property
    def last(self) -> RecordedRequest:
        return self.requests[-1]

    def wait_for_requests(self, count: int, timeout: float = 10.0) -> None:
        wait_for_value_sync(lambda: len(self.requests), lambda got: got >= count, timeout,
                            lambda got: f"expected {count} requests, got {got}", 0.005)

    def close(self) -> None:
        self._closed.set()
        try:
            self._sock.shutdown(socket.SHUT_RDWR)  # wakes the accept() of the serving thread
        except OSError:
            pass
        try:
            self._sock.close()
        except OSError:
            pass
        for conn in list(self._conns):  # kept-alive connections: their handler threads end too
            try:
                conn.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def __enter__(self) -> LoopbackServer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # ------------------------------------------------------------------ serving

    def _serve(self) -> None:
        while not self._closed.is_set():
            try:
                conn, _ = self._sock.accept()
            except OSError:
                return
            threading.Thread(target=self._handle, args=(conn,), daemon=True).start()

    def _handle(self, conn: socket.socket) -> None:
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self._conns.add(conn)
        try:
            reader = conn.makefile("rb")
            while True:
                request = self._read_request(reader)
                if request is None:
                    return
                self.requests.append(request)
                with self._lock:
                    reply = self._replies.popleft() if self._replies else None
                if reply is None:
                    reply = json_reply(500, {"error": {"message": "loopback: no scripted reply left"}})
                elif callable(reply):
                    reply = reply(request)
                if not self._write_reply(conn, reply):
                    return
        except OSError:
            pass
        finally:
            self._conns.discard(conn)
            try:
                conn.close()
            except OSError:
                pass

    @staticmethod
    def _read_request(reader: Any) -> RecordedRequest | None:
        line = reader.readline()
        if not line:
            return None
        method, path, _ = line.decode("latin-1").split(" ", 2)
        headers: dict[str, str] = {}
        while True:
            raw = reader.readline()
            if not raw:
                return None  # the client went away in the middle of its headers
            if raw in (b"\r\n", b"\n"):
                break
            name, _, value = raw.decode("latin-1").partition(":")
            headers[name.strip().lower()] = value.strip()
        length = int(headers.get("content-length", "0") or 0)
        body = reader.read(length) if length else b""
        if len(body) < length:
            return None  # a client killed while sending: a torn request was never sent
        return RecordedRequest(method, path, headers, body)

    def _write_reply(self, conn: socket.socket, reply: Reply) -> bool:
        """Write ``reply``; returns False when the connection must close afterwards."""
        head = [f"HTTP/1.1 {reply.status} X", f"content-type: {reply.content_type}", "transfer-encoding: chunked"]
        head += [f"{k}: {v}" for k, v in reply.headers.items()]
        conn.sendall(("\r\n".join(head) + "\r\n\r\n").encode("latin-1"))
        body = reply.body if reply.cut_after is None else reply.body[: reply.cut_after]
        low, high = reply.chunk_sizes
        pos = 0
        while pos < len(body):
            if reply.on_write is not None:
                reply.on_write(pos)
            size = self._random.randint(low, high)
            piece = body[pos : pos + size]
            pos += size
            conn.sendall(f"{len(piece):x}\r\n".encode() + piece + b"\r\n")
            if reply.pause:
                time.sleep(reply.pause)
        if reply.on_write is not None:
            reply.on_write(len(body))
        if reply.repeat:
            frame = f"{len(reply.repeat):x}\r\n".encode() + reply.repeat + b"\r\n"
            while not self._closed.is_set():
                conn.sendall(frame)  # raises OSError once the client is gone
        if reply.cut_after is not None:
            conn.shutdown(socket.SHUT_RDWR)
            return False
        if reply.hang:
            conn.settimeout(30)
            try:
                while conn.recv(1024):
                    pass
            except OSError:
                pass
            return False
        conn.sendall(b"0\r\n\r\n")
        return True
