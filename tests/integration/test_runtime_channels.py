"""The two event channels of a live session: awaited handlers that fold, and observers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.support.runtime import make_host, recorder, start_session, types
from wolli.agent.agent import Agent
from wolli.ai.providers.faux import FauxProvider, faux_hang, faux_tool_call
from wolli.ai.stream import stream


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


async def test_a_raising_observer_breaks_neither_the_run_nor_its_siblings(faux, tmp_path):
    host = make_host(faux)

    def broken(event):
        raise RuntimeError("observer bug")

    session = await start_session(host, tmp_path, model=faux.model, observers=[broken])
    events = recorder(session)
    faux.push("A long enough answer to stream in several pieces.")
    await session.prompt("hi")
    assert session.messages[-1].text() == "A long enough answer to stream in several pieces."
    assert types(events).count("message_update") > 3
    assert types(events)[-1] == "run_state"


async def test_a_raising_handler_is_reported_and_its_siblings_still_run(faux, tmp_path):
    host = make_host(faux)
    seen: list[str] = []

    def first(event, ctx):
        seen.append("first")
        raise ValueError("handler bug")

    host.handlers.add("turn_start", first, owner="/ext/broken.py")
    host.handlers.add("turn_start", lambda e, ctx: seen.append("second"), owner="/ext/fine.py")
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push("done")
    await session.prompt("hi")
    assert seen == ["first", "second"]
    [error] = [e for e in events if e.type == "extension_error"]
    assert error.extension_path == "/ext/broken.py" and error.event == "turn_start"
    assert "ValueError: handler bug" in error.error
    assert session.messages[-1].text() == "done"


async def test_handlers_run_by_priority_then_load_order_then_registration(faux, tmp_path):
    host = make_host(faux)
    order: list[str] = []
    host.handlers.add("agent_start", lambda e, c: order.append("b1"), owner="b", rank=2)
    host.handlers.add("agent_start", lambda e, c: order.append("a1"), owner="a", rank=1)
    host.handlers.add("agent_start", lambda e, c: order.append("b2"), owner="b", rank=2)
    host.handlers.add("agent_start", lambda e, c: order.append("gate"), owner="c", rank=3, priority=10)
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push("ok")
    await session.prompt("hi")
    assert order == ["gate", "a1", "b1", "b2"]


async def test_a_slow_asynchronous_observer_never_stalls_streaming(faux, tmp_path):
    host = make_host(faux)
    released = asyncio.Event()
    got_end = asyncio.Event()
    delivered: list[str] = []

    async def slow(event):
        await released.wait()  # would deadlock the run if observers were awaited
        delivered.append(event.type)
        if event.type == "agent_end":
            got_end.set()

    session = await start_session(host, tmp_path, model=faux.model)
    session.observe(slow)
    faux.push("streamed while the observer waits")
    await asyncio.wait_for(session.prompt("hi"), timeout=10)
    assert session.messages[-1].text() == "streamed while the observer waits"
    assert delivered == []
    released.set()
    await asyncio.wait_for(got_end.wait(), timeout=10)
    assert "message_update" in delivered


async def test_a_message_end_replacement_is_what_lands_in_the_session_file(faux, tmp_path):
    host = make_host(faux)

    def redact(event, ctx):
        if event.message.role == "assistant":
            return {"message": event.message.model_copy(update={"content": [{"type": "text", "text": "[redacted]"}]})}
        return None

    host.handlers.add("message_end", redact, owner="redactor")
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push("the secret is 42")
    await session.prompt("tell me")
    assert session.messages[-1].text() == "[redacted]"
    ends = [e for e in events if e.type == "message_end" and e.message.role == "assistant"]
    assert ends[-1].message.text() == "[redacted]"
    lines = [json.loads(line) for line in Path(session.session_file).read_text().splitlines()]
    saved = [e["message"] for e in lines if e.get("type") == "message" and e["message"]["role"] == "assistant"]
    assert json.dumps(saved).count("[redacted]") == 1 and "the secret" not in json.dumps(saved)


async def test_a_message_end_replacement_with_another_role_is_rejected_and_reported(faux, tmp_path):
    host = make_host(faux)
    host.handlers.add(
        "message_end",
        lambda e, c: {"message": {"role": "user", "content": "swap"}} if e.message.role == "assistant" else None,
        owner="swapper",
    )
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push("original")
    await session.prompt("hi")
    assert session.messages[-1].text() == "original"
    [error] = [e for e in events if e.type == "extension_error"]
    assert "role 'user' differs from 'assistant'" in error.error


async def test_an_unknown_result_key_is_reported_with_the_nearest_valid_one(faux, tmp_path):
    host = make_host(faux)
    host.handlers.add("before_agent_start", lambda e, c: {"systemPrompt": "x"}, owner="typo")
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push("ok")
    await session.prompt("hi")
    [error] = [e for e in events if e.type == "extension_error"]
    assert "unknown key 'systemPrompt'" in error.error and "did you mean 'system_prompt'" in error.error
    assert faux.contexts[-1].system_prompt != "x"


async def test_message_update_handlers_run_per_update_only_when_registered(faux, tmp_path):
    host = make_host(faux)
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push("one two three four five six seven")
    await session.prompt("hi")
    assert not host.handlers.has("message_update")
    deltas: list[str] = []
    host.handlers.add("message_update", lambda e, c: deltas.append(e.assistant_message_event.type))
    faux.push("one two three four five six seven")
    await session.prompt("again")
    assert deltas.count("text_delta") >= 5


async def test_leaving_a_provider_stream_early_cancels_the_request(faux):
    """A consumer that stops (here: its task is cancelled mid-stream) ends the request."""
    streams = []

    def tracking_stream(model, context, options):
        s = stream(model, context, options)
        streams.append(s)
        return s

    agent = Agent(model=faux.model, stream_fn=tracking_stream)
    faux.push(faux_hang("partial text"))
    started = asyncio.Event()
    agent.subscribe(lambda e: started.set() if e.type == "message_update" else None)
    task = asyncio.ensure_future(agent.prompt("hi"))
    await asyncio.wait_for(started.wait(), timeout=10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [request] = streams
    assert request.task is not None and request.task.done()


async def test_tool_events_reach_observers_with_consistent_error_flags(faux, tmp_path):
    host = make_host(faux)
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push([faux_tool_call("read", {"path": "missing.txt"})], "it is missing")
    await session.prompt("read it")
    [end] = [e for e in events if e.type == "tool_execution_end"]
    assert end.is_error is True and end.result.is_error is True
    [result] = [m for m in session.messages if m.role == "toolResult"]
    assert result.is_error is True
