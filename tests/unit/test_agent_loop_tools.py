"""Tool execution inside the agent loop: ordering, modes, errors, termination, interception."""

from __future__ import annotations

import asyncio
import threading

import pytest
from pydantic import BaseModel, Field

from tests.unit._agent_loop_helpers import (
    Recorder,
    make_agent,
    make_tool,
    run,
    text_result,
    texts,
    tool_results,
)
from wolli.agent.tool import ToolResult
from wolli.agent.tool_execution import AfterToolCallResult, BeforeToolCallResult
from wolli.ai.providers.faux import FauxProvider, faux_tool_call
from wolli.ai.types import ImageContent, TextContent


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


class StepArgs(BaseModel):
    name: str
    after: str | None = None


def chained_tool(log: list[str]):
    """Each call waits for the call named in ``after`` to finish: completion order is forced."""
    finished: dict[str, asyncio.Event] = {}

    def event(name: str) -> asyncio.Event:
        return finished.setdefault(name, asyncio.Event())

    async def execute(tool_call_id, params: StepArgs, signal, on_update, ctx):
        log.append(f"start {params.name}")
        if params.after:
            await event(params.after).wait()
        log.append(f"end {params.name}")
        event(params.name).set()
        return text_result(f"did {params.name}")

    return make_tool("step", execute, StepArgs)


def reverse_batch(faux: FauxProvider) -> None:
    faux.push(
        [
            faux_tool_call("step", {"name": "a", "after": "b"}, id="a"),
            faux_tool_call("step", {"name": "b", "after": "c"}, id="b"),
            faux_tool_call("step", {"name": "c"}, id="c"),
        ],
        "finished",
    )


# ---------------------------------------------------------------------------- ordering


async def test_parallel_batch_orders_starts_ends_and_results(faux):
    log: list[str] = []
    reverse_batch(faux)
    agent = make_agent(faux, [chained_tool(log)])
    rec = Recorder(agent)
    await run(agent.prompt("go"))  # a sequential loop would deadlock here and time out

    starts = rec.of("tool_execution_start")
    ends = rec.of("tool_execution_end")
    assert [e.tool_call_id for e in starts] == ["a", "b", "c"]  # source order
    assert [e.tool_call_id for e in ends] == ["c", "b", "a"]  # completion order
    last_start = max(rec.events.index(e) for e in starts)
    assert last_start < min(rec.events.index(e) for e in ends)  # all preflighted first
    assert log[:3] == ["start a", "start b", "start c"]  # and really concurrent

    # result messages in source order: here the first call ends last, so all follow every end
    result_starts = [e for e in rec.of("message_start") if e.message.role == "toolResult"]
    assert [e.message.tool_call_id for e in result_starts] == ["a", "b", "c"]
    assert rec.events.index(result_starts[0]) > max(rec.events.index(e) for e in ends)
    assert [r.tool_call_id for r in rec.of("turn_end")[0].tool_results] == ["a", "b", "c"]
    assert [r.tool_call_id for r in tool_results(faux.contexts[1])] == ["a", "b", "c"]
    assert [r.content[0].text for r in tool_results(faux.contexts[1])] == ["did a", "did b", "did c"]
    assert ends[0].result.content[0].text == "did c" and ends[0].is_error is False


async def test_a_finished_result_is_delivered_while_a_later_sibling_still_runs(faux):
    """The session saves what message_end carries: a crash mid-batch must not lose a result
    that was already done (issue: crash safety)."""
    from tests.unit._agent_loop_helpers import wait_until

    released = asyncio.Event()

    async def execute(tool_call_id, params, signal, on_update, ctx):
        if tool_call_id == "slow":
            await released.wait()
        return text_result(f"did {tool_call_id}")

    faux.push([faux_tool_call("job", {}, id="fast"), faux_tool_call("job", {}, id="slow")], "finished")
    agent = make_agent(faux, [make_tool("job", execute)])
    rec = Recorder(agent)
    task = asyncio.ensure_future(agent.prompt("go"))
    await wait_until(lambda: any(e.type == "message_end" and e.message.role == "toolResult" for e in rec.events),
                     5, "the fast result delivered")
    ended = [e.tool_call_id for e in rec.of("tool_execution_end")]
    assert ended == ["fast"]  # the slow one is still running
    released.set()
    await run(task)
    results = [e.message.tool_call_id for e in rec.of("message_end") if e.message.role == "toolResult"]
    assert results == ["fast", "slow"]
    assert [r.tool_call_id for r in tool_results(faux.contexts[1])] == ["fast", "slow"]


