"""Recovering a failed turn: retry transient failures, compact once on a context overflow.

The session owns every retry of an agent turn (it calls providers with ``max_retries=0``),
so there is one retry budget and every attempt is visible as ``auto_retry_start`` /
``auto_retry_end`` in every mode. Whether a failure is worth retrying is data carried by
the failed message (``error_kind``, ``retry_after_ms``), decided in :mod:`.retry`.

On a context overflow the session compacts once and continues; if nothing can be compacted
the overflow error stays the answer of the run (it is never replaced by an older answer).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ...ai.overflow import is_context_overflow
from ...ai.types import AssistantMessage
from ..events import AutoRetryEndEvent, AutoRetryStartEvent, NoticeEvent, RunState
from .retry import is_retryable, retry_delay_ms, wait_too_long
from .settings_view import retry_settings

if TYPE_CHECKING:
    from .services import SessionCore


class Recovery:
    """One run's recovery loop. ``session`` supplies ``agent``, ``settings``, ``emit``,
    ``set_run_state`` and ``compact_for_overflow``."""

    def __init__(self, session: SessionCore) -> None:
        self.session = session
        self._cancel = asyncio.Event()
        self.overflow_retry_used = False

    def cancel(self) -> None:
        """Stop waiting for a retry (abort, ``abort_retry``): the run ends with the error."""
        self._cancel.set()

    async def run(self, start: Callable[[], Awaitable[None]]) -> None:
        self._cancel = asyncio.Event()
        self.overflow_retry_used = False  # one overflow compaction per run, whoever started it
        await start()
        await self.recover()

    async def recover(self) -> None:
        session = self.session
        agent = session.agent
        emit = session.emit
        attempt = 0
        while True:
            last = last_assistant(agent.state.messages)
            if last is None or last.stop_reason != "error":
                if attempt:
                    await emit(AutoRetryEndEvent(success=True, attempt=attempt))
                return
            model = agent.state.model
            if is_context_overflow(last, model.context_window if model else None):
                if self.overflow_retry_used or not await session.compact_for_overflow(last):
                    return  # the overflow error is the run's answer
                self.overflow_retry_used = True
                await agent.continue_()
                continue
            conf = retry_settings(session.settings)
            if not conf.enabled or attempt >= conf.max_retries or not is_retryable(last, max_delay_ms=conf.max_delay_ms):
                if conf.enabled and wait_too_long(last, conf.max_delay_ms):
                    seconds = (last.retry_after_ms or 0) / 1000
                    await emit(NoticeEvent("warning", (
                        f"not retrying: the server asked to wait {seconds:.0f}s, more than retry.maxDelayMs "
                        f"({conf.max_delay_ms} ms) in settings.json"
                    )))
                if attempt:
                    await emit(AutoRetryEndEvent(success=False, attempt=attempt, final_error=last.error_message))
                return
            attempt += 1
            delay = retry_delay_ms(last, attempt, conf.base_delay_ms, conf.max_delay_ms)
            await emit(AutoRetryStartEvent(attempt, conf.max_retries, delay, last.error_message or ""))
            if await self._wait(delay, session.set_run_state):
                await emit(AutoRetryEndEvent(success=False, attempt=attempt, final_error="Retry cancelled"))
                return
            drop_failed(agent.state.messages, last)
            await agent.continue_()

    async def _wait(self, delay_ms: int, set_state: Callable[[RunState], Any]) -> bool:
        """Wait out the back-off; True when it was cancelled."""
        set_state("retrying")
        try:
            await asyncio.wait_for(self._cancel.wait(), timeout=delay_ms / 1000)
            return True
        except TimeoutError:
            return False
        finally:
            set_state("running")


def last_assistant(messages: list[Any]) -> AssistantMessage | None:
    """The newest assistant message after the newest user message, if any."""
    for message in reversed(messages):
        if isinstance(message, AssistantMessage):
            return message
        if getattr(message, "role", None) == "user":
            return None
    return None


def drop_failed(messages: list[Any], failed: AssistantMessage) -> None:
    """Take a failed answer out of the context before trying again (it stays in the file)."""
    for index in range(len(messages) - 1, -1, -1):
        if messages[index] is failed:
            del messages[index]
            return
