"""Strict JSONL framing shared by the RPC and ACP servers and ``wolli.modes.rpc.client``.

A record ends at ``\\n`` and nowhere else: a trailing ``\\r`` is dropped (``\\r\\n`` input is
fine), and ``U+2028``/``U+2029``, legal inside JSON strings, never split a record (Python's
``str.splitlines`` and Node's ``readline`` would). Splitting happens on bytes, before
decoding, so a multi-byte character cut between two reads is never damaged.

Written records escape ``U+2028``/``U+2029`` as ``\\u2028``/``\\u2029``: still the same JSON
value, and a client with a line reader that does split on them keeps working.
"""

from __future__ import annotations

import json
from typing import Any

from ...base.json_input import parse_json

_encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode


# The longest record read; a longer line is skipped to its end and reported (a client that
# never sends a newline must not grow the reader's memory without end).
RECORD_LIMIT = 64 * 1024 * 1024


class OversizedRecord(bytes):
    """Stands for a record that was longer than the limit and was dropped unread."""


class LineSplitter:
    """Feed it bytes as they arrive; it returns the complete records (without ``\\n``/``\\r``)."""

    def __init__(self, max_record: int = RECORD_LIMIT) -> None:
        self._pending = bytearray()
        self.max_record = max_record
        self._skipping = False  # inside a record that was too long: drop up to its newline

    def feed(self, data: bytes) -> list[bytes]:
        if self._skipping:
            end = data.find(b"\n")
            if end < 0:
                return []
            self._skipping, data = False, data[end + 1 :]
        self._pending += data
        out: list[bytes] = []
        if b"\n" in data:
            *lines, rest = bytes(self._pending).split(b"\n")
            self._pending = bytearray(rest)
            out = [_strip_cr(line) if len(line) <= self.max_record else OversizedRecord() for line in lines]
        if len(self._pending) > self.max_record:
            self._pending = bytearray()
            self._skipping = True
            out.append(OversizedRecord())
        return out

    def finish(self) -> list[bytes]:
        """The input ended: a last record without its ``\\n`` still counts."""
        if self._skipping:
            self._skipping = False
            return []
        rest, self._pending = bytes(self._pending), bytearray()
        return [_strip_cr(rest)] if rest.strip() else []


def _strip_cr(line: bytes) -> bytes:
    return line[:-1] if line.endswith(b"\r") else line


def encode_record(value: object) -> bytes:
    """One JSON record and its ``\\n``, as UTF-8 bytes."""
    text = _encode(value)
    if "\u2028" in text or "\u2029" in text:
        text = text.replace("\u2028", "\\u2028").replace("\u2029", "\\u2029")
    try:
        return (text + "\n").encode("utf-8")
    except UnicodeEncodeError:  # a lone surrogate (``"\\ud800"`` came in): keep it escaped
        return (json.dumps(value, separators=(",", ":")) + "\n").encode("ascii")


def decode_record(line: bytes) -> Any:
    """A record's JSON value; ``ValueError`` (with what is wrong) for bad UTF-8 or bad JSON."""
    if isinstance(line, OversizedRecord):
        raise ValueError(f"the line is longer than {RECORD_LIMIT // (1024 * 1024)} MB; it was skipped")
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ValueError(f"the line is not UTF-8 text (byte {exc.start})") from None
    try:
        return parse_json(text)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not JSON: {exc.msg} at column {exc.colno}") from None
