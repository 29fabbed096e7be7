"""Driving ``wolli serve`` as a real subprocess and its clients over real sockets."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.support.waiting import wait_until_sync
from wolli.modes.server.client import ServerClient


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


def write_long_session(path: Path, turns: int, cwd: str) -> None:
    """A saved session of ``turns`` turns, each a prompt, a tool call, its result and an
    answer (``answer N``), so a history can be cut between a call and its result."""
    import json

    lines = [{"type": "session", "version": 3, "id": "0f0f0f0f-1111-2222-3333-444444444444",
              "timestamp": "2025-01-01T00:00:00.000Z", "cwd": cwd}]
    parent = None

    def add(message: dict[str, Any]) -> None:
        nonlocal parent
        entry_id = f"{len(lines):08x}"
        lines.append({"type": "message", "id": entry_id, "parentId": parent,
                      "timestamp": "2025-01-01T00:00:01.000Z", "message": message})
        parent = entry_id

    usage = {"input": 10, "output": 5, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 15,
             "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}}
    for turn in range(turns):
        call = f"call_{turn}"
        add({"role": "user", "content": f"question {turn}", "timestamp": 1})
        for content, stop in (([{"type": "toolCall", "id": call, "name": "read", "arguments": {"path": f"f{turn}"}}],
                               "toolUse"), ([{"type": "text", "text": f"answer {turn}"}], "stop")):
            add({"role": "assistant", "content": content, "api": "openai-completions", "provider": "local",
                 "model": "local-model", "usage": usage, "stopReason": stop, "timestamp": 1})
            if stop == "toolUse":
                add({"role": "toolResult", "toolCallId": call, "toolName": "read",
                     "content": [{"type": "text", "text": f"contents {turn}"}], "isError": False, "timestamp": 1})
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