def interleaving_tool(log: list[str], name: str = "tick", **kwargs):
    async def execute(tool_call_id, params, signal, on_update, ctx):
        log.append(f"start {tool_call_id}")
        for _ in range(3):
            await asyncio.sleep(0)
        log.append(f"end {tool_call_id}")
        return text_result(tool_call_id)

    return make_tool(name, execute, **kwargs)


async def test_sequential_mode_runs_one_call_at_a_time(faux):
    log: list[str] = []
    faux.push([faux_tool_call("tick", {}, id="x"), faux_tool_call("tick", {}, id="y")], "done")
    agent = make_agent(faux, [interleaving_tool(log)], tool_execution="sequential")
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    assert log == ["start x", "end x", "start y", "end y"]
    tool_events = [(e.type, e.tool_call_id) for e in rec.events if e.type.startswith("tool_execution")]
    assert tool_events == [
        ("tool_execution_start", "x"), ("tool_execution_end", "x"),
        ("tool_execution_start", "y"), ("tool_execution_end", "y"),
    ]


async def test_parallel_mode_interleaves_the_same_tools(faux):
    log: list[str] = []
    faux.push([faux_tool_call("tick", {}, id="x"), faux_tool_call("tick", {}, id="y")], "done")
    agent = make_agent(faux, [interleaving_tool(log)])
    await run(agent.prompt("go"))
    assert log[:2] == ["start x", "start y"]


async def test_a_sequential_tool_makes_its_batch_sequential(faux):
    log: list[str] = []
    faux.push([faux_tool_call("tick", {}, id="x"), faux_tool_call("lock", {}, id="y")], "done")
    tools = [interleaving_tool(log), interleaving_tool(log, "lock", execution="sequential")]
    agent = make_agent(faux, tools)
    await run(agent.prompt("go"))
    assert log == ["start x", "end x", "start y", "end y"]


async def test_sequential_interceptor_sees_the_previous_call_finished(faux):
    log: list[str] = []
    faux.push([faux_tool_call("tick", {}, id="x"), faux_tool_call("tick", {}, id="y")], "done")

    async def before(ctx, signal):
        log.append(f"check {ctx.tool_call.id}")

    agent = make_agent(faux, [interleaving_tool(log)], tool_execution="sequential", before_tool_call=before)
    await run(agent.prompt("go"))
    assert log == ["check x", "start x", "end x", "check y", "start y", "end y"]


# ---------------------------------------------------------------------------- terminate


def finisher(terminate_flags: dict[str, bool]):
    async def execute(tool_call_id, params, signal, on_update, ctx):
        return ToolResult(content=[TextContent(text="final")], terminate=terminate_flags[tool_call_id])

    return make_tool("finish", execute)


async def test_batch_where_every_result_terminates_ends_the_loop(faux):
    faux.push([faux_tool_call("finish", {}, id="p"), faux_tool_call("finish", {}, id="q")], "never asked")
    agent = make_agent(faux, [finisher({"p": True, "q": True})])
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    assert faux.calls == 1 and faux.pending == 1
    assert agent.state.messages[-1].role == "toolResult"
    assert rec.types()[-2:] == ["turn_end", "agent_end"]


async def test_batch_where_only_some_results_terminate_continues(faux):
    faux.push([faux_tool_call("finish", {}, id="p"), faux_tool_call("finish", {}, id="q")], "carried on")
    agent = make_agent(faux, [finisher({"p": True, "q": False})])
    await run(agent.prompt("go"))
    assert faux.calls == 2 and agent.state.messages[-1].text() == "carried on"


async def test_terminate_waits_for_follow_ups_too(faux):
    """A terminating batch stops the run; queued follow-ups stay queued (nothing lost)."""
    faux.push([faux_tool_call("finish", {}, id="p")])
    agent = make_agent(faux, [finisher({"p": True})])
    agent.follow_up("later")
    await run(agent.prompt("go"))
    assert faux.calls == 1 and agent.pending_message_count == 1


# ---------------------------------------------------------------------------- errors the model sees


class ReadArgs(BaseModel):
    path: str
    limit: int = Field(default=10, ge=1)


