"""Run state across retries and compaction, queued prompts, and the bugs found at these seams."""

from __future__ import annotations

import asyncio

import pytest

from tests.support.runtime import make_host, recorder, script_with_summaries, start_session, types
from tests.support.waiting import wait_until
from wolli.agent.messages import CustomMessage
from wolli.ai.providers.faux import FauxProvider, faux_error, faux_hang, faux_tool_call


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def states(events):
    return [e.state for e in events if e.type == "run_state"]


async def test_run_state_spans_the_retry_back_off_and_a_prompt_during_it_is_queued(faux, tmp_path):
    host = make_host(faux, retry={"baseDelayMs": 300, "maxDelayMs": 1000})
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push(faux_error("overloaded", kind="overloaded"), "first answer", "second answer")
    run = asyncio.ensure_future(session.prompt("first"))
    await wait_until(lambda: session.run_state == "retrying")
    assert not session.is_idle()
    assert await session.prompt("second") == "queued"
    waiter = asyncio.ensure_future(session.wait_for_idle())
    await asyncio.sleep(0)
    assert not waiter.done()  # the back-off is part of the run
    await asyncio.wait_for(run, timeout=10)
    await asyncio.wait_for(waiter, timeout=10)
    texts = [m.text() for m in session.messages if m.role == "assistant" and m.stop_reason != "error"]
    assert texts == ["first answer", "second answer"]
    assert states(events) == ["running", "retrying", "running", "idle"]
    starts = [e for e in events if e.type == "auto_retry_start"]
    assert starts[0].attempt == 1 and starts[0].max_attempts == 3 and starts[0].error_message == "overloaded"
    assert [e.success for e in events if e.type == "auto_retry_end"] == [True]
    updates = [(e.steering, e.follow_up) for e in events if e.type == "queue_update"]
    assert updates[0] == ([], ["second"]) and updates[-1] == ([], [])


async def test_a_provider_that_keeps_failing_ends_with_the_last_error_and_the_attempts(faux, tmp_path):
    host = make_host(faux, retry={"maxRetries": 2})
    session = await start_session(host, tmp_path, model=faux.model)
    events = recorder(session)
    faux.push(*[faux_error("503 service unavailable", kind="server_error")] * 3)
    await session.prompt("hi")
    assert faux.calls == 3
    [end] = [e for e in events if e.type == "auto_retry_end"]
    assert not end.success and end.attempt == 2 and "503" in end.final_error
    assert session.messages[-1].stop_reason == "error"


async def test_a_status_looking_number_in_a_non_transient_error_is_not_retried(faux, tmp_path):
    session = await start_session(make_host(faux), tmp_path, model=faux.model)
    faux.push(faux_error("400 max_tokens: 512 is too large for this model"))
    await session.prompt("hi")
    assert faux.calls == 1


async def test_a_prompt_while_streaming_is_queued_as_follow_up_or_steer(faux, tmp_path):
    session = await start_session(make_host(faux), tmp_path, model=faux.model)
    events = recorder(session)
    faux.push(faux_hang("working"), "after steer", "after follow up")
    run = asyncio.ensure_future(session.prompt("start"))
    await wait_until(lambda: session.is_streaming)
    assert await session.prompt("please steer", streaming_behavior="steer") == "queued"
    assert await session.prompt("then this") == "queued"
    assert session.queued_texts() == (["please steer"], ["then this"])
    session.agent.abort()  # ends the hanging answer only; the queued messages still run
    await asyncio.wait_for(run, timeout=10)
    assert session.queued_texts() == ([], [])
    assert [m.content for m in session.messages if m.role == "user"] == ["start", "please steer", "then this"]
    answers = [m.text() for m in session.messages if m.role == "assistant" and m.stop_reason == "stop"]
    assert answers == ["after steer", "after follow up"]
    assert "queue_update" in types(events)


async def test_manual_compaction_waits_for_the_running_turn(faux, tmp_path):
    host = make_host(faux, compaction={"keepRecentTokens": 10})
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push("answer one " * 30)
    await session.prompt("question one " * 30)
    release = asyncio.Event()

    async def slow(context, options):
        await release.wait()
        return "answer two"

    faux.push(slow, "## Goal\nSummary.")
    run = asyncio.ensure_future(session.prompt("question two " * 30))
    await wait_until(lambda: session.is_streaming)
    compaction = asyncio.ensure_future(session.compact())
    await asyncio.sleep(0)
    assert not compaction.done() and session.run_state == "running"
    before = list(session.messages)
    release.set()
    await asyncio.wait_for(run, timeout=10)
    result = await asyncio.wait_for(compaction, timeout=10)
    assert result is not None
    assert before[-1].role == "user"  # the loop's messages were not replaced under it
    assert session.messages[0].role == "compactionSummary"


async def test_an_overflow_with_nothing_to_compact_stays_the_answer(faux, tmp_path):
    """Before: the failed answer was dropped before compacting, so the previous answer was
    reported as this run's answer (print mode printed it and exited 0)."""
    session = await start_session(make_host(faux), tmp_path, model=faux.model)
    events = recorder(session)
    faux.push("an earlier answer")
    await session.prompt("first")
    faux.push(faux_error("prompt is too long: 250000 tokens > 200000 maximum", kind="context_overflow"))
    await session.prompt("second")
    last = session.messages[-1]
    assert last.role == "assistant" and last.stop_reason == "error" and "too long" in last.error_message
    ends = [e for e in events if e.type == "compaction_end"]
    assert ends and ends[-1].error_message


async def test_a_full_context_with_nothing_compactable_emits_no_compaction_each_turn(tmp_path):
    small = FauxProvider(provider="faux-small", context_window=400)
    try:
        host = make_host(small, compaction={"reserveTokens": 100, "keepRecentTokens": 10000})
        session = await start_session(host, tmp_path, model=small.model)
        events = recorder(session)
        small.push(
            [faux_tool_call("bash", {"command": "echo one"})],
            [faux_tool_call("bash", {"command": "echo two"})],
            "done " * 200,
        )
        await session.prompt("please work " * 100)
        assert session.messages[-1].text().startswith("done")
        assert "compaction_start" not in types(events)
    finally:
        small.unregister()


async def test_a_triggered_custom_message_gets_its_own_overflow_compaction(faux, tmp_path):
    """Before: the one-shot overflow retry was reset only by prompt(), so a run started by
    send_message(trigger_turn=True) after an overflow could not compact again."""
    host = make_host(faux, compaction={"keepRecentTokens": 10})
    session = await start_session(host, tmp_path, model=faux.model)
    faux.push("one " * 50)
    await session.prompt("q1 " * 50)
    overflow = faux_error("prompt is too long: 999999 tokens > 200000 maximum", kind="context_overflow")
    script_with_summaries(faux, [overflow, "after first compaction"])
    await session.prompt("q2 " * 50)
    assert session.messages[-1].text() == "after first compaction"
    script_with_summaries(faux, [overflow, "after second compaction"])
    await session.send_message(CustomMessage(custom_type="task", content="go on " * 50), trigger_turn=True)
    assert session.messages[-1].text() == "after second compaction"
