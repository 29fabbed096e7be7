"""Abort: the provider stream and every running tool stop, and what was produced is kept."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from tests.unit._agent_loop_helpers import Recorder, make_agent, make_tool, run, text_result, wait_until
from wolli.agent import tool_execution
from wolli.ai.providers.faux import FauxProvider, FauxResponse, faux_hang, faux_text, faux_tool_call


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


@pytest.fixture
def short_grace(monkeypatch):
    monkeypatch.setattr(tool_execution, "ABORT_GRACE_SECONDS", 0.05)


def streamed_text(agent) -> str:
    message = agent.state.stream_message
    return message.text() if message is not None else ""


async def test_abort_while_streaming_keeps_the_partial_text(faux):
    faux.push(faux_hang("Half of an answer"), "never asked")
    agent = make_agent(faux)
    agent.follow_up("queued for later")
    rec = Recorder(agent)
    task = asyncio.create_task(agent.prompt("hi"))
    await wait_until(lambda: streamed_text(agent) == "Half of an answer")
    agent.abort("Esc pressed")
    await run(task)

    last = agent.state.messages[-1]
    assert last.role == "assistant" and last.stop_reason == "aborted"
    assert last.text() == "Half of an answer" and last.error_message == "Esc pressed"
    assert faux.calls == 1
    assert agent.pending_message_count == 1  # the follow-up is not lost
    assert rec.types()[-3:] == ["message_end", "turn_end", "agent_end"]
    assert not agent.is_streaming and agent.signal is None


async def test_abort_during_paced_streaming_stops_early(faux):
    words = " ".join(f"word{i}" for i in range(400))
    faux.push(FauxResponse(blocks=[faux_text(words)], tokens_per_second=500))
    agent = make_agent(faux)
    task = asyncio.create_task(agent.prompt("hi"))
    await wait_until(lambda: len(streamed_text(agent)) > 20)
    agent.abort()
    await run(task)
    last = agent.state.messages[-1]
    assert last.stop_reason == "aborted"
    assert 20 < len(last.text()) < len(words) and words.startswith(last.text())


async def test_abort_while_a_tool_waits_on_its_signal(faux):
    started = asyncio.Event()

    async def execute(tool_call_id, params, signal, on_update, ctx):
        started.set()
        await signal.wait()
        return text_result(f"stopped: {signal.reason}")

    async def quick(tool_call_id, params, signal, on_update, ctx):
        return "quick result"

    faux.push([faux_tool_call("wait", {}, id="w"), faux_tool_call("quick", {}, id="q")], "never asked")
    agent = make_agent(faux, [make_tool("wait", execute), make_tool("quick", quick)])
    rec = Recorder(agent)
    task = asyncio.create_task(agent.prompt("go"))
    await run(started.wait())
    agent.abort("user abort")
    await run(task)
    assert faux.calls == 1
    results = {m.tool_call_id: m for m in agent.state.messages if m.role == "toolResult"}
    assert results["w"].content[0].text == "stopped: user abort"
    assert results["q"].content[0].text == "quick result"  # what was produced is kept
    assert len(rec.of("tool_execution_end")) == 2
    assert rec.types()[-2:] == ["turn_end", "agent_end"]


async def test_tool_ignoring_the_signal_is_cancelled_after_the_grace(faux, short_grace):
    cancelled = asyncio.Event()
    started = asyncio.Event()

    async def stubborn(tool_call_id, params, signal, on_update, ctx):
        started.set()
        try:
            await asyncio.Event().wait()  # never returns on its own
        except asyncio.CancelledError:
            cancelled.set()
            raise

    faux.push([faux_tool_call("stubborn", {}, id="s")], "never asked")
    agent = make_agent(faux, [make_tool("stubborn", stubborn)])
    rec = Recorder(agent)
    task = asyncio.create_task(agent.prompt("go"))
    await run(started.wait())
    began = time.monotonic()
    agent.abort()
    await run(task, timeout=2)
    assert time.monotonic() - began < 1.5
    assert cancelled.is_set()
    [result] = [m for m in agent.state.messages if m.role == "toolResult"]
    assert result.is_error and "aborted" in result.content[0].text
    [end] = rec.of("tool_execution_end")
    assert end.is_error and faux.calls == 1


async def test_sequential_batch_abort_cancels_the_running_tool_and_skips_the_rest(faux, short_grace):
    ran: list[str] = []

    async def stubborn(tool_call_id, params, signal, on_update, ctx):
        ran.append(tool_call_id)
        await asyncio.Event().wait()

    faux.push([faux_tool_call("stubborn", {}, id=i) for i in ("a", "b")])
    agent = make_agent(faux, [make_tool("stubborn", stubborn)], tool_execution="sequential")
    task = asyncio.create_task(agent.prompt("go"))
    await wait_until(lambda: ran == ["a"])
    agent.abort()
    await run(task, timeout=2)
    assert ran == ["a"]
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.tool_call_id for r in results] == ["a", "b"] and all(r.is_error for r in results)


async def test_sync_tool_sees_the_abort_from_its_thread(faux):
    started = threading.Event()

    def execute(tool_call_id, params, signal, on_update, ctx):
        started.set()
        deadline = time.monotonic() + 5
        while not signal.aborted and time.monotonic() < deadline:
            time.sleep(0.001)
        return "saw abort" if signal.aborted else "timed out"

    faux.push([faux_tool_call("poll", {}, id="p")])
    agent = make_agent(faux, [make_tool("poll", execute)])
    task = asyncio.create_task(agent.prompt("go"))
    await wait_until(started.is_set)
    agent.abort()
    await run(task)
    assert agent.state.messages[-1].content[0].text == "saw abort"


async def test_abort_during_an_interceptor_skips_the_batch(faux):
    ran: list[str] = []
    asked = asyncio.Event()

    async def before(ctx, signal):
        asked.set()
        await signal.wait()  # e.g. a confirmation dialog dismissed by Esc
        return None

    async def execute(tool_call_id, params, signal, on_update, ctx):
        ran.append(tool_call_id)
        return "ran"

    faux.push([faux_tool_call("t", {}, id="a"), faux_tool_call("t", {}, id="b")])
    agent = make_agent(faux, [make_tool("t", execute)], before_tool_call=before)
    task = asyncio.create_task(agent.prompt("go"))
    await run(asked.wait())
    agent.abort()
    await run(task)
    assert ran == []
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.tool_call_id for r in results] == ["a", "b"] and all(r.is_error for r in results)


async def test_abort_from_another_thread_still_cancels_a_stubborn_tool(faux, short_grace):
    started = asyncio.Event()

    async def stubborn(tool_call_id, params, signal, on_update, ctx):
        started.set()
        await asyncio.Event().wait()

    faux.push([faux_tool_call("stubborn", {}, id="s")])
    agent = make_agent(faux, [make_tool("stubborn", stubborn)])
    task = asyncio.create_task(agent.prompt("go"))
    await run(started.wait())
    thread = threading.Thread(target=agent.abort)
    thread.start()
    thread.join()
    await run(task, timeout=2)
    result = agent.state.messages[-1]
    assert result.is_error and "did not stop" in result.content[0].text
