"""At most one screen update per frame for streamed output, however fast tokens arrive.

``mark(key, fn)`` records that ``fn`` should run at the next frame (a later mark with the
same key replaces the earlier one); the first mark schedules a flush ``1/FPS`` seconds later
and the flush runs every pending function once. When nothing streams, no timer exists: an
idle app does no work.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

FPS = 20  # measured: each frame of a streaming answer costs Textual ~2-3 ms of CPU
FRAME_INTERVAL = 1.0 / FPS


class FrameBatcher:
    def __init__(self, schedule: Callable[[float, Callable[[], None]], Any], fps: int = FPS) -> None:
        self._schedule = schedule  # e.g. app.set_timer(delay, callback)
        self._interval = 1.0 / fps
        self._pending: dict[Any, Callable[[], None]] = {}
        self._scheduled = False
        self.flushes = 0  # for tests and benchmarks

    def mark(self, key: object, fn: Callable[[], None]) -> None:
        self._pending[key] = fn
        if not self._scheduled:
            self._scheduled = True
            self._schedule(self._interval, self.flush)

    def flush(self) -> None:
        """Run everything pending now (also called before a row is finished)."""
        self._scheduled = False
        pending, self._pending = self._pending, {}
        if pending:
            self.flushes += 1
        for fn in pending.values():
            fn()

    def drop(self, key: object) -> None:
        self._pending.pop(key, None)
