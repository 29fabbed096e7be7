"""The core of ``wolli.ai``: ``stream()``, the message builder, history transform, overflow."""

from __future__ import annotations

import asyncio
import json
import re

import pytest

from tests.support.wire import WIRE_DIR, load_error
from wolli.ai.abort import AbortController, AbortError
from wolli.ai.builder import MessageBuilder, parse_partial_json, parse_tool_arguments
from wolli.ai.event_stream import AssistantMessageEventStream
from wolli.ai.http import extract_error_message
from wolli.ai.overflow import is_context_overflow, is_context_overflow_text
from wolli.ai.providers.faux import FauxProvider, faux_hang
from wolli.ai.stream import complete, known_apis, register_api, stream, unregister_api
from wolli.ai.transform import transform_messages
from wolli.ai.types import (
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    Usage,
    UserMessage,
)

HELLO = Context(messages=[UserMessage(content="hi")])


def model(api: str = "faux", provider: str = "faux", id: str = "faux-1", **kwargs) -> Model:
    return Model(id=id, api=api, provider=provider, **kwargs)


async def collect(s: AssistantMessageEventStream) -> tuple[list, AssistantMessage]:
    events = [event async for event in s]
    return events, await s.result()


def check_terminal(events: list) -> None:
    """Exactly one terminal event, last, and ``start`` first."""
    kinds = [e.type for e in events]
    assert kinds[0] == "start"
    assert kinds[-1] in ("done", "error")
    assert sum(k in ("done", "error") for k in kinds) == 1


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


# ---------------------------------------------------------------------------- stream()


async def test_unknown_api_is_an_error_event():
    events, message = await collect(stream(model(api="carrier-pigeon"), HELLO))
    check_terminal(events)
    assert events[-1].reason == "error"
    assert message.stop_reason == "error"
    assert "No provider implements api 'carrier-pigeon'" in message.error_message
    assert "carrier-pigeon" not in known_apis()


async def test_a_provider_that_raises_becomes_an_error_event_keeping_partial_content():
    async def broken(m, context, options, builder):
        index = builder.text_start()
        builder.text_delta(index, "partial ")
        raise ValueError("kaput")

    register_api("test-broken", broken)
    try:
        assert "test-broken" in known_apis()
        events, message = await collect(stream(model(api="test-broken"), HELLO))
    finally:
        unregister_api("test-broken")
    check_terminal(events)
    assert message.stop_reason == "error" and message.error_message == "ValueError: kaput"
    assert message.text() == "partial "
    assert [e.type for e in events] == ["start", "text_start", "text_delta", "text_end", "error"]


async def test_a_provider_that_returns_without_finishing_is_an_error():
    async def silent(m, context, options, builder):
        builder.start()

    register_api("test-silent", silent)
    try:
        message = await complete(model(api="test-silent"), HELLO)
    finally:
        unregister_api("test-silent")
    assert message.stop_reason == "error" and "ended without a final message" in message.error_message


async def test_provider_abort_error_is_an_aborted_message():
    async def gives_up(m, context, options, builder):
        raise AbortError("provider noticed")

    register_api("test-abort", gives_up)
    try:
        message = await complete(model(api="test-abort"), HELLO)
    finally:
        unregister_api("test-abort")
    assert message.stop_reason == "aborted" and message.error_message == "provider noticed"


async def test_abort_before_start_never_calls_the_provider(faux):
    faux.push("never streamed")
    controller = AbortController()
    controller.abort("too late")
    events, message = await collect(stream(faux.model, HELLO, StreamOptions(signal=controller.signal)))
    check_terminal(events)
    assert events[-1].reason == "aborted"
    assert message.stop_reason == "aborted" and message.error_message == "too late"
    assert faux.calls == 0 and faux.pending == 1


async def test_abort_mid_stream_keeps_content(faux):
    faux.push(faux_hang("so far so good"))
    controller = AbortController()
    s = stream(faux.model, HELLO, {"signal": controller.signal})
    events = []
    async for event in s:
        events.append(event)
        if event.type == "text_end":
            controller.abort()
    message = await s.result()
    check_terminal(events)
    assert message.stop_reason == "aborted" and message.text() == "so far so good"
    assert message.error_message == "Aborted"


async def test_unknown_stream_option_is_an_error_event(faux):
    events, message = await collect(stream(faux.model, HELLO, {"max_tokens": 5, "temprature": 1}))
    check_terminal(events)
    assert message.stop_reason == "error" and "temprature" in message.error_message
    assert faux.calls == 0