async def test_pydantic_validation_error_reaches_the_model(faux):
    ran: list[object] = []

    async def execute(tool_call_id, params, signal, on_update, ctx):
        ran.append(params)
        return "read"

    faux.push([faux_tool_call("read", {"limit": 0}, id="r1")], "I will fix it")
    agent = make_agent(faux, [make_tool("read", execute, ReadArgs)])
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    assert ran == []
    [result] = tool_results(faux.contexts[1])
    assert result.is_error and result.tool_call_id == "r1"
    text = result.content[0].text
    assert 'Validation failed for tool "read"' in text
    assert "path: Field required" in text and "limit:" in text
    assert '"limit": 0' in text  # the received arguments are echoed back
    assert rec.of("tool_execution_end")[0].is_error


async def test_json_schema_validation_error_reaches_the_model(faux):
    schema = {
        "type": "object",
        "properties": {"command": {"type": "string"}, "timeout": {"type": "integer"}},
        "required": ["command"],
        "additionalProperties": False,
    }
    got: list[object] = []

    async def execute(tool_call_id, params, signal, on_update, ctx):
        got.append(params)
        return "ran"

    faux.push(
        [faux_tool_call("bash", {"command": 5, "extra": 1}, id="b1"), faux_tool_call("bash", {"command": "ls"}, id="b2")],
        "ok",
    )
    agent = make_agent(faux, [make_tool("bash", execute, schema)])
    await run(agent.prompt("go"))
    bad, good = tool_results(faux.contexts[1])
    assert bad.is_error and "command: 5 is not of type 'string'" in bad.content[0].text
    assert "Additional properties are not allowed" in bad.content[0].text
    assert not good.is_error and good.content[0].text == "ran"
    assert got == [{"command": "ls"}]  # dict schemas pass the dict through


async def test_unknown_tool_is_an_error_result(faux):
    faux.push([faux_tool_call("nope", {"x": 1}, id="n1")], "sorry")
    agent = make_agent(faux, [make_tool("real", lambda *a: "x")])
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    [result] = tool_results(faux.contexts[1])
    assert result.is_error and result.tool_name == "nope"
    assert result.content[0].text == "Tool nope not found. Available tools: real"
    assert [e.type for e in rec.events if getattr(e, "tool_call_id", None) == "n1"] == [
        "tool_execution_start", "tool_execution_end",
    ]


async def test_raising_tool_becomes_an_error_result_and_siblings_still_run(faux):
    async def broken(tool_call_id, params, signal, on_update, ctx):
        raise RuntimeError("disk on fire")

    async def fine(tool_call_id, params, signal, on_update, ctx):
        return "fine"

    faux.push([faux_tool_call("broken", {}, id="x"), faux_tool_call("fine", {}, id="y")], "noted")
    agent = make_agent(faux, [make_tool("broken", broken), make_tool("fine", fine)])
    await run(agent.prompt("go"))
    bad, good = tool_results(faux.contexts[1])
    assert bad.is_error and bad.content[0].text == "disk on fire"
    assert not good.is_error and good.content[0].text == "fine"
    assert agent.state.messages[-1].text() == "noted"


async def test_broken_prepare_arguments_is_an_error_result(faux):
    def prepare(args):
        raise KeyError("legacy")

    faux.push([faux_tool_call("t", {}, id="x")], "ok")
    agent = make_agent(faux, [make_tool("t", lambda *a: "never", prepare_arguments=prepare)])
    await run(agent.prompt("go"))
    [result] = tool_results(faux.contexts[1])
    assert result.is_error and "Could not prepare arguments" in result.content[0].text


async def test_prepare_arguments_fixes_legacy_input_before_validation(faux):
    seen: list[ReadArgs] = []

    async def execute(tool_call_id, params, signal, on_update, ctx):
        seen.append(params)
        return "ok"

    def prepare(args):
        if "file" in args:
            args["path"] = args.pop("file")
        return args

    faux.push([faux_tool_call("read", {"file": "a.txt"}, id="x")], "ok")
    agent = make_agent(faux, [make_tool("read", execute, ReadArgs, prepare_arguments=prepare)])
    await run(agent.prompt("go"))
    assert seen == [ReadArgs(path="a.txt")]
    # the transcript keeps what the model actually sent
    assert agent.state.messages[1].tool_calls()[0].arguments == {"file": "a.txt"}


