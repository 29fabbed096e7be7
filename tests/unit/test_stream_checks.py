"""The shared grammar check used by every provider test must itself be able to fail."""

from __future__ import annotations

import pytest

from tests.support.stream_checks import check_event_grammar
from wolli.ai.providers.faux import FauxProvider, faux_text, faux_tool_call
from wolli.ai.stream import stream
from wolli.ai.types import Context


async def scripted_events():
    faux = FauxProvider(provider="faux-grammar")
    try:
        faux.push([faux_text("hello world"), faux_tool_call("read", {"path": "a"})])
        s = stream(faux.model, Context())
        return [e async for e in s]
    finally:
        faux.unregister()


async def test_a_well_formed_stream_passes():
    events = await scripted_events()
    assert check_event_grammar(events).text() == "hello world"


async def test_a_missing_end_event_fails():
    events = await scripted_events()
    broken = [e for e in events if e.type != "text_end"]
    with pytest.raises(AssertionError):
        check_event_grammar(broken)


async def test_a_lost_delta_fails():
    events = await scripted_events()
    deltas = [i for i, e in enumerate(events) if e.type == "text_delta"]
    broken = events[: deltas[0]] + events[deltas[0] + 1 :]
    with pytest.raises(AssertionError):
        check_event_grammar(broken)
