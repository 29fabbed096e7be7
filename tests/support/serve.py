"""Driving ``wolli serve`` as a real subprocess and its clients over real sockets."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.support.waiting import wait_until, wait_until_sync
from wolli.modes.server.access import ListenAddress
from wolli.modes.server.client import ServerClient
from wolli.modes.server.serve import ResidentServer, ServeOptions
from wolli.runtime.startup.request import StartupRequest


async def in_process_server(project: Path, **limits: float | int) -> tuple[ResidentServer, asyncio.Task[int]]:
    """A ``ResidentServer`` run on this event loop (socket ``project/s.sock``, and TCP on a free
    loopback port with token ``secret``), for tests that look inside it or change its limits."""
    request = StartupRequest(mode="rpc", cwd=str(project), model="local/local-model", no_extensions=True,
                             require_model=False)
    options = ServeOptions(socket_path=project / "s.sock", listen=ListenAddress("127.0.0.1", 0), token="secret",
                           **limits)  # type: ignore[arg-type]
    server = ResidentServer(request, options)
    task = asyncio.create_task(server.run())
    await wait_until(lambda: server.tcp_port is not None or task.done(), 30, "the server to listen")
    assert server.tcp_port is not None, task
    return server, task


class ServeProcess:
    """``python -m wolli serve ARGS``; stdout lines are collected as they come."""

    def __init__(self, cwd: Path, socket_path: Path, *args: str) -> None:
        self.socket_path = socket_path
        self.lines: list[str] = []
        self.process = subprocess.Popen(
            [sys.executable, "-m", "wolli", "serve", "--socket", str(socket_path), *args],
            cwd=cwd, env=os.environ.copy(), stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, start_new_session=True)
        self.stderr = ""
        threading.Thread(target=self._collect, daemon=True).start()
        threading.Thread(target=self._collect_err, daemon=True).start()

    def _collect(self) -> None:
        assert self.process.stdout is not None
        for raw in self.process.stdout:
            self.lines.append(raw.decode("utf-8", "replace").rstrip("\n"))

    def _collect_err(self) -> None:
        assert self.process.stderr is not None
        for raw in self.process.stderr:
            self.stderr += raw.decode("utf-8", "replace")

    def wait_listening(self, what: str = "listening on unix:") -> str:
        wait_until_sync(lambda: any(what in line for line in self.lines) or self.process.poll() is not None,
                        timeout=30, what=f"the server to print {what!r}")
        found = [line for line in self.lines if what in line]
        assert found, f"the server ended ({self.process.poll()}): {self.lines} {self.stderr}"
        return found[0]

    def tcp_port(self) -> int:
        line = self.wait_listening("listening on tcp ")
        match = re.search(r":(\d+)", line.split("listening on tcp ", 1)[1])
        assert match, line
        return int(match.group(1))

    def client(self) -> ServerClient:
        self.wait_listening()
        return ServerClient.unix(self.socket_path)

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout)


def records_until(client: ServerClient, predicate: Any, timeout: float = 20.0) -> list[dict[str, Any]]:
    """Every record up to and including the first that ``predicate`` accepts."""
    import time

    deadline = time.monotonic() + timeout
    seen: list[dict[str, Any]] = []
    while True:
        record = client.next_record(max(0.0, deadline - time.monotonic()))
        assert record is not None, f"the connection closed; seen: {[r.get('type') for r in seen]}"
        seen.append(record)
        if predicate(record):
            return seen


def settled(record: dict[str, Any]) -> bool:
    return record.get("type") == "agent_settled"

