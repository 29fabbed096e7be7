"""Blocking calls off the event loop, in threads that never keep the process alive.

``asyncio.to_thread`` runs work in the loop's default executor, whose threads are joined
when the loop shuts down and again when the interpreter exits. A call blocked in the kernel
(``open()`` of a FIFO nobody writes to, a read from a hung mount) then holds the process
for ever: Ctrl+C prints "interrupted" and nothing ends. :func:`run_blocking` runs the call
in a *daemon* thread instead: when the waiting task is cancelled (an abort, a signal) the
thread is abandoned, not joined, and the process can still exit.

Threads are reused (an idle one takes the next call) so this costs what ``to_thread`` costs;
a thread stuck in a call simply never comes back and a new one is started for the next.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import queue
import threading
from collections.abc import Callable
from typing import ParamSpec, TypeVar, cast

T = TypeVar("T")
P = ParamSpec("P")

_lock = threading.Lock()
_idle = 0  # workers waiting for work (each one will take exactly one queued item)
_work: queue.SimpleQueue[Callable[[], None]] = queue.SimpleQueue()


def _worker() -> None:
    global _idle
    while True:
        job = _work.get()
        job()
        with _lock:
            _idle += 1


def _submit(job: Callable[[], None]) -> None:
    global _idle
    with _lock:
        spawn = _idle == 0
        if not spawn:
            _idle -= 1
    _work.put(job)
    if spawn:
        threading.Thread(target=_worker, name="wolli-blocking", daemon=True).start()


async def run_blocking(func: Callable[P, T], /, *args: P.args, **kwargs: P.kwargs) -> T:
    """``await func(*args, **kwargs)`` run in a daemon thread (context variables copied, as
    ``asyncio.to_thread`` does). Cancelling the await abandons the thread."""
    loop = asyncio.get_running_loop()
    future: asyncio.Future[T] = loop.create_future()
    call = functools.partial(contextvars.copy_context().run, func, *args, **kwargs)

    def settle(ok: bool, value: T | BaseException) -> None:
        if future.done():  # cancelled meanwhile: nobody wants the outcome any more
            return
        if ok:
            future.set_result(cast(T, value))
        else:
            future.set_exception(cast(BaseException, value))

    def job() -> None:
        value: T | BaseException
        try:
            value, ok = call(), True
        except BaseException as exc:  # handed to the awaiting task, raised there
            value, ok = exc, False
        try:
            loop.call_soon_threadsafe(settle, ok, value)
        except RuntimeError:  # the loop is closed: the caller is long gone
            pass

    _submit(job)
    return await future
