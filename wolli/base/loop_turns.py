"""Give the event loop a turn during a long run of work that never waits, and only then.

A burst of streamed events (one network read can hold hundreds) is handled without a single
``await`` that suspends, which would keep the loop from everything else until it ends: a front
end's input, an abort. Code on such a path asks :meth:`LoopTurns.give` after each item. At most
once a millisecond it checks whether the loop has run since it last looked (a callback it
scheduled then has been called): an answer paced by the network waits on every read, so the
loop has, and nothing more is done; only a burst pays for ``asyncio.sleep(0)``, which resumes
the whole chain of generators above it (measured: two of them per token were a visible part of
the CPU a paced answer costs).
"""

from __future__ import annotations

import asyncio
import time

EVERY_S = 0.001


class LoopTurns:
    def __init__(self, every_s: float = EVERY_S) -> None:
        self._every = every_s
        self._checked_at = time.monotonic()
        self._turned = True

    def _turn(self) -> None:
        self._turned = True

    async def give(self) -> bool:
        """Sleep(0) if the loop has not run for a while; True if it did."""
        now = time.monotonic()
        if now - self._checked_at <= self._every:
            return False
        self._checked_at = now
        slept = not self._turned
        if slept:
            await asyncio.sleep(0)
        self._turned = False
        asyncio.get_running_loop().call_soon(self._turn)
        return slept
