"""stdout as the protocol channel: only whole JSON records, whoever else tries to print.

:meth:`ProtocolOutput.take_stdout` keeps a private duplicate of file descriptor 1 for the
records and points descriptor 1 (and ``sys.stdout``) at stderr, so an extension's ``print``,
a library's warning or a child process that inherits stdout lands on stderr instead of
splitting a record. Writes take a lock, because ``ctx.ui`` may be called from a tool's
worker thread while the loop streams events.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable
from typing import Any, BinaryIO, Protocol

from .framing import encode_record
from .stdout_divert import divert_stdout


class RecordSink(Protocol):
    """Where a client's records go: stdout, a socket, every client of a session."""

    def send(self, record: dict[str, Any]) -> None: ...


class ProtocolOutput:
    def __init__(self, stream: BinaryIO) -> None:
        self._stream = stream
        self._lock = threading.Lock()
        self.closed = False
        # Called once when the reader of stdout went away (the client died).
        self.on_closed: Callable[[], Any] | None = None

    @classmethod
    def take_stdout(cls) -> ProtocolOutput:
        """Own the real stdout; everything else written to descriptor 1 goes to stderr."""
        return cls(os.fdopen(divert_stdout(), "wb", buffering=0))

    def send(self, record: object) -> None:
        """Write one record (a dict) as one line; silently nothing once the reader is gone."""
        data = encode_record(record)
        with self._lock:
            if self.closed:
                return
            try:
                view = memoryview(data)
                while view:  # an unbuffered pipe may take a large record in several writes
                    written = self._stream.write(view)
                    view = view[written or 0:]
            except (BrokenPipeError, ConnectionResetError, ValueError, OSError):
                self.closed = True
        if self.closed and self.on_closed is not None:
            callback, self.on_closed = self.on_closed, None
            callback()
