"""At most one screen update per frame for streamed output, however fast tokens arrive.

``mark(key, fn)`` records that ``fn`` should run at the next frame (a later mark with the
same key replaces the earlier one); the first mark schedules a flush and the flush runs every
pending function once. The flush comes at once after a quiet spell (the first token of an
answer is drawn as soon as it arrives) and otherwise a frame after the mark, so a stream is
drawn at most ``FPS`` times a second. When nothing streams, no timer exists: an idle app does
no work.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

FPS = 20  # measured: each frame of a streaming answer costs Textual ~2-3 ms of CPU
FRAME_INTERVAL = 1.0 / FPS
QUIET_FRAMES = 2  # nothing drawn for this many frames: the next mark is drawn at once


class FrameBatcher:
    def __init__(self, schedule: Callable[[float, Callable[[], None]], Any], fps: int = FPS,
                 clock: Callable[[], float] = time.monotonic) -> None:
        self._schedule = schedule  # (delay, flush): run flush after delay seconds, on the UI's loop
        self._interval = 1.0 / fps
        self._clock = clock
        self._pending: dict[Any, Callable[[], None]] = {}
        self._scheduled = False
        self._flushed_at = float("-inf")
        self.flushes = 0  # for tests and benchmarks

    def mark(self, key: object, fn: Callable[[], None]) -> None:
        self._pending[key] = fn
        if not self._scheduled:
            self._scheduled = True
            # After a quiet spell (an answer's first piece, a slow model) a frame's wait only
            # delays what is new. While pieces keep coming, a frame after the first mark is
            # when the next read has arrived too (the model is read a frame at a time), so one
            # draw takes in both: ~14 draws a second at 100 tokens/s, against 20 for drawing
            # each read as it comes.
            quiet = self._clock() - self._flushed_at >= QUIET_FRAMES * self._interval
            self._schedule(0.0 if quiet else self._interval, self.flush)

    def flush(self) -> None:
        """Run everything pending now (also called before a row is finished)."""
        self._scheduled = False
        pending, self._pending = self._pending, {}
        if pending:
            self.flushes += 1
            self._flushed_at = self._clock()
        for fn in pending.values():
            fn()

    def drop(self, key: object) -> None:
        self._pending.pop(key, None)
