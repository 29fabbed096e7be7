"""A small client for ``wolli --mode rpc``: start the process, send commands, get answers.

::

    from wolli.rpc_client import RpcClient

    with RpcClient(["--model", "anthropic/claude-sonnet-4-5"], on_ui_request=answer) as client:
        client.prompt("What does calc.py do?")
        for event in client.events(until="agent_settled"):
            ...
        print(client.request({"type": "get_last_assistant_text"})["text"])

:meth:`RpcClient.request` gives every command an ``id`` and waits for the response with
that ``id`` (raising :class:`RpcError` for ``success: false``). Events arrive on a queue
that :meth:`events` and :meth:`wait_for` read. ``on_event`` sees each event as it arrives;
``on_ui_request`` sees each ``extension_ui_request``: for a dialog, what it returns is
sent back (a string or a bool, ``None`` to cancel, a dict to send as is: a ``permission``
request takes ``{"optionId": "allow_once"}`` and the like; or
:data:`LATER` to answer yourself with :meth:`answer_ui`). Everything runs on two reader
threads (stdout, stderr); the callbacks are called on the stdout thread.

The client works with pi's RPC mode too (pass ``command=["pi", "--mode", "rpc"]``): it uses
only the protocol's documented fields (docs/rpc.md).
"""

from __future__ import annotations

import itertools
import os
import queue
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

from .framing import LineSplitter, decode_record, encode_record

DIALOGS = ("select", "confirm", "input", "editor", "permission")  # ones the client answers
LATER: object = object()  # returned by ``on_ui_request``: the answer is sent later (answer_ui)


class RpcError(RuntimeError):
    """A command answered ``success: false``; ``response`` is the whole response record."""

    def __init__(self, response: dict[str, Any]) -> None:
        super().__init__(f"{response.get('command')}: {response.get('error')}")
        self.response = response


class RpcClosed(RuntimeError):
    """The server process ended (its stderr is in the message)."""


