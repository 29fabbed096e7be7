"""The last resort after SIGINT/SIGTERM/SIGHUP: end the process even if the clean path hangs.

A signal first takes the clean path in every mode: the run is aborted, its partial answer
saved, tools' process trees killed, ``session_shutdown`` emitted. That path can still be
held up by something outside Wolli's control: a thread stuck in the kernel (``open()`` of a
FIFO), a terminal that is gone (a hangup under tmux), an extension handler that never
returns. So a signal also arms :func:`exit_later`: past a grace period the process ends with
the signal's exit status regardless. Nothing complete is lost by that: every session entry
is written to disk as one whole line the moment it is complete (``session/store.py``).
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import threading
from collections.abc import Callable, Collection
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from types import FrameType

# Clean shutdown gets this long after a signal; with the start-up of the timer and the exit
# itself the process is gone well within 5 seconds.
EXIT_GRACE_S = 4.0


def _hard_exit(code: int, grace: float) -> None:
    if grace > 0:
        try:
            sys.stderr.write(f"wolli: still not stopped {grace:g}s after the signal; exiting now\n")
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


def exit_later(code: int, grace: float = EXIT_GRACE_S) -> threading.Timer:
    """End the process with ``code`` in ``grace`` seconds unless it has ended by then."""
    timer = threading.Timer(grace, _hard_exit, args=(code, grace))
    timer.daemon = True  # never what keeps the process alive
    timer.start()
    return timer


class SignalRoute:
    """SIGINT/SIGTERM/SIGHUP handled on the event loop, with the hard exit armed at once.

    ``loop.add_signal_handler`` runs its callback on the loop only: if the loop itself is
    stuck (an extension's async tool blocked in ``open()``), the callback never runs and
    nothing could end the process but SIGKILL. Here a plain ``signal.signal`` handler runs
    first, in the main thread between two bytecodes (a blocked system call is interrupted
    for it and then retried), arms :func:`exit_later` for the signals in ``quit_on`` (and
    for any signal that arrives while an earlier one is still waiting for the loop), then
    hands the signal to ``handle(number)`` on the loop.
    """

    NAMES = ("SIGINT", "SIGTERM", "SIGHUP")

    def __init__(self, loop: asyncio.AbstractEventLoop, handle: Callable[[int], None], *, quit_on: Collection[str] = NAMES) -> None:
        self.loop = loop
        self.handle = handle
        self.quit_on = {number for name in quit_on if (number := getattr(signal, name, None)) is not None}
        self.exit_armed = False
        self._waiting = 0  # signals handed to the loop that it has not run yet
        self._previous: list[tuple[int, Any]] = []

    def __enter__(self) -> SignalRoute:
        for name in self.NAMES:
            number = getattr(signal, name, None)
            if number is None:
                continue
            try:
                self._previous.append((number, signal.signal(number, self._on_signal)))
            except (ValueError, OSError):  # not the main thread, or a platform without it
                continue
        return self

    def __exit__(self, *exc: object) -> None:
        for number, previous in reversed(self._previous):
            try:
                signal.signal(number, previous if previous is not None else signal.SIG_DFL)
            except (ValueError, OSError):
                pass
        self._previous.clear()

    def arm_exit(self, number: int, grace: float = EXIT_GRACE_S) -> None:
        if not self.exit_armed:
            self.exit_armed = True
            exit_later(128 + number, grace)

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        if number in self.quit_on or self._waiting:
            self.arm_exit(number)
        self._waiting += 1
        try:
            self.loop.call_soon_threadsafe(self._deliver, number)
        except RuntimeError:  # the loop is closed (the app has quit): nothing left to stop
            self.exit_armed = False
            self.arm_exit(number, 0.0)

    def _deliver(self, number: int) -> None:
        self._waiting = max(0, self._waiting - 1)
        self.handle(number)


class Interrupt:
    """SIGINT/SIGTERM/SIGHUP abort the session instead of killing the process mid-write.

    The abort takes the normal path: the partial answer is saved as an ``aborted`` message,
    a running tool's process tree is killed, and the session file stays whole. A second
    signal cancels everything at once, and whatever still holds the process (a tool thread
    stuck in the kernel, a loop blocked by an extension) cannot keep it past
    :data:`~..common.signals.EXIT_GRACE_S` (:class:`~..common.signals.SignalRoute`).
    """

    def __init__(self, abort: Callable[[], object]) -> None:
        self.abort = abort
        self.signal_number: int | None = None
        self._route: SignalRoute | None = None
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> Interrupt:
        self._task = asyncio.current_task()
        self._route = SignalRoute(asyncio.get_running_loop(), self._on_signal).__enter__()
        return self

    def _on_signal(self, number: int) -> None:
        if self.signal_number is None:
            self.signal_number = number
            self.abort()
        elif self._task is not None:
            self._task.cancel()  # a second signal: stop waiting for a clean abort

    def __exit__(self, *exc: object) -> None:
        if self._route is not None:
            self._route.__exit__()
