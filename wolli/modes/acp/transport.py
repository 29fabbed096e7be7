"""JSON-RPC messages over stdin/stdout, one per line, for the SDK's connection.

The SDK's own stdio reader logs a line that is not JSON and goes on silently; an editor
then waits for an answer that never comes. Here every line that is not a usable message
gets its JSON-RPC error (``-32700`` parse error, ``-32600`` invalid request) and reading
goes on. Lines are split with the RPC mode's strict framing (bounded: a line past the
limit is skipped and reported). stdout is taken over by :class:`ProtocolOutput`, so an
extension's ``print`` or a child process lands on stderr, never inside a message.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from ..common.framing import LineSplitter, decode_record
from ..common.protocol_output import ProtocolOutput
from ..common.stdin_feed import feed_from_stdin

PARSE_ERROR = -32700
INVALID_REQUEST = -32600


def error_record(request_id: object, code: int, message: str, details: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message,
                                                          "data": {"details": details}}}


def check_message(value: object) -> str | None:
    """Why ``value`` is not a JSON-RPC request, notification or response (None: it is one)."""
    if not isinstance(value, dict):
        return "a message is a JSON object"
    if "method" in value:
        if not isinstance(value["method"], str) or not value["method"]:
            return "'method' must be a non-empty string"
        if "params" in value and value["params"] is not None and not isinstance(value["params"], dict | list):
            return "'params' must be an object"
    elif "id" not in value or not ("result" in value or "error" in value):
        return "a message needs a 'method' (a request or notification) or an 'id' with 'result'/'error'"
    request_id = value.get("id")
    if request_id is not None and (isinstance(request_id, bool) or not isinstance(request_id, str | int)):
        return "'id' must be a string or an integer"
    return None


class StdioTransport:
    """The ``acp`` Transport protocol (``send``/``receive``/``close``) over the process's stdio."""

    def __init__(self, output: ProtocolOutput) -> None:
        self.output = output
        self._messages: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._splitter = LineSplitter()
        self._ended = False

    @classmethod
    async def open(cls, on_closed: Callable[[], Any]) -> StdioTransport:
        transport = cls(ProtocolOutput.take_stdout())
        loop = asyncio.get_running_loop()
        transport.output.on_closed = lambda: loop.call_soon_threadsafe(on_closed)
        await transport._attach_stdin(loop)
        return transport

    async def send(self, message: dict[str, Any]) -> None:
        if self.output.closed:
            raise ConnectionError("the client stopped reading")
        self.output.send(message)

    async def receive(self) -> dict[str, Any] | None:
        return await self._messages.get()

    async def close(self) -> None:
        self._feed(b"")

    # ------------------------------------------------------------------ input

    async def _attach_stdin(self, loop: asyncio.AbstractEventLoop) -> None:
        await feed_from_stdin(loop, self._feed, thread_name="acp-stdin")

    def _feed(self, data: bytes) -> None:
        if self._ended:
            return
        lines = self._splitter.feed(data) if data else self._splitter.finish()
        for line in lines:
            self._take(line)
        if not data:
            self._ended = True
            self._messages.put_nowait(None)

    def _take(self, line: bytes) -> None:
        if not line.strip():
            return
        try:
            value = decode_record(line)
        except ValueError as exc:
            self.output.send(error_record(None, PARSE_ERROR, "Parse error", str(exc)))
            return
        problem = check_message(value)
        if problem is not None:
            request_id = value.get("id") if isinstance(value, dict) else None
            if isinstance(request_id, bool) or not isinstance(request_id, str | int):
                request_id = None
            self.output.send(error_record(request_id, INVALID_REQUEST, "Invalid Request", problem))
            return
        self._messages.put_nowait(value)
