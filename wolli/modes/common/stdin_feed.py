"""Reading a protocol client's stdin on the event loop, for the modes whose client is the
process on the other end of stdin (``--mode rpc``, ``--mode acp``).

A pipe or terminal is watched by the loop itself: bytes are taken up at the loop's next turn,
with no thread waiting for the GIL. A regular file (``< commands.jsonl``) cannot be watched
that way, so a daemon thread reads it and hands the bytes to the loop. Either way ``feed``
receives every chunk in order and ``b""`` once at the end.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable


async def feed_from_stdin(loop: asyncio.AbstractEventLoop, feed: Callable[[bytes], None], *,
                          stopping: Callable[[], bool] = lambda: False, thread_name: str = "stdin") -> None:
    """Start handing stdin's bytes to ``feed`` (``b""`` at the end). A connection lost while
    ``stopping()`` is true (the process is shutting down) is not reported as an end."""

    class Reader(asyncio.Protocol):
        def data_received(self, data: bytes) -> None:
            feed(data)

        def eof_received(self) -> bool:
            feed(b"")
            return False

        def connection_lost(self, exc: Exception | None) -> None:
            if not stopping():
                feed(b"")

    try:
        stdin = os.fdopen(os.dup(0), "rb", buffering=0)
        await loop.connect_read_pipe(Reader, stdin)
    except (ValueError, OSError):  # a regular file: read by a thread
        threading.Thread(target=_read_thread, args=(loop, feed), name=thread_name, daemon=True).start()


def _read_thread(loop: asyncio.AbstractEventLoop, feed: Callable[[bytes], None]) -> None:
    while True:
        try:
            data = os.read(0, 1 << 16)
        except InterruptedError:
            continue
        except OSError:
            data = b""
        try:
            loop.call_soon_threadsafe(feed, data)
        except RuntimeError:  # the loop is gone: the process is ending anyway
            return
        if not data:
            return