# ---------------------------------------------------------------------------- sync tools, updates, results


async def test_sync_tool_runs_in_a_thread_and_streams_updates(faux):
    threads: list[int] = []

    def execute(tool_call_id, params, signal, on_update, ctx):
        threads.append(threading.get_ident())
        on_update(text_result("25%", details={"progress": 25}))
        on_update({"content": "75%", "details": {"progress": 75}})
        return ToolResult(content=[TextContent(text="all done")], details={"progress": 100})

    faux.push([faux_tool_call("job", {}, id="j")], "great")
    agent = make_agent(faux, [make_tool("job", execute)], tool_context={"ctx": True})
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    assert threads and threads[0] != threading.get_ident()
    updates = rec.of("tool_execution_update")
    assert [u.partial_result.details for u in updates] == [{"progress": 25}, {"progress": 75}]
    assert updates[1].partial_result.content[0].text == "75%"
    assert all(u.tool_call_id == "j" and u.tool_name == "job" for u in updates)
    end = rec.index("tool_execution_end")
    assert all(rec.events.index(u) < end for u in updates)
    result = agent.state.messages[2]
    assert result.details == {"progress": 100} and result.content[0].text == "all done"


async def test_async_tool_updates_arrive_in_order_before_the_end(faux):
    async def execute(tool_call_id, params, signal, on_update, ctx):
        for i in range(5):
            on_update(text_result(f"step {i}"))
        return "done"

    slow_seen: list[str] = []

    async def slow_listener(event):
        if event.type == "tool_execution_update":
            await asyncio.sleep(0)  # a listener that yields must not reorder updates
            slow_seen.append(event.partial_result.content[0].text)
        elif event.type == "tool_execution_end":
            slow_seen.append("end")

    faux.push([faux_tool_call("job", {}, id="j")], "great")
    agent = make_agent(faux, [make_tool("job", execute)])
    agent.subscribe(slow_listener)
    await run(agent.prompt("go"))
    assert slow_seen == [f"step {i}" for i in range(5)] + ["end"]


async def test_tool_return_shapes_are_normalised(faux):
    returns = {
        "s": "plain string",
        "d": {"content": "from dict", "details": {"k": 1}},
        "l": ["one", TextContent(text="two")],
        "i": ImageContent(data="aGk=", mime_type="image/png"),
        "n": None,
    }

    async def execute(tool_call_id, params, signal, on_update, ctx):
        return returns[tool_call_id]

    faux.push([faux_tool_call("shape", {}, id=k) for k in returns], "ok")
    agent = make_agent(faux, [make_tool("shape", execute)])
    await run(agent.prompt("go"))
    by_id = {r.tool_call_id: r for r in tool_results(faux.contexts[1])}
    assert by_id["s"].content[0].text == "plain string"
    assert by_id["d"].content[0].text == "from dict" and by_id["d"].details == {"k": 1}
    assert [b.text for b in by_id["l"].content] == ["one", "two"]
    assert by_id["i"].content[0].type == "image"
    assert by_id["n"].content == [] and not by_id["n"].is_error


async def test_tool_returning_garbage_is_an_error_result(faux):
    faux.push([faux_tool_call("odd", {}, id="o")], "ok")
    agent = make_agent(faux, [make_tool("odd", lambda *a: 42)])
    await run(agent.prompt("go"))
    [result] = tool_results(faux.contexts[1])
    assert result.is_error and "returned int" in result.content[0].text


# ---------------------------------------------------------------------------- before_tool_call


def recording_tool(seen: list[object]):
    async def execute(tool_call_id, params, signal, on_update, ctx):
        seen.append(params)
        return f"read {params.path} x{params.limit}"

    return make_tool("read", execute, ReadArgs)


async def test_before_tool_call_block_with_reason(faux):
    seen: list[object] = []

    async def before(ctx, signal):
        if ctx.input["path"] == ".env":
            return BeforeToolCallResult(block=True, reason="Secrets are off limits")
        return None

    faux.push([faux_tool_call("read", {"path": ".env"}, id="x"), faux_tool_call("read", {"path": "a"}, id="y")], "ok")
    agent = make_agent(faux, [recording_tool(seen)], before_tool_call=before)
    await run(agent.prompt("go"))
    blocked, allowed = tool_results(faux.contexts[1])
    assert blocked.is_error and blocked.content[0].text == "Secrets are off limits"
    assert allowed.content[0].text == "read a x10"
    assert seen == [ReadArgs(path="a")]