async def test_result_without_iterating(faux):
    faux.push("quiet")
    message = await complete(faux.model, HELLO)
    assert message.text() == "quiet" and message.stop_reason == "stop"
    assert message.api == "faux" and message.provider == "faux" and message.model == "faux-1"


# ---------------------------------------------------------------------------- builder


def new_builder(price: ModelCost | None = None) -> tuple[MessageBuilder, list]:
    loop_stream = AssistantMessageEventStream()
    builder = MessageBuilder(model(api="x", cost=price or ModelCost()), loop_stream)
    return builder, loop_stream._queue  # the events, in order


def test_parse_partial_json():
    assert parse_partial_json("") == {}
    assert parse_partial_json("   ") == {}
    assert parse_partial_json("{") == {}
    assert parse_partial_json('{"a": 1, "b": [1, 2') == {"a": 1, "b": [1, 2]}
    assert parse_partial_json('{"a": {"b": true}, "c') == {"a": {"b": True}}
    assert parse_partial_json('{"path": "done", "content": "half') == {"path": "done"}
    assert parse_partial_json("[1, 2]") == {}  # arguments are always an object
    assert parse_partial_json("not json") == {}


def test_parse_tool_arguments_strict_then_best_effort():
    assert parse_tool_arguments('{"a": 1, "s": "x"}') == {"a": 1, "s": "x"}
    assert parse_tool_arguments("") == {}
    assert parse_tool_arguments('{"path": "a.txt", "limit": 5, "content": "cut off') == {"path": "a.txt", "limit": 5}
    assert parse_tool_arguments('{"a": 1}}') == {"a": 1}  # trailing junk: the object before it
    assert parse_tool_arguments('"just a string"') == {}
    assert parse_tool_arguments("garbage") == {}


async def test_builder_drops_deltas_for_a_block_already_ended():
    builder, events = new_builder()
    text, thinking = builder.text_start("hello"), builder.thinking_start("hmm")
    call = builder.toolcall_start("c1", "read", '{"path": "a"}')
    builder.text_end(text)
    builder.thinking_end(thinking)
    builder.toolcall_end(call)
    count = len(events)
    builder.text_delta(text, " again")  # a repeated event after the block's end
    builder.thinking_delta(thinking, " more")
    builder.toolcall_delta(call, "}")
    assert len(events) == count
    assert [builder.message.content[0].text, builder.message.content[1].thinking] == ["hello", "hmm"]
    assert builder.message.content[2].arguments == {"path": "a"}


async def test_builder_tool_call_arguments_visible_while_streaming():
    builder, events = new_builder()
    index = builder.toolcall_start("call_1", "write")
    seen = []
    for piece in ['{"pa', 'th": "a.txt"', ', "mode": 4', '20, "tags": ["x", "y', '"]}']:
        builder.toolcall_delta(index, piece)
        seen.append(dict(builder.message.content[index].arguments))
    assert seen == [
        {},
        {"path": "a.txt"},
        {"path": "a.txt", "mode": 4},
        {"path": "a.txt", "mode": 420, "tags": ["x"]},
        {"path": "a.txt", "mode": 420, "tags": ["x", "y"]},
    ]
    assert builder.toolcall_json(index) == '{"path": "a.txt", "mode": 420, "tags": ["x", "y"]}'
    builder.toolcall_end(index)
    builder.done()
    kinds = [e.type for e in events]
    assert kinds == ["start", "toolcall_start"] + ["toolcall_delta"] * 5 + ["toolcall_end", "done"]
    assert events[-2].tool_call.arguments == {"path": "a.txt", "mode": 420, "tags": ["x", "y"]}
    assert builder.message.stop_reason == "toolUse"  # "stop" with tool calls means toolUse


async def test_builder_large_arguments_parse_exactly_at_the_end():
    builder, _ = new_builder()
    index = builder.toolcall_start("c", "write")
    text = json.dumps({"content": "x" * 20_000, "path": "big.txt"})
    for start in range(0, len(text), 7):
        builder.toolcall_delta(index, text[start : start + 7])
    builder.done()  # closes the open block with a strict parse
    assert builder.message.content[index].arguments == {"content": "x" * 20_000, "path": "big.txt"}


async def test_builder_truncated_arguments_are_best_effort():
    builder, _ = new_builder()
    index = builder.toolcall_start("c", "edit", arguments_json='{"path": "a.py", "old": "unfinished')
    builder.done("length")
    assert builder.message.content[index].arguments == {"path": "a.py"}
    assert builder.message.stop_reason == "length"


