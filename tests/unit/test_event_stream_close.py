"""A consumer that leaves a provider stream early cancels the request (nothing streams on unread)."""

from __future__ import annotations

import asyncio

from wolli.ai.abort import AbortController
from wolli.ai.providers.faux import FauxProvider, faux_hang
from wolli.ai.stream import stream
from wolli.ai.types import Context, UserMessage


async def test_aclose_cancels_the_producer_and_settles_the_result():
    faux = FauxProvider(provider="closing")
    try:
        faux.push(faux_hang("partial answer"))
        controller = AbortController()  # the hanging response waits on a signal
        events = stream(faux.model, Context(messages=[UserMessage(content="hi")]), {"signal": controller.signal})
        first = await anext(aiter(events))
        assert first.type == "start"
        await events.aclose()
        assert events.task is not None and events.task.done()
        message = await asyncio.wait_for(events.result(), timeout=5)
        assert message.stop_reason == "aborted"
        assert [e async for e in events] == []  # nothing is delivered after close
        await events.aclose()  # idempotent
    finally:
        faux.unregister()