async def test_before_tool_call_patches_input_in_place_and_it_is_revalidated(faux):
    seen: list[object] = []
    contexts = []

    async def before(ctx, signal):
        contexts.append(ctx)
        if ctx.tool_call.id == "good":
            ctx.input["path"] = "patched.txt"
            ctx.input["limit"] = "5"  # coerced by re-validation
        else:
            ctx.input["limit"] = -3  # invalid: the call fails with the validation message

    faux.push([faux_tool_call("read", {"path": "a"}, id="good"), faux_tool_call("read", {"path": "b"}, id="bad")], "ok")
    agent = make_agent(faux, [recording_tool(seen)], before_tool_call=before)
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    assert seen == [ReadArgs(path="patched.txt", limit=5)]
    good, bad = tool_results(faux.contexts[1])
    assert good.content[0].text == "read patched.txt x5" and not good.is_error
    assert bad.is_error and 'Validation failed for tool "read"' in bad.content[0].text
    assert "limit" in bad.content[0].text
    assert contexts[0].tool.name == "read" and contexts[0].assistant_message.tool_calls()[0].id == "good"
    # the start event shows what the model sent; the transcript too
    assert rec.of("tool_execution_start")[0].args == {"path": "a"}


async def test_before_tool_call_supplies_a_result_without_running_the_tool(faux):
    seen: list[object] = []

    async def before(ctx, signal):
        if ctx.tool_call.id == "ok":
            return BeforeToolCallResult(result=ToolResult(content=[TextContent(text="cached")], details={"hit": 1}))
        return BeforeToolCallResult(result=ToolResult(content=[TextContent(text="denied")], is_error=True))

    faux.push([faux_tool_call("read", {"path": "a"}, id="ok"), faux_tool_call("read", {"path": "b"}, id="err")], "ok")
    agent = make_agent(faux, [recording_tool(seen)], before_tool_call=before)
    await run(agent.prompt("go"))
    ok, err = tool_results(faux.contexts[1])
    assert seen == []
    assert ok.content[0].text == "cached" and ok.details == {"hit": 1} and not ok.is_error
    assert err.is_error and err.content[0].text == "denied"


async def test_before_tool_call_abort_stops_the_turn_and_runs_nothing(faux):
    seen: list[object] = []

    async def before(ctx, signal):
        if ctx.tool_call.id == "second":
            return BeforeToolCallResult(abort=True, reason="User said stop")
        return None

    faux.push(
        [
            faux_tool_call("read", {"path": "a"}, id="first"),
            faux_tool_call("read", {"path": "b"}, id="second"),
            faux_tool_call("read", {"path": "c"}, id="third"),
        ],
        "never asked",
    )
    agent = make_agent(faux, [recording_tool(seen)], before_tool_call=before)
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    assert seen == []  # not even the call preflighted before the abort
    assert faux.calls == 1 and agent.state.error == "User said stop"
    results = [m for m in agent.state.messages if m.role == "toolResult"]
    assert [r.tool_call_id for r in results] == ["first", "second", "third"]
    assert all(r.is_error for r in results)
    assert results[1].content[0].text == "User said stop"
    assert "User said stop" in results[0].content[0].text
    assert len(rec.of("tool_execution_start")) == len(rec.of("tool_execution_end")) == 3
    assert rec.types()[-2:] == ["turn_end", "agent_end"]


async def test_before_tool_call_that_raises_blocks_the_call(faux):
    seen: list[object] = []

    async def before(ctx, signal):
        raise RuntimeError("hook bug")

    faux.push([faux_tool_call("read", {"path": "a"}, id="x")], "ok")
    agent = make_agent(faux, [recording_tool(seen)], before_tool_call=before)
    await run(agent.prompt("go"))
    [result] = tool_results(faux.contexts[1])
    assert seen == [] and result.is_error and "hook bug" in result.content[0].text


# ---------------------------------------------------------------------------- after_tool_call


