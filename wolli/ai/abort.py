"""Abort signals: one controller cancels every provider stream, tool and handler under it.

Modelled on the web's AbortController because the extension API texts use it: a signal has
``aborted`` and ``reason``, callbacks (``add_listener``), and an awaitable form
(``await signal.wait()``). Callbacks may be fired from any thread; awaiting is asyncio-only.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable


class AbortError(Exception):
    """Raised by ``throw_if_aborted`` and by code that stops because its signal fired."""

    def __init__(self, reason: str | None = None) -> None:
        super().__init__(reason or "Aborted")
        self.reason = reason or "Aborted"


class AbortSignal:
    __slots__ = ("_aborted", "_listeners", "_lock", "reason")

    def __init__(self) -> None:
        self._aborted = False
        self.reason: str | None = None
        self._listeners: list[Callable[[], object]] = []
        self._lock = threading.Lock()

    @property
    def aborted(self) -> bool:
        return self._aborted

    def add_listener(self, callback: Callable[[], object]) -> Callable[[], None]:
        """Call ``callback`` once when aborted (at once if already). Returns an unsubscriber."""
        with self._lock:
            if not self._aborted:
                self._listeners.append(callback)
                return lambda: self._remove(callback)
        callback()
        return lambda: None

    def _remove(self, callback: Callable[[], object]) -> None:
        with self._lock:
            try:
                self._listeners.remove(callback)
            except ValueError:
                pass

    def throw_if_aborted(self) -> None:
        if self._aborted:
            raise AbortError(self.reason)

    async def wait(self) -> None:
        """Return once the signal is aborted."""
        if self._aborted:
            return
        loop = asyncio.get_running_loop()
        future: asyncio.Future[None] = loop.create_future()

        def wake() -> None:
            def settle() -> None:
                if not future.done():
                    future.set_result(None)

            try:
                loop.call_soon_threadsafe(settle)
            except RuntimeError:  # loop closed
                pass

        remove = self.add_listener(wake)
        try:
            await future
        finally:
            remove()

    def __await__(self):  # ``await signal`` == ``await signal.wait()``
        return self.wait().__await__()

    def _fire(self, reason: str | None) -> None:
        with self._lock:
            if self._aborted:
                return
            self._aborted = True
            self.reason = reason or "Aborted"
            listeners, self._listeners = self._listeners, []
        for callback in listeners:
            try:
                callback()
            except Exception:  # a broken listener must not stop the others
                pass

    @staticmethod
    def any(*signals: AbortSignal | None) -> AbortSignal:
        """A signal that fires when any of ``signals`` fires."""
        controller = AbortController()
        for signal in signals:
            if signal is not None:
                def forward(source: AbortSignal = signal) -> None:
                    controller.abort(source.reason)

                signal.add_listener(forward)
        return controller.signal


class AbortController:
    __slots__ = ("signal",)

    def __init__(self) -> None:
        self.signal = AbortSignal()

    def abort(self, reason: str | None = None) -> None:
        self.signal._fire(reason)

    @property
    def aborted(self) -> bool:
        return self.signal.aborted
