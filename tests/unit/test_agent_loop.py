"""The agent loop: turns, events, queues, control and the context each model call sees.

Only the LLM is scripted (the faux provider); ``faux.contexts`` shows what the model was
sent on each call.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.unit._agent_loop_helpers import (
    Recorder,
    make_agent,
    make_tool,
    run,
    text_result,
    texts,
    tool_results,
    wait_until,
)
from wolli.agent.agent import Agent, AgentBusyError
from wolli.agent.messages import (
    BashExecutionMessage,
    BranchSummaryMessage,
    CompactionSummaryMessage,
    CustomMessage,
    convert_to_llm,
)
from wolli.ai.providers.faux import FauxProvider, faux_error, faux_hang, faux_tool_call
from wolli.ai.types import AssistantMessage, ImageContent, TextContent, ToolResultMessage, UserMessage


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def echo_tool(log: list[str] | None = None):
    async def execute(tool_call_id, params, signal, on_update, ctx):
        if log is not None:
            log.append(params.get("text", ""))
        return text_result(f"echo: {params.get('text', '')}")

    return make_tool("echo", execute, {"type": "object", "properties": {"text": {"type": "string"}}})


# ---------------------------------------------------------------------------- basics


async def test_text_answer_emits_the_lifecycle_in_order(faux):
    faux.push("Hello there, friend.")
    agent = make_agent(faux, system_prompt="Be brief.")
    rec = Recorder(agent)
    await run(agent.prompt("hi"))

    kinds = [k for k in rec.types() if k != "message_update"]
    assert kinds == [
        "agent_start", "turn_start", "message_start", "message_end",
        "message_start", "message_end", "turn_end", "agent_end",
    ]
    assert "message_update" in rec.types()
    updates = rec.of("message_update")
    assert all(rec.index("message_start") < rec.events.index(u) for u in updates)
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    assert agent.state.messages[-1].text() == "Hello there, friend."
    assert rec.of("agent_end")[0].messages == agent.state.messages
    turn_end = rec.of("turn_end")[0]
    assert turn_end.message is agent.state.messages[-1] and turn_end.tool_results == []
    assert faux.contexts[0].system_prompt == "Be brief."
    assert texts(faux.contexts[0]) == [("user", "hi")]
    assert not agent.is_streaming and agent.state.stream_message is None


async def test_turns_repeat_while_the_model_calls_tools(faux):
    log: list[str] = []
    faux.push(
        [faux_tool_call("echo", {"text": "one"}, id="c1")],
        [faux_tool_call("echo", {"text": "two"}, id="c2")],
        "All done.",
    )
    agent = make_agent(faux, [echo_tool(log)])
    rec = Recorder(agent)
    await run(agent.prompt("go"))

    assert log == ["one", "two"] and faux.calls == 3
    assert [m.role for m in agent.state.messages] == [
        "user", "assistant", "toolResult", "assistant", "toolResult", "assistant",
    ]
    turn_ends = rec.of("turn_end")
    assert [e.turn_index for e in rec.of("turn_start")] == [0, 1, 2]
    assert [[r.tool_call_id for r in e.tool_results] for e in turn_ends] == [["c1"], ["c2"], []]
    assert turn_ends[0].message.stop_reason == "toolUse"
    assert texts(faux.contexts[1])[-1] == ("toolResult", "echo: one")
    assert [t.name for t in faux.contexts[0].tools] == ["echo"]
    assert len(rec.of("agent_start")) == 1 and len(rec.of("agent_end")) == 1


async def test_provider_error_ends_the_run_without_running_tools(faux):
    ran: list[str] = []
    faux.push(faux_error("boom: upstream failed", faux_tool_call("echo", {"text": "x"})))
    agent = make_agent(faux, [echo_tool(ran)])
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    last = agent.state.messages[-1]
    assert last.stop_reason == "error" and last.error_message == "boom: upstream failed"
    assert agent.state.error == "boom: upstream failed"
    assert ran == [] and faux.calls == 1
    assert rec.of("turn_end")[0].tool_results == []
    assert rec.types()[-1] == "agent_end"


async def test_failing_transform_becomes_an_error_message(faux):
    async def transform(messages, signal):
        raise RuntimeError("transform exploded")

    agent = make_agent(faux, transform_context=transform)
    rec = Recorder(agent)
    await run(agent.prompt("hi"))
    last = agent.state.messages[-1]
    assert last.stop_reason == "error" and "transform exploded" in last.error_message
    assert faux.calls == 0
    # message_start/end still pair up for the failed assistant message
    assert [e.message.role for e in rec.of("message_start")] == ["user", "assistant"]
    assert [e.message.role for e in rec.of("message_end")] == ["user", "assistant"]


async def test_prompt_accepts_strings_images_messages_and_lists(faux):
    faux.push("a", "b", "c")
    agent = make_agent(faux)
    image = ImageContent(data="aGk=", mime_type="image/png")
    await run(agent.prompt("look", images=[image]))
    sent = faux.contexts[0].messages[-1]
    assert isinstance(sent, UserMessage) and sent.content[1] == image
    await run(agent.prompt(UserMessage(content="second")))
    await run(agent.prompt([UserMessage(content="x"), {"role": "user", "content": "y"}]))
    assert texts(faux.contexts[2])[-2:] == [("user", "x"), ("user", "y")]


async def test_no_model_is_a_clear_error():
    agent = Agent()
    with pytest.raises(ValueError, match="No model"):
        await agent.prompt("hi")
    assert not agent.is_streaming


# ---------------------------------------------------------------------------- hooks into the call


async def test_transform_context_changes_what_the_model_sees_not_the_transcript(faux):
    faux.push("first", "second")
    seen: list[int] = []

    async def transform(messages, signal):
        seen.append(len(messages))
        kept = [m for m in messages if not (isinstance(m, UserMessage) and m.content == "drop me")]
        messages.clear()  # the hook gets its own list; copying messages is the hook's choice
        return kept

    agent = make_agent(faux, transform_context=transform)
    agent.append_message(UserMessage(content="drop me"))
    agent.append_message(AssistantMessage(content=[TextContent(text="ok")], api="faux", provider="faux", model="faux-1"))
    await run(agent.prompt("keep me"))
    assert texts(faux.contexts[0]) == [("assistant", "ok"), ("user", "keep me")]
    assert agent.state.messages[0].content == "drop me"
    assert seen == [3]


async def test_on_payload_api_key_reasoning_and_options_reach_the_provider(faux):
    faux.push("x", "y")

    def hook(payload, model):
        return payload

    async def get_key(provider):
        return f"key-for-{provider}"

    agent = make_agent(
        faux, on_payload=hook, get_api_key=get_key, session_id="s-1",
        thinking_level="high", stream_options={"max_tokens": 123, "temperature": 0.5},
    )
    await run(agent.prompt("hi"))
    options = faux.options[0]
    assert options.on_payload is hook
    assert options.api_key == "key-for-faux"
    assert options.session_id == "s-1" and options.reasoning == "high"
    assert options.max_tokens == 123 and options.temperature == 0.5
    assert options.signal is not None and not options.signal.aborted

    agent.set_thinking_level("off")
    agent.get_api_key = lambda provider: "sync-key"
    await run(agent.prompt("again"))
    assert faux.options[1].reasoning is None and faux.options[1].api_key == "sync-key"


async def test_message_end_listener_can_replace_the_message(faux):
    faux.push("original answer")
    agent = make_agent(faux)

    def listener(event):
        if event.type != "message_end":
            return
        if event.message.role == "assistant":
            event.message = event.message.model_copy(update={"content": [TextContent(text="replaced")]})
        elif event.message.role == "user":
            event.message = AssistantMessage(content=[TextContent(text="wrong role")])  # rejected

    agent.subscribe(listener)
    rec = Recorder(agent)
    await run(agent.prompt("hi"))
    assert [m.role for m in agent.state.messages] == ["user", "assistant"]
    assert agent.state.messages[1].text() == "replaced"
    assert rec.of("agent_end")[0].messages[1].text() == "replaced"
    assert rec.of("turn_end")[0].message.text() == "replaced"


async def test_message_end_replacement_targets_the_very_message_even_if_an_equal_one_exists(faux):
    faux.push("one", "two")
    agent = make_agent(faux)
    first = UserMessage(content="same", timestamp=1)
    agent.append_message(first)
    agent.append_message(AssistantMessage(content=[TextContent(text="one")]))

    def listener(event):
        if event.type == "message_end" and event.message.role == "user":
            event.message = UserMessage(content="patched", timestamp=1)

    agent.subscribe(listener)
    await run(agent.prompt(UserMessage(content="same", timestamp=1)))
    assert agent.state.messages[0] is first
    assert agent.state.messages[2].content == "patched"


async def test_unsubscribe_stops_delivery(faux):
    faux.push("a", "b")
    agent = make_agent(faux)
    seen: list[str] = []
    unsubscribe = agent.subscribe(lambda e: seen.append(e.type))
    await run(agent.prompt("one"))
    count = len(seen)
    unsubscribe()
    await run(agent.prompt("two"))
    assert len(seen) == count > 0


# ---------------------------------------------------------------------------- steering


async def _steering_run(faux: FauxProvider, mode: str) -> tuple[Agent, Recorder]:
    agent = make_agent(faux, steering_mode=mode)

    async def execute(tool_call_id, params, signal, on_update, ctx):
        agent.steer("steer one")
        agent.steer("steer two")
        return text_result("tool done")

    agent.set_tools([make_tool("work", execute)])
    faux.push([faux_tool_call("work", {}, id="w1")], "after one", "after two")
    rec = Recorder(agent)
    await run(agent.prompt("start"))
    return agent, rec


async def test_steering_one_at_a_time_is_delivered_after_the_batch(faux):
    agent, rec = await _steering_run(faux, "one-at-a-time")
    assert faux.calls == 3
    assert texts(faux.contexts[1])[-2:] == [("toolResult", "tool done"), ("user", "steer one")]
    assert texts(faux.contexts[2])[-2:] == [("assistant", "after one"), ("user", "steer two")]
    assert agent.pending_message_count == 0
    # the steering message is pushed inside the next turn, before its LLM call
    start = rec.index("turn_start", lambda e: e.turn_index == 1)
    steer = rec.index("message_start", lambda e: getattr(e.message, "content", None) == "steer one")
    assert start < steer


async def test_steering_all_delivers_the_whole_queue_at_once(faux):
    agent, _ = await _steering_run(faux, "all")
    assert faux.calls == 2
    assert texts(faux.contexts[1])[-3:] == [
        ("toolResult", "tool done"), ("user", "steer one"), ("user", "steer two"),
    ]
    assert faux.pending == 1  # "after two" was never asked for


async def test_steering_during_a_text_answer_starts_another_turn(faux):
    faux.push("first answer", "second")
    agent = make_agent(faux)
    steered = False

    def listener(event):
        nonlocal steered
        if event.type == "message_update" and not steered:
            steered = True
            agent.steer("change of plan")

    agent.subscribe(listener)
    await run(agent.prompt("go"))
    assert faux.calls == 2
    assert texts(faux.contexts[1])[-2:] == [("assistant", "first answer"), ("user", "change of plan")]


# ---------------------------------------------------------------------------- follow-ups


async def _follow_up_run(faux: FauxProvider, mode: str) -> Agent:
    agent = make_agent(faux, follow_up_mode=mode)

    async def execute(tool_call_id, params, signal, on_update, ctx):
        agent.follow_up("later one")
        agent.follow_up("later two")
        return text_result("tool done")

    agent.set_tools([make_tool("work", execute)])
    faux.push([faux_tool_call("work", {}, id="w1")], "answer", "answer one", "answer two")
    await run(agent.prompt("start"))
    return agent


async def test_follow_ups_wait_until_the_agent_would_stop(faux):
    agent = await _follow_up_run(faux, "one-at-a-time")
    assert faux.calls == 4
    # not after the tool batch: the model continued on its own first
    assert texts(faux.contexts[1])[-1] == ("toolResult", "tool done")
    assert texts(faux.contexts[2])[-2:] == [("assistant", "answer"), ("user", "later one")]
    assert texts(faux.contexts[3])[-2:] == [("assistant", "answer one"), ("user", "later two")]
    assert agent.state.messages[-1].text() == "answer two"


async def test_follow_ups_all_arrive_together(faux):
    await _follow_up_run(faux, "all")
    assert faux.calls == 3
    assert texts(faux.contexts[2])[-3:] == [("assistant", "answer"), ("user", "later one"), ("user", "later two")]


async def test_steering_wins_over_follow_ups_and_clear_queues_returns_both(faux):
    agent = make_agent(faux)
    agent.follow_up("f")
    agent.steer("s")
    assert agent.pending_message_count == 2
    steering, follow_ups = agent.clear_queues()
    assert [m.content for m in steering] == ["s"] and [m.content for m in follow_ups] == ["f"]
    assert agent.pending_message_count == 0


# ---------------------------------------------------------------------------- control


async def test_prompt_and_continue_while_running_raise_busy(faux):
    faux.push(faux_hang("streaming"))
    agent = make_agent(faux)
    task = asyncio.create_task(agent.prompt("hi"))
    await wait_until(lambda: agent.is_streaming)
    with pytest.raises(AgentBusyError):
        await agent.prompt("again")
    with pytest.raises(AgentBusyError):
        await agent.continue_()
    agent.abort()
    await run(task)
    assert not agent.is_streaming


async def test_wait_for_idle_returns_when_the_run_ends(faux):
    release = asyncio.Event()

    async def execute(tool_call_id, params, signal, on_update, ctx):
        await release.wait()
        return "released"

    faux.push([faux_tool_call("slow", {})], "done")
    agent = make_agent(faux, [make_tool("slow", execute)])
    await run(agent.wait_for_idle())  # idle before anything runs
    task = asyncio.create_task(agent.prompt("go"))
    await wait_until(lambda: agent.state.pending_tool_calls)
    waiter = asyncio.create_task(agent.wait_for_idle())
    await asyncio.sleep(0)
    assert not waiter.done()
    release.set()
    await run(waiter)
    assert task.done() and not agent.is_streaming
    assert agent.state.messages[-1].text() == "done"


async def test_continue_rules(faux):
    agent = make_agent(faux)
    with pytest.raises(ValueError, match="empty"):
        await agent.continue_()

    # from a user message: just calls the model
    agent.append_message(UserMessage(content="pending question"))
    faux.push("answer")
    await run(agent.continue_())
    assert texts(faux.contexts[0]) == [("user", "pending question")]

    # from an assistant message with nothing queued: refused, nothing sent
    with pytest.raises(ValueError, match="assistant"):
        await agent.continue_()
    assert faux.calls == 1

    # from an assistant message with a queued follow-up: delivers it
    agent.follow_up("queued")
    faux.push("answer two")
    await run(agent.continue_())
    assert texts(faux.contexts[1])[-1] == ("user", "queued")

    # from a tool result: the model answers it
    agent.append_message(AssistantMessage(content=[faux_tool_call("echo", {}, id="t9")], stop_reason="toolUse"))
    agent.append_message(ToolResultMessage(tool_call_id="t9", tool_name="echo", content=[TextContent(text="r")]))
    faux.push("saw the result")
    await run(agent.continue_())
    assert texts(faux.contexts[2])[-1] == ("toolResult", "r")
    assert agent.state.messages[-1].text() == "saw the result"


async def test_abort_when_idle_is_harmless_and_the_next_run_is_fresh(faux):
    agent = make_agent(faux)
    agent.abort()
    faux.push("fine")
    await run(agent.prompt("hi"))
    assert agent.state.messages[-1].stop_reason == "stop"
    assert agent.signal is None


async def test_state_setters(faux):
    other = FauxProvider(provider="faux-other", register=False)
    agent = make_agent(faux)
    agent.set_model(other.model)
    agent.set_system_prompt("sys")
    agent.set_thinking_level("low")
    agent.replace_messages([UserMessage(content="x")])
    assert agent.state.model is other.model and agent.state.system_prompt == "sys"
    assert agent.state.thinking_level == "low" and len(agent.state.messages) == 1


# ---------------------------------------------------------------------------- convert_to_llm


def test_convert_to_llm_maps_agent_messages_to_user_messages():
    user = UserMessage(content="hi")
    bash = BashExecutionMessage(command="ls", output="a.txt", exit_code=2, timestamp=5)
    hidden = BashExecutionMessage(command="secret", output="x", exclude_from_context=True)
    cancelled = BashExecutionMessage(command="sleep 9", output="", cancelled=True)
    truncated = BashExecutionMessage(command="cat big", output="tail", truncated=True, full_output_path="/tmp/o.txt")
    custom = CustomMessage(custom_type="note", content="remember this", display=False)
    custom_blocks = CustomMessage(custom_type="img", content=[ImageContent(data="aGk=", mime_type="image/png")])
    empty_custom = CustomMessage(custom_type="marker", content="")
    branch = BranchSummaryMessage(summary="we tried X")
    compaction = CompactionSummaryMessage(summary="earlier work", tokens_before=1000)
    out = convert_to_llm([user, bash, hidden, cancelled, truncated, custom, custom_blocks, empty_custom, branch, compaction])

    assert out[0] is user
    assert all(isinstance(m, UserMessage) for m in out)
    assert len(out) == 8  # hidden bash and the empty custom message are dropped
    assert out[1].content[0].text == "Ran `ls`\n```\na.txt\n```\n\nCommand exited with code 2"
    assert out[1].timestamp == 5
    assert out[2].content[0].text == "Ran `sleep 9`\n(no output)\n\n(command cancelled)"
    assert out[3].content[0].text.endswith("[Output truncated. Full output: /tmp/o.txt]")
    assert out[4].content[0].text == "remember this"  # display=False is a UI flag only
    assert out[5].content[0].type == "image"
    assert "<summary>\nwe tried X\n</summary>" in out[6].content[0].text
    assert "compacted" in out[7].content[0].text and "earlier work" in out[7].content[0].text


async def test_agent_sends_converted_messages_to_the_model(faux):
    faux.push("ok")
    agent = make_agent(faux)
    agent.append_message(BashExecutionMessage(command="pwd", output="/work", exit_code=0))
    agent.append_message(BashExecutionMessage(command="env", output="SECRET", exclude_from_context=True))
    agent.append_message(CustomMessage(custom_type="note", content="from an extension"))
    await run(agent.prompt("hi"))
    sent = texts(faux.contexts[0])
    assert sent == [("user", "Ran `pwd`\n```\n/work\n```"), ("user", "from an extension"), ("user", "hi")]
    assert not any("SECRET" in text for _, text in sent)
    assert tool_results(faux.contexts[0]) == []
    # the transcript keeps the original kinds
    assert [m.role for m in agent.state.messages][:3] == ["bashExecution", "bashExecution", "custom"]