async def test_after_tool_call_patches_content_details_and_error_flag(faux):
    calls = []

    async def after(ctx, signal):
        calls.append((ctx.tool_call.id, ctx.input, ctx.result.text(), ctx.is_error))
        if ctx.tool_call.id == "x":
            return AfterToolCallResult(content=[TextContent(text="redacted")], details={"r": 1}, has_details=True)
        if ctx.tool_call.id == "y":
            return AfterToolCallResult(is_error=True)
        return None

    async def execute(tool_call_id, params, signal, on_update, ctx):
        return ToolResult(content=[TextContent(text=f"raw {tool_call_id}")], details={"orig": tool_call_id})

    faux.push([faux_tool_call("t", {"q": 1}, id=i) for i in ("x", "y", "z")], "ok")
    agent = make_agent(faux, [make_tool("t", execute)], after_tool_call=after)
    rec = Recorder(agent)
    await run(agent.prompt("go"))
    x, y, z = tool_results(faux.contexts[1])
    assert x.content[0].text == "redacted" and x.details == {"r": 1} and not x.is_error
    assert y.content[0].text == "raw y" and y.details == {"orig": "y"} and y.is_error
    assert z.content[0].text == "raw z" and not z.is_error
    assert sorted(calls) == [("x", {"q": 1}, "raw x", False), ("y", {"q": 1}, "raw y", False), ("z", {"q": 1}, "raw z", False)]
    # the end event carries the patched result
    end_x = next(e for e in rec.of("tool_execution_end") if e.tool_call_id == "x")
    assert end_x.result.content[0].text == "redacted"


async def test_after_tool_call_sees_errors_and_can_clear_them(faux):
    async def after(ctx, signal):
        assert ctx.is_error and ctx.result.text() == "exploded"
        return AfterToolCallResult(content=[TextContent(text="handled")], is_error=False)

    async def execute(tool_call_id, params, signal, on_update, ctx):
        raise ValueError("exploded")

    faux.push([faux_tool_call("t", {}, id="x")], "ok")
    agent = make_agent(faux, [make_tool("t", execute)], after_tool_call=after)
    await run(agent.prompt("go"))
    [result] = tool_results(faux.contexts[1])
    assert result.content[0].text == "handled" and not result.is_error


async def test_after_tool_call_that_raises_keeps_the_result_and_says_so(faux):
    async def after(ctx, signal):
        raise RuntimeError("patch bug")

    faux.push([faux_tool_call("t", {}, id="x")], "ok")
    agent = make_agent(faux, [make_tool("t", lambda *a: "kept")], after_tool_call=after)
    await run(agent.prompt("go"))
    [result] = tool_results(faux.contexts[1])
    assert [b.text for b in result.content] == ["kept", "(tool_result handler failed: patch bug)"]


async def test_tool_results_reach_the_next_call_as_the_model_expects(faux):
    faux.push([faux_tool_call("t", {}, id="x")], "ok")
    agent = make_agent(faux, [make_tool("t", lambda *a: "value")])
    await run(agent.prompt("go"))
    assert texts(faux.contexts[1]) == [("user", "go"), ("assistant", ""), ("toolResult", "value")]
    assert faux.contexts[1].messages[1].tool_calls()[0].id == "x"


async def test_pending_tool_calls_shrink_as_calls_end(faux):
    log: list[str] = []
    reverse_batch(faux)
    agent = make_agent(faux, [chained_tool(log)])
    pending: list[set[str]] = []
    agent.subscribe(lambda e: pending.append(set(agent.state.pending_tool_calls)) if e.type == "tool_execution_end" else None)
    await run(agent.prompt("go"))
    assert pending == [{"a", "b"}, {"a"}, set()]
    assert agent.state.pending_tool_calls == set()


async def test_a_failing_tool_keeps_the_details_its_exception_carries(tmp_path):
    from wolli.agent.agent import Agent
    from wolli.ai.providers.faux import FauxProvider, faux_tool_call
    from wolli.runtime.host.builtin_tools import create_builtin_tools
    from wolli.tools.environment import create_host_environment

    faux = FauxProvider(provider="faux-details")
    try:
        tools = create_builtin_tools(create_host_environment(str(tmp_path)))
        agent = Agent(model=faux.model, tools=tools)
        faux.push([faux_tool_call("bash", {"command": "echo out; exit 3"})], "done")
        await agent.prompt("run it")
        result = next(m for m in agent.state.messages if m.role == "toolResult")
        assert result.is_error
        assert "Command exited with code 3" in result.content[0].text
        assert result.details is not None and result.details.exit_code == 3
    finally:
        faux.unregister()
