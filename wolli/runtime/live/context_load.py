"""The rest of a resumed context, built off the event loop after the session is shown.

A session opened with ``SessionOptions.context_tail`` starts with the end of its context
(``SessionManager.context_tail``): enough to draw the last messages and to tell how full
the context is. The older messages are built in a worker thread (``finish_context``: one
pass over the file's bytes), then put in front of what the agent holds by then, so a
message appended meanwhile (a ``!cmd``, an extension's message) stays where it is. Every
run waits for this first (``LiveSession.context_ready``): a request never carries half a
conversation.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...session.context import SessionContext
    from .services import SessionCore

log = logging.getLogger("wolli.runtime")
# Messages built before the TUI shows a resumed session: a screen of answers and then some.
TAIL_MESSAGES = 24


class ContextLoad:
    """The pending older part of one session's context; :meth:`wait` builds it once."""

    def __init__(self, session: SessionCore, tail: SessionContext) -> None:
        self.session = session
        self.first = tail.messages[0] if tail.messages else None  # where the tail starts in the full context
        self.older = tail.older_messages  # how many come before it (the index's count)
        self._task: asyncio.Task[None] | None = None

    async def wait(self) -> None:
        if self._task is None:
            self._task = asyncio.ensure_future(self._load())
        await asyncio.shield(self._task)

    async def _load(self) -> None:
        manager = self.session.session_manager
        try:
            await asyncio.to_thread(manager.finish_context)
        except Exception:  # never leave a session without its context: build it here instead
            log.exception("building the context in a worker thread failed")
            manager.finish_context()
        full = manager.build_session_context().messages
        agent = self.session.agent
        current = agent.state.messages
        if not current or current[0] is not self.first:
            return  # already replaced by a whole context (a compaction, a tree navigation)
        start = next((index for index, message in enumerate(full) if message is self.first), None)
        if start is None:  # the tail is not the end of the context after all: take it whole
            agent.replace_messages(list(full))
        else:
            agent.replace_messages([*full[:start], *current])
