"""A spec-compliant Server-Sent Events decoder over httpx line iteration.

Written here rather than taken from httpx-sse because that library refuses responses whose
content-type is not ``text/event-stream``, and OpenAI-compatible servers are not always
careful about that. Rules (WHATWG): one optional space after ``field:``; several ``data:``
lines join with ``\\n``; lines starting with ``:`` are comments; a blank line dispatches the
event if it had at least one ``data`` line (an ``event:`` alone is discarded); a leading BOM
is skipped; an unterminated event at EOF is dropped. httpx's line splitter accepts
``\\r\\n``, ``\\n``, ``\\r``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ..base.records import record


@record(slots=True)
class SSEEvent:
    event: str
    data: str
    id: str | None = None
    retry: int | None = None


class SSEDecoder:
    __slots__ = ("_data", "_event", "_id", "_retry")

    def __init__(self) -> None:
        self._event = ""
        self._data: list[str] = []
        self._id: str | None = None
        self._retry: int | None = None

    def feed_line(self, line: str) -> SSEEvent | None:
        if not line:
            if not self._data:  # WHATWG: no data buffer, nothing to dispatch
                self._event, self._retry = "", None
                return None
            event = SSEEvent(self._event or "message", "\n".join(self._data), self._id, self._retry)
            self._event, self._data, self._retry = "", [], None
            return event
        if line[0] == ":":
            return None
        name, sep, value = line.partition(":")
        if sep and value.startswith(" "):
            value = value[1:]
        if name == "data":
            self._data.append(value)
        elif name == "event":
            self._event = value
        elif name == "id":
            if "\0" not in value:
                self._id = value
        elif name == "retry":
            if value.isdigit():
                self._retry = int(value)
        return None


async def iter_sse(lines: AsyncIterator[str]) -> AsyncIterator[SSEEvent]:
    decoder = SSEDecoder()
    first = True
    async for line in lines:
        if first:
            first = False
            if line.startswith("\ufeff"):
                line = line[1:]
        event = decoder.feed_line(line.rstrip("\r\n"))
        if event is not None:
            yield event