class RpcClient:
    def __init__(
        self,
        args: list[str] | None = None,
        *,
        command: list[str] | None = None,
        cwd: str | os.PathLike[str] | None = None,
        env: dict[str, str] | None = None,
        on_event: Callable[[dict[str, Any]], Any] | None = None,
        on_ui_request: Callable[[dict[str, Any]], Any] | None = None,
        timeout: float = 30.0,
    ) -> None:
        self.argv = list(command or [sys.executable, "-m", "wolli", "--mode", "rpc"]) + list(args or [])
        self.cwd = cwd
        self.env = env
        self.on_event = on_event
        self.on_ui_request = on_ui_request
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.stderr_lines: list[str] = []
        self._events: queue.Queue[dict[str, Any] | None] = queue.Queue()
        self._waiting: dict[str, queue.Queue[dict[str, Any]]] = {}
        self._ids = itertools.count(1)
        self._lock = threading.Lock()
        self._write_lock = threading.Lock()
        self._closed = threading.Event()

    # ------------------------------------------------------------------ process

    def start(self) -> RpcClient:
        if self.process is not None:
            raise RuntimeError("this client has started its server already")
        self.process = subprocess.Popen(
            self.argv, cwd=self.cwd, env=self.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, bufsize=0,
        )
        threading.Thread(target=self._read_stdout, name="rpc-client-stdout", daemon=True).start()
        threading.Thread(target=self._read_stderr, name="rpc-client-stderr", daemon=True).start()
        return self

    def __enter__(self) -> RpcClient:
        # ``with RpcClient(...).start() as c`` must not start a second server.
        return self if self.process is not None else self.start()

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self, timeout: float | None = None) -> int:
        """Close stdin (the server shuts down cleanly) and wait for the exit code."""
        process = self._process()
        self.close_stdin()
        try:
            return process.wait(timeout if timeout is not None else self.timeout)
        except subprocess.TimeoutExpired:
            process.kill()
            return process.wait()

    def close_stdin(self) -> None:
        process = self._process()
        with self._write_lock:
            if process.stdin is not None and not process.stdin.closed:
                try:
                    process.stdin.close()
                except OSError:
                    pass

    @property
    def stderr(self) -> str:
        return "".join(self.stderr_lines)

    def _process(self) -> subprocess.Popen[bytes]:
        if self.process is None:
            raise RuntimeError("the client is not started (use start() or a with block)")
        return self.process

    # ------------------------------------------------------------------ sending

    def send_raw(self, data: bytes) -> None:
        """Bytes as they are (tests of the framing use this)."""
        process = self._process()
        assert process.stdin is not None
        with self._write_lock:
            try:
                process.stdin.write(data)
                process.stdin.flush()
            except (BrokenPipeError, ValueError, OSError):
                raise RpcClosed(f"the server is gone; its stderr:\n{self.stderr}") from None

    def send(self, record: dict[str, Any]) -> None:
        """One record, fire and forget (no id is added)."""
        self.send_raw(encode_record(record))

    def request(self, record: dict[str, Any], timeout: float | None = None) -> Any:
        """Send a command and wait for its response; returns ``data`` (None when there is none)."""
        response = self.request_response(record, timeout)
        if not response.get("success"):
            raise RpcError(response)
        return response.get("data")

    def request_response(self, record: dict[str, Any], timeout: float | None = None) -> dict[str, Any]:
        """Like :meth:`request`, but returns the whole response, failed or not."""
        request_id = str(record.get("id") or f"req-{next(self._ids)}")
        answers: queue.Queue[dict[str, Any]] = queue.Queue(maxsize=1)
        with self._lock:
            self._waiting[request_id] = answers
        try:
            self.send({**record, "id": request_id})
            return self._get(answers, timeout, f"the response to {record.get('type')} ({request_id})")
        finally:
            with self._lock:
                self._waiting.pop(request_id, None)

    def answer_ui(self, request_id: str, answer: object) -> None:
        """Answer a dialog: a value (str), ``True``/``False`` (confirm), or None to cancel."""
        self.send(_ui_response(request_id, answer))

    # ------------------------------------------------------------------ shortcuts

    def prompt(self, message: str, *, images: list[dict[str, Any]] | None = None,
               streaming_behavior: str | None = None) -> None:
        record: dict[str, Any] = {"type": "prompt", "message": message}
        if images:
            record["images"] = images
        if streaming_behavior:
            record["streamingBehavior"] = streaming_behavior
        self.request(record)

    def get_state(self) -> dict[str, Any]:
        state: dict[str, Any] = self.request({"type": "get_state"})
        return state

    def abort(self) -> None:
        self.request({"type": "abort"})

    def run(self, message: str, timeout: float | None = None) -> list[dict[str, Any]]:
        """Prompt and collect the events until the run has settled."""
        self.prompt(message)
        return list(self.events(until="agent_settled", timeout=timeout))

    # ------------------------------------------------------------------ events

    def events(self, until: str | Callable[[dict[str, Any]], bool] | None = None,
               timeout: float | None = None) -> Iterator[dict[str, Any]]:
        """Events as they come, up to and including the first that matches ``until``."""
        stop = (lambda e: e.get("type") == until) if isinstance(until, str) else until
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            event = self._get(self._events, max(0.0, deadline - time.monotonic()), f"an event ({until})")
            yield event
            if stop is not None and stop(event):
                return

    def wait_for(self, until: str | Callable[[dict[str, Any]], bool], timeout: float | None = None) -> dict[str, Any]:
        """The first event matching ``until`` (earlier events are consumed)."""
        return list(self.events(until, timeout))[-1]

    def drain(self) -> list[dict[str, Any]]:
        """The events received so far and not read yet."""
        out: list[dict[str, Any]] = []
        while True:
            try:
                event = self._events.get_nowait()
            except queue.Empty:
                return out
            if event is not None:
                out.append(event)

    def _get(self, source: queue.Queue[Any], timeout: float | None, what: str) -> Any:
        try:
            item = source.get(timeout=timeout if timeout is not None else self.timeout)
        except queue.Empty:
            raise TimeoutError(f"timed out waiting for {what}; server stderr:\n{self.stderr}") from None
        if item is None:
            source.put(None)  # stays closed for the next reader
            raise RpcClosed(f"the server ended while waiting for {what}; its stderr:\n{self.stderr}")
        return item

    # ------------------------------------------------------------------ reading

    def _read_stdout(self) -> None:
        process = self._process()
        assert process.stdout is not None
        splitter = LineSplitter()
        while True:
            data = process.stdout.read(1 << 16)
            for line in splitter.feed(data) if data else splitter.finish():
                if line.strip():
                    self._dispatch(decode_record(line))
            if not data:
                break
        self._closed.set()
        self._events.put(None)
        with self._lock:
            for waiting in self._waiting.values():
                waiting.put(None)  # type: ignore[arg-type]

    def _read_stderr(self) -> None:
        process = self._process()
        assert process.stderr is not None
        for raw in iter(process.stderr.readline, b""):
            self.stderr_lines.append(raw.decode("utf-8", "replace"))

    def _dispatch(self, record: dict[str, Any]) -> None:
        kind = record.get("type")
        if kind == "response":
            with self._lock:
                waiting = self._waiting.get(str(record.get("id")))
            if waiting is not None:
                waiting.put(record)
                return
        if kind == "extension_ui_request" and self.on_ui_request is not None:
            answer = self.on_ui_request(record)
            if record.get("method") in DIALOGS and answer is not LATER:
                self.answer_ui(str(record["id"]), answer)
        if self.on_event is not None:
            self.on_event(record)
        self._events.put(record)


def _ui_response(request_id: str, answer: object) -> dict[str, Any]:
    if isinstance(answer, dict):
        return {"type": "extension_ui_response", "id": request_id, **answer}
    if answer is None:
        return {"type": "extension_ui_response", "id": request_id, "cancelled": True}
    if isinstance(answer, bool):
        return {"type": "extension_ui_response", "id": request_id, "confirmed": answer}
    return {"type": "extension_ui_response", "id": request_id, "value": str(answer)}


__all__ = ["LATER", "RpcClient", "RpcClosed", "RpcError"]
