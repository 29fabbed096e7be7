"""The faux provider: scripted answers streamed through the real ``stream()`` contract."""

from __future__ import annotations

import asyncio
import json
import time

import pytest

from wolli.ai.abort import AbortController
from wolli.ai.providers.faux import (
    FauxProvider,
    FauxResponse,
    estimate_tokens,
    faux_error,
    faux_hang,
    faux_text,
    faux_thinking,
    faux_tool_call,
    get_faux,
)
from wolli.ai.stream import complete, stream
from wolli.ai.types import (
    Context,
    ImageContent,
    ModelCost,
    StreamOptions,
    TextContent,
    ThinkingContent,
    Tool,
    UserMessage,
)


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def ctx(text: str = "hello", **kwargs) -> Context:
    return Context(messages=[UserMessage(content=text)], **kwargs)


async def play(faux: FauxProvider, context: Context | None = None, options=None):
    s = stream(faux.model, context or ctx(), options)
    events = [e async for e in s]
    return events, await s.result()


async def test_streams_text_thinking_and_tool_calls_in_pieces(faux):
    faux.push([
        faux_thinking("Let me think about this carefully", signature="sig-1"),
        faux_text("Reading the file now, one moment please."),
        faux_tool_call("read", {"path": "src/main.py", "limit": 50}, id="call_1"),
    ])
    events, message = await play(faux)
    kinds = [e.type for e in events]
    assert kinds[0] == "start" and kinds[-1] == "done"
    assert kinds.count("thinking_delta") > 3 and kinds.count("text_delta") > 3
    assert kinds.count("toolcall_delta") >= 2  # arguments arrive in pieces
    assert kinds.index("thinking_end") < kinds.index("text_start") < kinds.index("toolcall_start")
    assert message.content[0] == ThinkingContent(thinking="Let me think about this carefully", thinking_signature="sig-1")
    assert message.text() == "Reading the file now, one moment please."
    [call] = message.tool_calls()
    assert (call.id, call.name, call.arguments) == ("call_1", "read", {"path": "src/main.py", "limit": 50})
    assert message.stop_reason == "toolUse" and events[-1].reason == "toolUse"
    deltas = "".join(e.delta for e in events if e.type == "text_delta")
    assert deltas == message.text()
    # partial arguments are visible mid-stream
    partials = [dict(e.partial.content[2].arguments) for e in events if e.type == "toolcall_delta"]
    assert partials[-1] == {"path": "src/main.py", "limit": 50}


async def test_plain_strings_lists_and_default_ids(faux):
    faux.push("just text", ["a", "b"], faux_tool_call("x"))
    assert (await complete(faux.model, ctx())).text() == "just text"
    two = await complete(faux.model, ctx())
    assert [b.text for b in two.content] == ["a", "b"]
    generated = (await complete(faux.model, ctx())).tool_calls()[0]
    assert generated.id.startswith("faux_call_") and generated.arguments == {}


async def test_call_counter_contexts_and_options_are_recorded(faux):
    faux.push("one", "two")
    context = ctx("first question", system_prompt="sys", tools=[Tool(name="read")])
    options = StreamOptions(api_key="k", max_tokens=99)
    await complete(faux.model, context, options)
    context.messages.append(UserMessage(content="mutated afterwards"))
    await complete(faux.model, ctx("second"))
    assert faux.calls == 2 and faux.pending == 0
    assert len(faux.contexts[0].messages) == 1  # a copy, not the caller's object
    assert faux.contexts[0].system_prompt == "sys" and faux.contexts[0].tools[0].name == "read"
    assert faux.options[0].api_key == "k" and faux.options[0].max_tokens == 99
    assert faux.contexts[1].messages[0].content == "second"


async def test_no_response_left_is_an_error(faux):
    events, message = await play(faux)
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert "no scripted response left" in message.error_message
    assert faux.calls == 1


async def test_callable_responses_see_the_context(faux):
    def echo(context, options):
        return f"you said: {context.messages[-1].content}"

    async def later(context, options):
        await asyncio.sleep(0)
        return FauxResponse(blocks=[faux_text("async answer")], stop_reason="length")

    faux.push(echo, later)
    assert (await complete(faux.model, ctx("ping"))).text() == "you said: ping"
    message = await complete(faux.model, ctx())
    assert message.text() == "async answer" and message.stop_reason == "length"


async def test_scripted_errors_keep_the_blocks_before_them(faux):
    faux.push(faux_error("529 Overloaded", "partial"))
    events, message = await play(faux)
    assert events[-1].type == "error" and events[-1].reason == "error"
    assert message.stop_reason == "error" and message.error_message == "529 Overloaded"
    assert message.text() == "partial"


