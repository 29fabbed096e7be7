"""``wolli attach --plain``: a line client of a running server.

It attaches to a session (or a new one in the current folder), prints the last exchanges,
then streams what happens in the session, whichever client started it. Each line typed is
a prompt (a steer while the agent works); ``/abort`` stops the run, ``/detach`` (or EOF)
leaves with the session running on. Model and tool text is printed terminal-safe.
"""

from __future__ import annotations

import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TextIO

from ...base.text_safety import terminal_safe
from .client import ServerClient, ServerUnavailable

# Waits between reconnection attempts after the server went away (then the last, repeated).
BACKOFF = (0.2, 0.5, 1.0, 2.0, 5.0)
RECONNECT_FOR = 120.0  # seconds of trying before giving up

HISTORY_SHOWN = 6  # messages of the history printed on attach


def _text_of(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    parts = [block.get("text", "") for block in content or [] if isinstance(block, dict) and block.get("type") == "text"]
    return "".join(parts)


class PlainAttach:
    def __init__(self, client: ServerClient, out: TextIO | None = None,
                 reconnect: Callable[[], ServerClient] | None = None) -> None:
        self.client = client
        self.out = out or sys.stdout
        self.session_id: str | None = None
        self._reconnect = reconnect
        self._leaving = False  # /detach or EOF: the connection closing is ours, not the server going
        self._lock = threading.Lock()

    def write(self, text: str) -> None:
        with self._lock:
            self.out.write(terminal_safe(text) if self.out.isatty() else text)
            self.out.flush()

    def show(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "message_update":
            event = record.get("assistantMessageEvent") or {}
            if event.get("type") == "text_delta":
                self.write(str(event.get("delta", "")))
        elif kind == "message_start" and (record.get("message") or {}).get("role") == "user":
            self.write(f"\n> {_text_of(record['message'])}\n")
        elif kind == "message_end" and (record.get("message") or {}).get("role") == "assistant":
            self.write("\n")
        elif kind == "tool_execution_start":
            self.write(f"[tool {record.get('toolName')}]\n")
        elif kind == "notice":
            self.write(f"[{record.get('level')}] {record.get('message')}\n")
        elif kind == "extension_ui_request" and record.get("method") == "notify":
            self.write(f"[notify] {record.get('message')}\n")
        elif kind == "extension_ui_request" and record.get("method") in ("select", "confirm", "input", "editor"):
            self.write(f"[dialog: {record.get('title')}; answer it in a full client]\n")

    def attach(self, session_id: str | None, cwd: str, *, history: int = HISTORY_SHOWN) -> None:
        # only what is printed crosses the socket (a long history is megabytes)
        command: dict[str, Any] = {"type": "attach", "historyLimit": history}
        command.update({"sessionId": session_id} if session_id else {"new": True, "cwd": cwd})
        data = self.client.call(command, on_other=self.show)
        self.session_id = data["sessionId"]
        for message in data["messages"][-history:] if history else []:
            role = message.get("role")
            if role in ("user", "assistant"):
                self.write(("> " if role == "user" else "") + _text_of(message) + "\n")
        self.write(f"[attached to {data['sessionId']}; {data['clients']} client(s); /detach leaves it running]\n")

    def run(self, session_id: str | None, cwd: str) -> int:
        self.attach(session_id, cwd)
        threading.Thread(target=self._pump, daemon=True).start()
        for line in sys.stdin:
            text = line.rstrip("\n")
            if not text.strip():
                continue
            if text.strip() == "/detach":
                break
            if text.strip() == "/abort":
                self.client.send({"type": "abort"})
                continue
            # Always with a streaming behaviour: an idle session runs it as a prompt, a busy one
            # (another client's run, a retry wait) takes it as a steer. What this client last
            # heard of the run state may be stale by the time the line arrives.
            self.client.send({"type": "prompt", "message": text, "streamingBehavior": "steer"})
        self._leaving = True
        self.client.close()
        return 0

    def _pump(self) -> None:
        while True:
            record = self.client.next_record()
            if record is None:
                if self._leaving:
                    return
                self.write("[the server went away]\n")
                if not self._reconnect_now():
                    return
                continue
            if record.get("type") == "response" and not record.get("success"):
                self.write(f"[error] {record.get('error')}\n")
            self.show(record)

    def _reconnect_now(self) -> bool:
        """Connect again with back-off and re-attach to the same session (its file has
        everything saved up to the line in flight)."""
        if self._reconnect is None or self.session_id is None:
            return False
        deadline = time.monotonic() + RECONNECT_FOR
        attempt = 0
        while time.monotonic() < deadline:
            time.sleep(BACKOFF[min(attempt, len(BACKOFF) - 1)])
            attempt += 1
            try:
                self.client = self._reconnect()
                self.attach(self.session_id, "", history=0)
            except (ServerUnavailable, RuntimeError, TimeoutError, OSError):
                continue
            self.write("[reconnected]\n")
            return True
        self.write("[gave up reconnecting; start the server again and run wolli attach]\n")
        return False
