"""The client side of ``wolli serve``: find or start the server, connect, authenticate, attach.

:class:`ServerClient` is a small blocking client (a reader thread queues what arrives) used
by ``wolli serve --list`` and ``wolli attach --plain``; tests drive servers with it too.
"""

from __future__ import annotations

import itertools
import json
import os
import queue
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..common.framing import LineSplitter, decode_record, encode_record
from .access import PROTOCOL_VERSION, read_info


class ServerUnavailable(ConnectionError):
    """No server answers where one was looked for (the message says where)."""


class ServerClient:
    def __init__(self, sock: socket.socket, first: dict[str, Any] | None = None) -> None:
        """``first``: sent before the hello is read (over TCP the server speaks once the
        client's first bytes said which framing it uses)."""
        self.sock = sock
        self.records: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self.hello: dict[str, Any] | None = None
        self._reader = threading.Thread(target=self._read, name="wolli-serve-client", daemon=True)
        self._reader.start()
        if first is not None:
            self.send(first)
        self.hello = self.next_record(timeout=15)
        if self.hello is None or self.hello.get("type") != "server_hello":
            self.close()
            raise ServerUnavailable("the other end is not a wolli server (no server_hello)")
        if self.hello.get("protocol") != PROTOCOL_VERSION:
            self.close()
            raise ServerUnavailable(
                f"the server runs wolli {self.hello.get('version')} (protocol {self.hello.get('protocol')}); this "
                f"client speaks protocol {PROTOCOL_VERSION}: restart the server with this version")

    @classmethod
    def unix(cls, path: str | Path, timeout: float = 5.0) -> ServerClient:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(timeout)
        try:
            sock.connect(str(path))
        except OSError as exc:
            sock.close()
            raise ServerUnavailable(f"no server answers on {path}: {exc.strerror or exc}") from None
        sock.settimeout(None)
        return cls(sock)

    @classmethod
    def tcp(cls, host: str, port: int, token: str | None, timeout: float = 5.0) -> ServerClient:
        try:
            sock = socket.create_connection((host, port), timeout=timeout)
        except OSError as exc:
            raise ServerUnavailable(f"no server answers on {host}:{port}: {exc.strerror or exc}") from None
        sock.settimeout(None)
        client = cls(sock, first={"type": "auth", "token": token or "", "id": "auth"})
        client.wait_response("auth")
        return client

    # ------------------------------------------------------------------ wire

    def _read(self) -> None:
        splitter = LineSplitter()
        while True:
            try:
                data = self.sock.recv(1 << 16)
            except OSError:
                data = b""
            for line in splitter.feed(data) if data else splitter.finish():
                try:
                    value = decode_record(line)
                except ValueError:
                    continue
                if isinstance(value, dict):
                    self.records.put(value)
            if not data:
                self.records.put(None)
                return

    def send(self, command: dict[str, Any]) -> None:
        with self._lock:
            self.sock.sendall(encode_record(command))

    def next_record(self, timeout: float | None = None) -> dict[str, Any] | None:
        try:
            record = self.records.get(timeout=timeout)
        except queue.Empty:
            raise TimeoutError("the server sent nothing in time") from None
        if record is None:
            self.records.put(None)  # stays ended for every later read
        return record

    def call(self, command: dict[str, Any], timeout: float = 30.0,
             on_other: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        """Send ``command``, return its response's ``data`` ({} when it has none); other
        records go to ``on_other``."""
        request_id = f"c{next(self._ids)}"
        self.send({**command, "id": request_id})
        return self.wait_response(request_id, timeout, on_other)

    def wait_response(self, request_id: str, timeout: float = 30.0,
                      on_other: Callable[[dict[str, Any]], None] | None = None) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while True:
            record = self.next_record(max(0.0, deadline - time.monotonic()))
            if record is None:
                raise ServerUnavailable("the server closed the connection")
            if record.get("type") == "response" and record.get("id") == request_id:
                if not record.get("success"):
                    raise RuntimeError(str(record.get("error")))
                data = record.get("data")
                return data if isinstance(data, dict) else {}
            if on_other is not None:
                on_other(record)

    def close(self) -> None:
        try:
            self.sock.shutdown(socket.SHUT_RDWR)
        except OSError:
            pass
        self.sock.close()


def connect_or_start(home: Path, socket_path: Path, *, start: bool, agent: str | None = None,
                     idle_timeout: float = 600.0, wait: float = 30.0) -> ServerClient:
    """Connect to the server on ``socket_path``; when none answers and ``start``, start one
    in the background (it exits after ``idle_timeout`` seconds without clients)."""
    try:
        return ServerClient.unix(socket_path)
    except ServerUnavailable:
        if not start:
            raise
    home.mkdir(parents=True, exist_ok=True)
    log = open(home / "server.log", "ab")  # handed to the child, closed here after
    command = [sys.executable, "-m", "wolli", "serve", "--socket", str(socket_path),
               "--idle-timeout", str(idle_timeout)]
    if agent:
        command += ["--agent", agent]
    subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, start_new_session=True,
                     cwd=os.getcwd())
    log.close()
    deadline = time.monotonic() + wait
    while True:
        try:
            return ServerClient.unix(socket_path)
        except ServerUnavailable:
            if time.monotonic() > deadline:
                raise ServerUnavailable(f"the server started on demand did not answer within {wait:.0f}s "
                                        f"(its log: {home / 'server.log'})") from None
            time.sleep(0.1)


def print_live_sessions(client: ServerClient, as_json: bool) -> None:
    data = client.call({"type": "get_live_sessions"})
    if as_json:
        print(json.dumps(data, indent=2))
        return
    server = data["server"]
    print(f"wolli serve {server['version']} (pid {server['pid']}), {server['clients']} client(s)")
    if not data["sessions"]:
        print("no live sessions")
    for room in data["sessions"]:
        name = f" {room['name']!r}" if room.get("name") else ""
        print(f"{room['sessionId']}{name}  {room['runState']}  {len(room['clients'])} client(s)  {room['cwd']}")


def server_version(home: Path) -> str | None:
    info = read_info(home)
    return str(info.get("version")) if info else None
