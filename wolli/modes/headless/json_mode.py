"""``--mode json``: the session header, then every session event as one JSON line on stdout.

The writer is a session *observer*: it is called synchronously for each event and never
awaited. When the reader goes away (``wolli --mode json | head``) it stops writing and
calls ``on_closed`` once, instead of raising into the agent loop.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, TextIO

from ...runtime.event_records import event_record

if TYPE_CHECKING:
    from ...runtime.events import SessionEvent


class JsonEventWriter:
    def __init__(
        self, out: TextIO | None = None, on_closed: Callable[[], Any] | None = None, *, full_updates: bool = False
    ) -> None:
        self.out = out or sys.stdout
        self.on_closed = on_closed
        self.full_updates = full_updates
        self.closed = False
        # Why stdout stopped taking lines when it was not the reader leaving (a full disk).
        self.failure: str | None = None
        self._dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode

    def write(self, value: object) -> None:
        if self.closed:
            return
        line = self._dumps(event_record(value, full_updates=self.full_updates))
        try:
            self.out.write(line + "\n")
            self.out.flush()
        except OSError as exc:  # BrokenPipeError: the reader left; anything else: stdout failed
            self.closed = True
            if not isinstance(exc, BrokenPipeError):
                self.failure = exc.strerror or str(exc)
            silence(self.out)
            if self.on_closed is not None:
                self.on_closed()

    def __call__(self, event: SessionEvent) -> None:
        self.write(event)


def silence(stream: TextIO) -> None:
    """Point a stream whose reader is gone at /dev/null, so the interpreter's final flush
    does not print "Exception ignored ... BrokenPipeError" on exit."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, stream.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):
        pass