async def test_builder_explicit_arguments_and_thinking_and_text():
    builder, events = new_builder()
    t = builder.thinking_start("ponder", signature="sig-")
    builder.thinking_delta(t, "ing")
    builder.thinking_signature(t, "more")
    x = builder.text_start("Hel")
    builder.text_delta(x, "lo")
    builder.text_delta(x, "")  # empty deltas are not events
    builder.text_end(x, signature="msg_1")
    c = builder.toolcall_start("id1", "read", '{"ignored": true}')
    builder.toolcall_end(c, {"path": "given"})
    builder.message.usage.input = 1000
    builder.message.usage.output = 10
    builder.done("stop")
    message = builder.message
    assert message.content[0] == ThinkingContent(thinking="pondering", thinking_signature="sig-more")
    assert message.content[1] == TextContent(text="Hello", text_signature="msg_1")
    assert message.content[2].arguments == {"path": "given"}
    assert message.usage.total_tokens == 1010
    assert [e.type for e in events].count("text_delta") == 2
    assert events[-1].type == "done" and events[-1].reason == "toolUse"
    builder.fail("late")  # after the terminal event nothing changes
    assert message.stop_reason == "toolUse" and events[-1].type == "done"


async def test_builder_fail_keeps_content_closes_blocks_and_prices_usage():
    builder, events = new_builder(ModelCost(input=3.0, output=15.0))
    index = builder.text_start("partial answer")
    builder.message.usage.input = 1_000_000
    builder.message.usage.output = 100_000
    builder.fail("socket closed")
    message = builder.message
    assert message.stop_reason == "error" and message.error_message == "socket closed"
    assert message.content[index].text == "partial answer"
    assert [e.type for e in events][-2:] == ["text_end", "error"]
    assert message.usage.cost.input == pytest.approx(3.0)
    assert message.usage.cost.output == pytest.approx(1.5)
    assert message.usage.cost.total == pytest.approx(4.5)


async def test_builder_done_with_error_stop_reason_becomes_an_error_event():
    builder, events = new_builder()
    builder.message.error_message = "server said no"
    builder.done("error")
    assert events[-1].type == "error" and events[-1].error.error_message == "server said no"


# ---------------------------------------------------------------------------- transform_messages

TARGET = model(api="anthropic-messages", provider="anthropic", id="claude-x")


def assistant(*blocks, provider="openai", api="openai-responses", id="gpt-x", stop="toolUse") -> AssistantMessage:
    return AssistantMessage(content=list(blocks), provider=provider, api=api, model=id, stop_reason=stop)


def result(call_id: str, text: str = "ok") -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="read", content=[TextContent(text=text)])


def normalize(call_id: str, target: Model, source: AssistantMessage) -> str:
    return re.sub(r"[^A-Za-z0-9_-]", "_", call_id)[:64]


def test_transform_foreign_thinking_becomes_text_and_redacted_is_dropped():
    foreign = assistant(
        ThinkingContent(thinking="I reason", thinking_signature="openai-blob"),
        ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
        ThinkingContent(thinking="   "),
        TextContent(text="Answer", text_signature="msg_123"),
        stop="stop",
    )
    [out] = transform_messages([foreign], TARGET)
    assert out.content == [TextContent(text="I reason"), TextContent(text="Answer")]
    assert foreign.content[0].thinking_signature == "openai-blob"  # the original is untouched


def test_transform_same_model_history_is_untouched():
    same = dict(provider="anthropic", api="anthropic-messages", id="claude-x")
    history = [
        UserMessage(content="hi"),
        assistant(
            ThinkingContent(thinking="mine", thinking_signature="sig"),
            ThinkingContent(thinking="", thinking_signature="enc", redacted=True),
            TextContent(text="t", text_signature="s"),
            ToolCall(id="toolu_1", name="read", arguments={}, thought_signature="g"),
            **same,
        ),
        result("toolu_1"),
        assistant(TextContent(text="done"), stop="stop", **same),
    ]
    out = transform_messages(history, TARGET)
    assert len(out) == len(history) and all(a is b for a, b in zip(out, history, strict=True))


