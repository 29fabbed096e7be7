"""One queue per real file, so parallel tool calls never interleave read-modify-write.

Tool calls of one assistant turn run concurrently. Two tools that both read ``foo.py``,
change it and write it back would otherwise race, and the last write would silently drop
the other change. Every tool that mutates a file (built-in ``edit``/``write`` and extension
tools) wraps its whole mutation window in :func:`with_file_mutation_queue`.

The queue key is the file's real path: ``realpath`` resolves symlinks of an existing file
(so aliases share a queue) and of the existing parent folders of a new file (so the key a
new file gets is the one it keeps once it exists). Entries disappear when no caller holds
or waits for them, so the table never grows with the number of files touched.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")


class _Entry:
    __slots__ = ("lock", "users")

    def __init__(self) -> None:
        # asyncio.Lock wakes waiters in FIFO order: mutations land in call order.
        self.lock = asyncio.Lock()
        self.users = 0


_queues: dict[str, _Entry] = {}


def mutation_queue_key(path: str) -> str:
    """The key a path queues under: the canonical real path of the absolute path."""
    return os.path.realpath(os.path.abspath(os.path.expanduser(path)))


async def with_file_mutation_queue(path: str, fn: Callable[[], Awaitable[T] | T]) -> T:
    """Run ``fn`` (sync or async) once every earlier mutation of the same file has finished.

    Pass the resolved target path, not the raw tool argument. The result of ``fn`` is
    returned and its exceptions propagate; either way the next caller in line proceeds.
    """
    key = mutation_queue_key(path)
    entry = _queues.get(key)
    if entry is None:
        entry = _queues[key] = _Entry()
    entry.users += 1
    try:
        async with entry.lock:
            result: Any = fn()
            if inspect.isawaitable(result):
                result = await result
            return result
    finally:
        entry.users -= 1
        if entry.users == 0 and _queues.get(key) is entry:
            del _queues[key]


def active_mutation_queues() -> int:
    """How many files currently have a running or waiting mutation (for tests and diagnostics)."""
    return len(_queues)
