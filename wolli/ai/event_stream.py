"""The object ``stream()`` returns: an async iterator of events plus an awaitable result."""

from __future__ import annotations

import asyncio
from collections import deque
from typing import Any

from .types import AssistantMessage, AssistantMessageEvent, DoneEvent, ErrorEvent


class AssistantMessageEventStream:
    """A single-consumer queue of provider events ending in ``done`` or ``error``.

    Producers call :meth:`push`; the terminal event settles :meth:`result`. Iterating is
    optional: ``await stream.result()`` alone drains nothing and still gets the message.
    """

    def __init__(self) -> None:
        self._queue: deque[AssistantMessageEvent] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._finished = False
        self._result: asyncio.Future[AssistantMessage] = asyncio.get_running_loop().create_future()
        self.task: asyncio.Task[Any] | None = None

    # ------------------------------------------------------------------ producer side

    def push(self, event: AssistantMessageEvent) -> None:
        if self._finished:
            return
        self._queue.append(event)
        if isinstance(event, DoneEvent):
            self._finish(event.message)
        elif isinstance(event, ErrorEvent):
            self._finish(event.error)
        self._wake()

    def _finish(self, message: AssistantMessage) -> None:
        self._finished = True
        if not self._result.done():
            self._result.set_result(message)

    def _wake(self) -> None:
        waiter = self._waiter
        if waiter is not None and not waiter.done():
            waiter.set_result(None)

    @property
    def finished(self) -> bool:
        return self._finished

    # ------------------------------------------------------------------ consumer side

    def __aiter__(self) -> AssistantMessageEventStream:
        return self

    async def __anext__(self) -> AssistantMessageEvent:
        while True:
            if self._queue:
                return self._queue.popleft()
            if self._finished:
                raise StopAsyncIteration
            self._waiter = asyncio.get_running_loop().create_future()
            try:
                await self._waiter
            finally:
                self._waiter = None

    async def aclose(self) -> None:
        """Stop the request: the consumer left early (abort, error, early return).

        Cancels the producing task, so the HTTP response is closed instead of streaming on
        into a queue nobody reads. Safe to call more than once, and after the end.
        """
        task = self.task
        if task is not None and not task.done():
            task.cancel()
            try:
                await task
            except asyncio.CancelledError:
                current = asyncio.current_task()
                if current is not None and current.cancelling():  # we are being cancelled too
                    raise
            except Exception:  # how the producer ended is not the consumer's concern
                pass
        # After the producer settled the result (as aborted): nothing more is delivered.
        self._finished = True
        self._queue.clear()
        self._wake()

    async def result(self) -> AssistantMessage:
        return await asyncio.shield(self._result)
