"""LiveSession: persistence, resume, retry, compaction and user shell commands (faux LLM, real files)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.runtime import make_host, recorder, script_with_summaries, start_session
from wolli.agent.messages import BashExecutionMessage, convert_to_llm
from wolli.ai.providers.faux import FauxProvider, faux_error, faux_tool_call
from wolli.ai.types import AssistantMessage, ModelCost
from wolli.runtime.live.options import SessionOptions


@pytest.fixture
def faux():
    provider = FauxProvider(cost=ModelCost(input=3, output=15))
    yield provider
    provider.unregister()


async def test_messages_are_persisted_and_resume_restores_model_and_thinking(faux, tmp_path):
    project = tmp_path / "p"
    project.mkdir()
    (project / "a.txt").write_text("alpha\n")
    host = make_host(faux)
    session = await start_session(host, str(project), model=faux.model, thinking_level="high")
    faux.push([faux_tool_call("read", {"path": "a.txt"})], "The file says alpha.")
    await session.prompt("what is in a.txt?")
    assert session.messages[-1].text() == "The file says alpha."
    path = Path(session.session_file)
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert lines[0]["type"] == "session"
    roles = [e["message"]["role"] for e in lines if e["type"] == "message"]
    assert roles == ["user", "assistant", "toolResult", "assistant"]
    assert any(e["type"] == "thinking_level_change" and e["thinkingLevel"] == "high" for e in lines)

    reopened = await start_session(make_host(faux), str(project), session=str(path))
    assert reopened.model is not None and reopened.model.id == faux.model.id
    assert reopened.thinking_level == "high"
    assert [m.role for m in reopened.messages] == ["user", "assistant", "toolResult", "assistant"]
    faux.push("Still alpha.")
    await reopened.prompt("again?")
    sent = faux.contexts[-1].messages
    assert [m.role for m in sent] == ["user", "assistant", "toolResult", "assistant", "user"]


async def test_transient_errors_are_retried_with_events(faux, tmp_path):
    host = make_host(faux)
    session = await start_session(host, str(tmp_path), model=faux.model)
    events = recorder(session)
    faux.push(faux_error("503 Service Unavailable: overloaded"), faux_error("529 overloaded_error"), "Recovered.")
    await session.prompt("hello")
    assert session.messages[-1].text() == "Recovered."
    kinds = [e.type for e in events if e.type.startswith("auto_retry")]
    assert kinds == ["auto_retry_start", "auto_retry_start", "auto_retry_end"]
    end = [e for e in events if e.type == "auto_retry_end"][0]
    assert end.success and end.attempt == 2
    # The failed answers stay in the file but not in the context sent to the model.
    assert all(m.role != "assistant" for m in faux.contexts[-1].messages)


async def test_non_transient_errors_are_not_retried(faux, tmp_path):
    session = await start_session(make_host(faux), str(tmp_path), model=faux.model)
    faux.push(faux_error("401 invalid x-api-key"))
    await session.prompt("hello")
    last = session.messages[-1]
    assert isinstance(last, AssistantMessage) and last.stop_reason == "error"
    assert faux.calls == 1


async def test_context_overflow_compacts_then_retries_once(faux, tmp_path):
    host = make_host(faux, compaction={"keepRecentTokens": 10})
    session = await start_session(host, str(tmp_path), model=faux.model)
    events = recorder(session)
    faux.push("First answer " * 20)
    await session.prompt("first question " * 20)
    script_with_summaries(
        faux, [faux_error("prompt is too long: 250000 tokens > 200000 maximum"), "Answer after compaction."]
    )
    await session.prompt("second question")
    assert session.messages[-1].text() == "Answer after compaction."
    starts = [e for e in events if e.type == "compaction_start"]
    assert [e.reason for e in starts] == ["overflow"]
    assert session.messages[0].role == "compactionSummary"
    entries = session.session_manager.get_entries()
    assert any(e.type == "compaction" for e in entries)


async def test_threshold_compaction_runs_inside_a_long_tool_loop(faux, tmp_path):
    small = FauxProvider(provider="faux-small", context_window=3000)
    try:
        host = make_host(small, compaction={"reserveTokens": 1000, "keepRecentTokens": 200})
        (tmp_path / "big.txt").write_text("word " * 2000)
        session = await start_session(host, str(tmp_path), model=small.model)
        events = recorder(session)
        script_with_summaries(
            small,
            [[faux_tool_call("read", {"path": "big.txt"})], [faux_tool_call("bash", {"command": "echo done"})], "All done."],
        )
        await session.prompt("read big.txt then say done")
        assert session.messages[-1].text() == "All done."
        reasons = [e.reason for e in events if e.type == "compaction_start"]
        assert reasons and reasons[0] == "threshold"
        turn_ends = [i for i, e in enumerate(events) if e.type == "turn_end"]
        first_compaction = next(i for i, e in enumerate(events) if e.type == "compaction_end")
        assert turn_ends[0] < first_compaction < turn_ends[-1]
    finally:
        small.unregister()


async def test_user_bash_commands_kept_or_excluded_from_context(faux, tmp_path):
    session = await start_session(make_host(faux), str(tmp_path), model=faux.model)
    kept = await session.run_bash("echo visible")
    hidden = await session.run_bash("echo secret", exclude_from_context=True)
    assert isinstance(kept, BashExecutionMessage) and kept.output.strip() == "visible" and kept.exit_code == 0
    assert hidden.exclude_from_context
    faux.push("ok")
    await session.prompt("what did I run?")
    text = json.dumps([m.to_json_dict() for m in faux.contexts[-1].messages])
    assert "visible" in text and "secret" not in text
    assert len(convert_to_llm([kept, hidden])) == 1


async def test_model_and_thinking_changes_emit_events_and_clamp(faux, tmp_path):
    plain = FauxProvider(provider="faux-plain", reasoning=False)
    try:
        host = make_host(faux)
        session = await start_session(host, str(tmp_path), model=faux.model, thinking_level="medium")
        events = recorder(session)
        await session.set_model(plain.model)
        assert session.thinking_level == "off"
        types = [e.type for e in events]
        assert types == ["thinking_level_select", "model_select"]
        await session.set_thinking_level("high")
        assert session.thinking_level == "off"  # a model without reasoning stays off
    finally:
        plain.unregister()


async def test_before_compact_hook_can_cancel_or_supply_the_summary(faux, tmp_path):
    session = await start_session(make_host(faux, compaction={"keepRecentTokens": 10}), str(tmp_path), model=faux.model)
    faux.push("answer one " * 30, "answer two " * 30)
    await session.prompt("question one " * 30)
    await session.prompt("question two " * 30)

    async def cancel(event, ctx):
        return {"cancel": True}

    remove = session.services.handlers.add("session_before_compact", cancel)
    assert await session.compact() is None
    remove()

    async def supply(event, ctx):
        assert event.custom_instructions == "focus on tests"
        assert ctx.session.id == session.session_id
        return {"compaction": {"summary": "Hand-written summary.",
                               "first_kept_entry_id": event.preparation.first_kept_entry_id}}

    session.services.handlers.add("session_before_compact", supply)
    calls_before = faux.calls
    result = await session.compact("focus on tests")
    assert result is not None and result.summary == "Hand-written summary."
    assert faux.calls == calls_before  # no LLM call for a supplied summary
    assert session.messages[0].role == "compactionSummary"


async def test_host_keeps_several_resident_sessions(faux, tmp_path):
    host = make_host(faux)
    one = await start_session(host, str(tmp_path), model=faux.model)
    two = await host.create_session(SessionOptions(cwd=str(tmp_path), model=faux.model, persist=False))
    assert host.get_session(one.session_id) is one and host.get_session(two.session_id) is two
    assert one.session_id != two.session_id
    faux.push("from one", "from two")
    await one.prompt("a")
    await two.prompt("b")
    assert one.messages[-1].text() == "from one" and two.messages[-1].text() == "from two"
    assert two.session_file is None


async def test_active_tools_and_added_tools_reach_the_model_and_the_prompt(faux, tmp_path):
    from pydantic import BaseModel

    from wolli.agent.tool import ToolDefinition

    class NoArgs(BaseModel):
        pass

    session = await start_session(make_host(faux), str(tmp_path), model=faux.model)
    assert session.set_active_tools(["read", "nope"]) == ["nope"]
    faux.push("one")
    await session.prompt("a")
    assert [t.name for t in faux.contexts[-1].tools] == ["read"]
    assert "- bash:" not in faux.contexts[-1].system_prompt

    ping = ToolDefinition("ping", "Answer pong.", NoArgs, lambda *a: "pong", prompt_snippet="Check liveness")
    session.add_tools([ping])
    faux.push([faux_tool_call("ping", {})], "two")
    await session.prompt("b")
    assert sorted(t.name for t in faux.contexts[-1].tools) == ["ping", "read"]
    assert "- ping: Check liveness" in faux.contexts[-1].system_prompt
    result = [m for m in session.messages if m.role == "toolResult"][-1]
    assert result.content[0].text == "pong" and not result.is_error


async def test_custom_messages_join_context_and_file_or_trigger_a_turn(faux, tmp_path):
    from wolli.agent.messages import CustomMessage

    session = await start_session(make_host(faux), str(tmp_path), model=faux.model)
    events = recorder(session)
    faux.push("first")
    await session.prompt("hello")
    await session.send_message(CustomMessage(custom_type="note", content="remember the milk"))
    assert [e.type for e in events[-2:]] == ["message_start", "message_end"]
    assert faux.calls == 1
    faux.push("acting on it")
    await session.send_message(CustomMessage(custom_type="task", content="do the task"), trigger_turn=True)
    sent = json.dumps([m.to_json_dict() for m in faux.contexts[-1].messages])
    assert "remember the milk" in sent and "do the task" in sent
    kinds = [e.type for e in session.session_manager.get_entries()]
    assert kinds.count("custom_message") == 2


async def test_closing_a_resident_session_forgets_it(faux, tmp_path):
    host = make_host(faux)
    live = await start_session(host, str(tmp_path), model=faux.model, persist=False)
    await host.close_session(live)
    assert host.get_session(live.session_id) is None and host.active is None
    assert live.closed