async def test_usage_estimate_and_override(faux):
    faux.model.cost = ModelCost(input=1.0, output=2.0)
    context = ctx("x" * 400, system_prompt="y" * 400)
    faux.push("z" * 40)
    message = await complete(faux.model, context)
    assert message.usage.input == 200 and message.usage.output == 10
    assert message.usage.total_tokens == 210
    assert message.usage.cost.total == pytest.approx((200 * 1.0 + 10 * 2.0) / 1_000_000)
    assert estimate_tokens("abcd" * 10) == 10 and estimate_tokens("") == 0

    faux.push(FauxResponse(blocks=[faux_text("hi")], usage={"input": 7, "output": 3, "cache_read": 100}))
    message = await complete(faux.model, context)
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (7, 3, 100)
    assert message.usage.total_tokens == 110


async def test_tool_and_image_context_counts_toward_input(faux):
    faux.push("a", "b")
    plain = await complete(faux.model, ctx("q"))
    rich = Context(
        messages=[UserMessage(content=[TextContent(text="q"), ImageContent(data="aGk=", mime_type="image/png")])],
        tools=[Tool(name="read", description="Reads a file", parameters={"type": "object"})],
    )
    assert (await complete(faux.model, rich)).usage.input > plain.usage.input + 1000


async def test_pacing_spreads_the_pieces_over_time(faux):
    text = " ".join(["word"] * 10)  # ten pieces
    faux.push(FauxResponse(blocks=[faux_text(text)], tokens_per_second=100))
    began = time.monotonic()
    message = await complete(faux.model, ctx())
    assert time.monotonic() - began >= 0.09  # a lower bound only: never flaky on a slow box
    assert message.text() == text

    paced = FauxProvider(provider="faux-paced", tokens_per_second=200)
    try:
        paced.push(text)
        began = time.monotonic()
        await complete(paced.model, ctx())
        assert time.monotonic() - began >= 0.045
    finally:
        paced.unregister()


async def test_abort_stops_a_paced_stream_between_pieces(faux):
    text = " ".join(f"w{i}" for i in range(200))
    faux.push(FauxResponse(blocks=[faux_text(text)], tokens_per_second=1000))
    controller = AbortController()
    s = stream(faux.model, ctx(), StreamOptions(signal=controller.signal))
    deltas = 0
    async for event in s:
        if event.type == "text_delta":
            deltas += 1
            if deltas == 5:
                controller.abort("enough")
    message = await s.result()
    assert message.stop_reason == "aborted" and message.error_message == "enough"
    assert text.startswith(message.text()) and 0 < len(message.text()) < len(text)


async def test_hang_waits_for_the_abort(faux):
    faux.push(faux_hang("streamed first"))
    controller = AbortController()
    s = stream(faux.model, ctx(), StreamOptions(signal=controller.signal))
    got_text = asyncio.Event()

    async def consume():
        async for event in s:
            if event.type == "text_end":
                got_text.set()

    consumer = asyncio.create_task(consume())
    await asyncio.wait_for(got_text.wait(), 5)
    assert not s.finished  # still hanging
    controller.abort()
    await asyncio.wait_for(consumer, 5)
    message = await s.result()
    assert message.stop_reason == "aborted" and message.text() == "streamed first"


async def test_hang_without_a_signal_is_an_error_not_a_deadlock(faux):
    faux.push(faux_hang("x"))
    message = await asyncio.wait_for(complete(faux.model, ctx()), 5)
    assert message.stop_reason == "error" and "abort signal" in message.error_message


async def test_registry_by_provider_name(faux):
    assert get_faux("faux") is faux
    other = FauxProvider(provider="faux-b", model_id="b-1", responses=["from b"])
    try:
        assert (await complete(other.model, ctx())).text() == "from b"
        assert faux.calls == 0
    finally:
        other.unregister()
    assert get_faux("faux-b") is None
    message = await complete(other.model, ctx())
    assert message.stop_reason == "error" and "no FauxProvider registered" in message.error_message


async def test_set_responses_and_unscriptable_values(faux):
    faux.push("dropped")
    faux.set_responses(["kept"])
    assert (await complete(faux.model, ctx())).text() == "kept"
    faux.push([42])
    message = await complete(faux.model, ctx())
    assert message.stop_reason == "error" and "cannot script int" in message.error_message


def test_model_shape():
    provider = FauxProvider(provider="faux-shape", model_id="m", context_window=1000, reasoning=False, register=False)
    assert provider.model.api == "faux" and provider.model.key == "faux-shape/m"
    assert provider.model.context_window == 1000 and provider.model.reasoning is False
    assert json.loads(provider.model.to_json())["contextWindow"] == 1000
    assert get_faux("faux-shape") is None