def test_transform_normalises_ids_and_results_follow():
    history = [
        UserMessage(content="go"),
        assistant(
            ToolCall(id="call_abc|fc_123", name="read", arguments={"p": 1}, thought_signature="gemini-sig"),
            ToolCall(id="call_def|fc_456", name="read", arguments={}),
        ),
        result("call_abc|fc_123", "first"),
        result("call_def|fc_456", "second"),
    ]
    out = transform_messages(history, TARGET, normalize)
    calls = out[1].tool_calls()
    assert [c.id for c in calls] == ["call_abc_fc_123", "call_def_fc_456"]
    assert calls[0].thought_signature is None and calls[0].arguments == {"p": 1}
    assert [(m.tool_call_id, m.content[0].text) for m in out[2:]] == [
        ("call_abc_fc_123", "first"), ("call_def_fc_456", "second"),
    ]
    assert history[1].tool_calls()[0].id == "call_abc|fc_123"


def test_transform_synthesises_missing_results():
    history = [
        assistant(ToolCall(id="a", name="read"), ToolCall(id="b", name="bash")),
        result("a"),
        UserMessage(content="interrupted"),
        assistant(ToolCall(id="c", name="ls")),
    ]
    out = transform_messages(history, TARGET)
    assert [m.role for m in out] == ["assistant", "toolResult", "toolResult", "user", "assistant", "toolResult"]
    synthetic = out[2]
    assert synthetic.tool_call_id == "b" and synthetic.tool_name == "bash" and synthetic.is_error
    assert synthetic.content[0].text == "No result provided"
    assert out[5].tool_call_id == "c"


def test_transform_skips_failed_assistant_messages_and_their_orphans():
    history = [
        UserMessage(content="go"),
        assistant(TextContent(text="half"), ToolCall(id="x", name="read", arguments={"pa": 1}), stop="error"),
        result("x"),  # answers a call the target never sees: dropped
        assistant(TextContent(text="cut"), stop="aborted"),
        UserMessage(content="again"),
        assistant(ToolCall(id="y", name="read")),
        result("y"),
        result("y", "duplicate"),
    ]
    out = transform_messages(history, TARGET)
    assert [m.role for m in out] == ["user", "user", "assistant", "toolResult"]
    assert out[3].tool_call_id == "y" and out[3].content[0].text == "ok"


# ---------------------------------------------------------------------------- overflow

OVERFLOW = {
    "anthropic_400_input_plus_max_tokens_exceed_context.json",
    "anthropic_400_prompt_too_long.json",
    "gemini_400_input_token_count.json",
    "gemini_400_input_token_count_errors_array.json",
    "openai_400_context_length_exceeded.json",
    "openai_responses_stream_error_context_length_exceeded.json",
}


def error_files() -> list[str]:
    return sorted(p.name for p in (WIRE_DIR / "errors").glob("*.json") if ".response_headers." not in p.name)


def failed(message: str, **kwargs) -> AssistantMessage:
    return AssistantMessage(stop_reason="error", error_message=message, **kwargs)


@pytest.mark.parametrize("name", error_files())
def test_overflow_detection_over_every_recorded_error(name):
    match = re.search(r"_(\d{3})_", name)
    status = int(match.group(1)) if match else 400
    text = extract_error_message(status, load_error(name).decode("utf-8"))
    assert is_context_overflow(failed(text)) == (name in OVERFLOW), text


def test_overflow_every_listed_file_exists():
    assert OVERFLOW <= set(error_files())


def test_overflow_other_cases():
    assert not is_context_overflow(failed("429 Too many requests, please slow down"))
    assert not is_context_overflow(AssistantMessage(stop_reason="aborted", error_message="prompt is too long"))
    assert is_context_overflow(failed("400 This model's maximum context length is 8192 tokens"))
    assert is_context_overflow_text("Error: context_length_exceeded")
    assert not is_context_overflow_text(None) and not is_context_overflow_text("")
    # a server that truncates silently: success, but the input alone overflowed the window
    silent = AssistantMessage(usage=Usage(input=9000, cache_read=2000))
    assert is_context_overflow(silent, context_window=10_000)
    assert not is_context_overflow(silent, context_window=20_000)
    assert not is_context_overflow(silent)


async def test_stream_never_raises_even_when_the_caller_task_is_cancelled(faux):
    faux.push(faux_hang("waiting"))
    s = stream(faux.model, HELLO, StreamOptions(signal=AbortController().signal))
    consumer = asyncio.create_task(collect(s))
    await asyncio.sleep(0)
    s.task.cancel()  # the request task itself is cancelled without an abort
    with pytest.raises(asyncio.CancelledError):
        await s.task
    message = await asyncio.wait_for(s.result(), 5)
    assert message.stop_reason == "aborted" and message.error_message == "Request was cancelled"
    await asyncio.wait_for(consumer, 5)
