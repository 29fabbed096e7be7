"""The anthropic-messages provider against a real loopback HTTP server replaying recordings.

Every recording in fixtures/wire/anthropic is replayed (new ones are picked up by the glob)
and the result is compared with an independent reading of the raw events written here, so a
mistake in the provider's mapping cannot hide behind the same mistake in the expectation.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from pydantic_core import from_json

from tests.support.loopback import json_reply, sse_reply
from tests.support.stream_checks import check_event_grammar as check_well_formed
from tests.support.wire import WIRE_DIR, load_body, recordings
from wolli.ai.abort import AbortController
from wolli.ai.overflow import is_context_overflow
from wolli.ai.stream import stream
from wolli.ai.types import (
    AssistantMessage,
    Context,
    Model,
    ModelCost,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    UserMessage,
)

RECORDINGS = recordings("anthropic")
ERROR_FILES = sorted(
    p for p in (WIRE_DIR / "errors").glob("anthropic_*.json") if not p.name.endswith(".response_headers.json")
)


def make_model(base_url: str, model_id: str = "claude-sonnet-4-5", **kwargs: Any) -> Model:
    kwargs.setdefault("reasoning", True)
    kwargs.setdefault("input", ["text", "image"])
    kwargs.setdefault("max_tokens", 64_000)
    return Model(id=model_id, api="anthropic-messages", provider="anthropic", base_url=base_url, **kwargs)


def user(text: str = "hi") -> Context:
    return Context(messages=[UserMessage(content=text)])


async def run_stream(model: Model, context: Context, options: StreamOptions | None = None):
    events = []
    s = stream(model, context, options or StreamOptions(api_key="test-key"))
    async for event in s:
        events.append(event)
    return events, await s.result()


# ---------------------------------------------------------------------------- event grammar



def _parse_args(text: str) -> dict[str, Any]:
    if not text.strip():
        return {}
    try:
        value = json.loads(text)
    except ValueError:
        try:
            value = from_json(text, allow_partial=True)  # cut off by max_tokens: best effort
        except ValueError:
            return {}
    return value if isinstance(value, dict) else {}


# ---------------------------------------------------------------------------- reference reader


def raw_events(body: bytes) -> list[dict[str, Any]]:
    """The JSON payloads of an SSE body, read without any project code."""
    text = body.decode("utf-8").replace("\r\n", "\n")
    out = []
    for chunk in text.split("\n\n"):
        data = [line[5:].lstrip(" ") for line in chunk.split("\n") if line.startswith("data:")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


def reference(body: bytes) -> dict[str, Any]:
    """What a correct client must end with, derived directly from the raw events."""
    blocks: list[dict[str, Any]] = []
    by_index: dict[int, dict[str, Any]] = {}
    usage = {"input": 0, "output": 0, "cache_read": 0, "cache_write": 0}
    names = {"input_tokens": "input", "output_tokens": "output",
             "cache_read_input_tokens": "cache_read", "cache_creation_input_tokens": "cache_write"}
    stop = None
    result = "incomplete"
    error = None
    response_id = None
    for ev in raw_events(body):
        t = ev["type"]
        if t == "message_start":
            response_id = ev["message"].get("id")
            for k, v in (ev["message"].get("usage") or {}).items():
                if k in names and v is not None:
                    usage[names[k]] = v
        elif t == "content_block_start":
            cb = ev["content_block"]
            block = None
            if cb["type"] == "text":
                block = {"type": "text", "text": cb.get("text", "")}
            elif cb["type"] == "thinking":
                block = {"type": "thinking", "thinking": cb.get("thinking", ""), "sig": cb.get("signature") or None,
                         "redacted": False}
            elif cb["type"] == "redacted_thinking":
                block = {"type": "thinking", "thinking": "", "sig": cb["data"], "redacted": True}
            elif cb["type"] == "tool_use":
                block = {"type": "tool", "id": cb["id"], "name": cb["name"], "json": ""}
            if block is not None:
                blocks.append(block)
                by_index[ev["index"]] = block
        elif t == "content_block_delta":
            block, d = by_index.get(ev["index"]), ev["delta"]
            if block is None:
                continue
            if d["type"] == "text_delta":
                block["text"] += d["text"]
            elif d["type"] == "thinking_delta":
                block["thinking"] += d["thinking"]
            elif d["type"] == "signature_delta":
                block["sig"] = (block["sig"] or "") + d["signature"]
            elif d["type"] == "input_json_delta":
                block["json"] += d["partial_json"]
        elif t == "message_delta":
            stop = ev["delta"].get("stop_reason") or stop
            for k, v in (ev.get("usage") or {}).items():
                if k in names and v is not None:
                    usage[names[k]] = v
        elif t == "message_stop":
            result = "stop"
            break
        elif t == "error":
            result, error = "error", ev["error"]["message"]
            break
    content = []
    for b in blocks:
        if b["type"] == "text":
            content.append(("text", b["text"]))
        elif b["type"] == "thinking":
            content.append(("thinking", b["thinking"], b["sig"], b["redacted"]))
        else:
            content.append(("toolCall", b["id"], b["name"], _parse_args(b["json"])))
    mapping = {"end_turn": "stop", "stop_sequence": "stop", "pause_turn": "stop", "max_tokens": "length",
               "tool_use": "toolUse", "refusal": "error", "model_context_window_exceeded": "error"}
    if result == "stop":
        stop_reason = mapping.get(stop or "end_turn", "stop")
        if stop_reason == "stop" and any(c[0] == "toolCall" for c in content):
            stop_reason = "toolUse"
    else:
        stop_reason = "error"
    return {"content": content, "stop_reason": stop_reason, "usage": usage, "error": error,
            "response_id": response_id, "stop_wire": stop}


def summarise(message: AssistantMessage) -> list[tuple]:
    out: list[tuple] = []
    for b in message.content:
        if isinstance(b, TextContent):
            out.append(("text", b.text))
        elif isinstance(b, ThinkingContent):
            out.append(("thinking", b.thinking, b.thinking_signature, bool(b.redacted)))
        else:
            out.append(("toolCall", b.id, b.name, b.arguments))
    return out


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
async def test_every_recording_replays_into_the_expected_message(loopback, path: Path) -> None:
    body = load_body(path)
    loopback.push(sse_reply(body, chunk_sizes=(1, 64)))
    events, message = await run_stream(make_model(loopback.url), user())
    check_well_formed(events)
    expected = reference(body)
    assert summarise(message) == expected["content"]
    assert message.stop_reason == expected["stop_reason"]
    if expected["error"]:
        assert message.error_message == expected["error"]
    if expected["stop_wire"] == "refusal":
        assert "refused" in (message.error_message or "")
    if expected["stop_wire"] == "model_context_window_exceeded":
        assert "context window" in (message.error_message or "")
        assert is_context_overflow(message)
    u = message.usage
    assert (u.input, u.output, u.cache_read, u.cache_write) == tuple(expected["usage"].values())
    assert u.total_tokens == sum(expected["usage"].values())
    if expected["response_id"]:
        assert message.response_id == expected["response_id"]
    assert message.api == "anthropic-messages" and message.provider == "anthropic"


# ---------------------------------------------------------------------------- exact expectations


def recording(name: str) -> Path:
    return WIRE_DIR / "anthropic" / name


async def replay(loopback, name: str, **model_kwargs: Any):
    loopback.push(sse_reply(load_body(recording(name))))
    return await run_stream(make_model(loopback.url, **model_kwargs), user())


async def test_a01_text_usage_and_id(loopback) -> None:
    events, m = await replay(loopback, "a01_text_basic.sse")
    assert m.text() == "Hello there!" and m.stop_reason == "stop"
    assert [e.delta for e in events if e.type == "text_delta"] == ["Hello", " there", "!"]
    assert m.response_id == "msg_4QpJur2dWWDjF6C758FbBw5vm12BaVipnK"
    assert (m.usage.input, m.usage.output, m.usage.total_tokens) == (11, 6, 17)


async def test_a01_cost_from_model_prices(loopback) -> None:
    _, m = await replay(loopback, "a01_text_basic.sse", cost=ModelCost(input=3, output=15))
    assert m.usage.cost.total == pytest.approx((11 * 3 + 6 * 15) / 1_000_000)


async def test_a02_tool_call_arguments_from_chunked_json(loopback) -> None:
    _, m = await replay(loopback, "a02_tool_use.sse")
    assert m.stop_reason == "toolUse"
    (call,) = m.tool_calls()
    assert (call.id, call.name, call.arguments) == ("toolu_01NRLabsLyVHZPKxbKvkfSMn", "get_weather", {"location": "Paris"})


async def test_a03_truncated_tool_input_finishes_with_length(loopback) -> None:
    events, m = await replay(loopback, "a03_max_tokens_truncated_tool_use.sse")
    assert m.stop_reason == "length" and events[-1].type == "done"
    (call,) = m.tool_calls()
    assert call.name == "make_file" and call.arguments["filename"] == "taxes.txt"
    assert call.arguments["lines_of_text"][:3] == ["# COMPREHENSIVE TAX GUIDE FOR INDIVIDUALS WITH MULTIPLE W-2s", "",
                                                   "## INTRODUCTION"]
    assert any(e.type == "toolcall_end" for e in events)


async def test_a04_refusal_is_an_error_saying_the_model_refused(loopback) -> None:
    events, m = await replay(loopback, "a04_refusal_stop_reason.sse")
    assert events[-1].type == "error" and m.stop_reason == "error"
    assert "refused" in m.error_message and "This request was refused due to policy." in m.error_message


async def test_a05_thinking_signature_and_argumentless_tool(loopback) -> None:
    _, m = await replay(loopback, "a05_thinking_then_tool_use.turn1.sse", model_id="claude-haiku-4-5-20251001")
    thinking, call = m.content
    assert isinstance(thinking, ThinkingContent) and thinking.thinking.startswith("The user wants me to:\n1. Use")
    assert thinking.thinking_signature.startswith("EoQDCm0IDhgCKkCD") and thinking.thinking_signature.endswith("SBwUxgB")
    assert isinstance(call, ToolCall) and call.arguments == {} and m.stop_reason == "toolUse"


async def test_a08_redacted_thinking_keeps_the_payload_for_replay(loopback) -> None:
    _, m = await replay(loopback, "a08_redacted_thinking.sse")
    first, second, text = m.content
    assert first.redacted and first.thinking_signature.startswith("EqkECkYIBxgCKkA8")
    assert second.redacted and second.thinking_signature.endswith("GAE=")
    assert text.text.startswith("I notice that you've sent")


async def test_a16_in_stream_error_keeps_provider_message(loopback) -> None:
    events, m = await replay(loopback, "a16_docs_error_event.sse")
    assert [e.type for e in events] == ["start", "error"]
    assert m.error_message == "Overloaded" and m.stop_reason == "error"


async def test_a19_server_tools_ignored_and_usage_from_message_delta(loopback) -> None:
    _, m = await replay(loopback, "a19_vercel_prompt_cache.chunks.jsonl")
    assert summarise(m) == [("text", "The sum of the squares of the numbers 1 through 12 is **650**.")]
    assert (m.usage.input, m.usage.output, m.usage.cache_read, m.usage.cache_write) == (6, 198, 6289, 3337)
    assert m.stop_reason == "stop"


async def test_a20_empty_partial_json_means_no_arguments(loopback) -> None:
    _, m = await replay(loopback, "a20_vercel_tool_no_args.chunks.jsonl")
    assert m.tool_calls()[0].arguments == {} and m.tool_calls()[0].name == "updateIssueList"


# ---------------------------------------------------------------------------- synthetic streams


def sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


START = {"type": "message_start", "message": {"id": "msg_x", "usage": {"input_tokens": 5, "output_tokens": 1}}}
TEXT0 = {"type": "content_block_start", "index": 0, "content_block": {"type": "text", "text": ""}}


def text_delta(text: str, index: int = 0) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": {"type": "text_delta", "text": text}}


def finish(stop_reason: str, output: int = 3) -> tuple[dict[str, Any], ...]:
    return (
        {"type": "content_block_stop", "index": 0},
        {"type": "message_delta", "delta": {"stop_reason": stop_reason}, "usage": {"output_tokens": output}},
        {"type": "message_stop"},
    )


@pytest.mark.parametrize(
    ("wire", "expected"),
    [("end_turn", "stop"), ("stop_sequence", "stop"), ("pause_turn", "stop"), ("max_tokens", "length")],
)
async def test_stop_reason_mapping(loopback, wire: str, expected: str) -> None:
    loopback.push(sse_reply(sse(START, TEXT0, text_delta("ok"), *finish(wire))))
    _, m = await run_stream(make_model(loopback.url), user())
    assert m.stop_reason == expected and m.text() == "ok"


async def test_context_window_exceeded_stop_reason_is_an_overflow_error(loopback) -> None:
    loopback.push(sse_reply(sse(START, TEXT0, text_delta("partial"), *finish("model_context_window_exceeded"))))
    events, m = await run_stream(make_model(loopback.url), user())
    assert events[-1].type == "error" and m.text() == "partial"
    assert "context window was exceeded" in m.error_message and is_context_overflow(m)


async def test_unknown_blocks_and_deltas_are_skipped(loopback) -> None:
    body = sse(
        START,
        {"type": "content_block_start", "index": 0, "content_block": {"type": "compaction", "content": None}},
        {"type": "content_block_delta", "index": 0, "delta": {"type": "compaction_delta", "content": "summary"}},
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": {"type": "text", "text": ""}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "citations_delta", "citation": {"x": 1}}},
        {"type": "content_block_delta", "index": 1, "delta": {"type": "brand_new_delta", "v": 2}},
        text_delta("answer", 1),
        {"type": "content_block_stop", "index": 1},
        {"type": "some_future_event", "x": 1},
        {"type": "message_delta", "delta": {"stop_reason": "end_turn"},
         "usage": {"input_tokens": 9, "output_tokens": 4, "iterations": [{"x": 1}]},
         "context_management": {"applied_edits": []}},
        {"type": "message_stop"},
    )
    loopback.push(sse_reply(body))
    events, m = await run_stream(make_model(loopback.url), user())
    check_well_formed(events)
    assert summarise(m) == [("text", "answer")] and m.stop_reason == "stop"
    assert (m.usage.input, m.usage.output) == (9, 4)


async def test_malformed_json_fails_naming_the_event(loopback) -> None:
    body = sse(START, TEXT0, text_delta("kept")) + b"event: content_block_delta\ndata: {\"type\": oops\n\n"
    loopback.push(sse_reply(body + sse(*finish("end_turn"))))
    events, m = await run_stream(make_model(loopback.url), user())
    check_well_formed(events)
    assert m.stop_reason == "error" and "content_block_delta" in m.error_message and "malformed" in m.error_message
    assert m.text() == "kept"


async def test_stream_without_message_stop_is_incomplete(loopback) -> None:
    loopback.push(sse_reply(sse(START, TEXT0, text_delta("half"))))
    events, m = await run_stream(make_model(loopback.url), user())
    check_well_formed(events)
    assert m.stop_reason == "error" and "ended before completion" in m.error_message and m.text() == "half"


async def test_connection_cut_mid_stream_keeps_partial_content(loopback) -> None:
    body = load_body(recording("a07_thinking_text.sse"))
    loopback.push(sse_reply(body, cut_after=len(body) // 2))
    events, m = await run_stream(make_model(loopback.url), user())
    check_well_formed(events)
    assert m.stop_reason == "error" and "ended before completion" in m.error_message
    assert m.content and m.content[0].thinking.startswith("The user wants")


async def test_abort_mid_stream_keeps_partial_text(loopback) -> None:
    body = sse(START, TEXT0, text_delta("first"), *[text_delta(" more") for _ in range(20)], *finish("end_turn"))
    loopback.push(sse_reply(body, chunk_sizes=(40, 80), pause=0.02, hang=True))
    controller = AbortController()
    s = stream(make_model(loopback.url), user(), StreamOptions(api_key="k", signal=controller.signal))
    events = []
    async for event in s:
        events.append(event)
        if event.type == "text_delta" and not controller.aborted:
            controller.abort("user pressed Esc")
    m = await s.result()
    check_well_formed(events)
    assert m.stop_reason == "aborted" and events[-1].reason == "aborted"
    assert m.text().startswith("first") and len(m.text()) < len("first" + " more" * 20)


# ---------------------------------------------------------------------------- HTTP errors


def error_status(path: Path) -> int:
    return int(re.match(r"anthropic_(\d{3})_", path.name).group(1))


def provider_message(path: Path) -> str:
    return json.loads(path.read_text())["error"]["message"]


@pytest.mark.parametrize("path", ERROR_FILES, ids=lambda p: p.name)
async def test_error_bodies_end_with_the_provider_message(loopback, path: Path) -> None:
    status = error_status(path)
    for _ in range(3):
        loopback.push(json_reply(status, path.read_bytes()))
    options = StreamOptions(api_key="k", max_retries=2, retry_base_delay=0.001)
    events, m = await run_stream(make_model(loopback.url), user(), options)
    check_well_formed(events)
    assert m.stop_reason == "error" and provider_message(path) in m.error_message
    retryable = status in (408, 409, 429) or status >= 500
    assert len(loopback.requests) == (3 if retryable else 1)
    overflow = "too_long" in path.name or "exceed_context" in path.name
    assert is_context_overflow(m) == overflow


def headers_529() -> dict[str, str]:
    raw = json.loads((WIRE_DIR / "errors" / "anthropic_529_overloaded.response_headers.json").read_text())
    skip = {"content-length", "content-type", "connection", "transfer-encoding"}
    return {k: v for k, v in raw.items() if not k.startswith("_") and k not in skip}


@pytest.mark.parametrize(
    ("name", "headers"),
    [("anthropic_429_rate_limit.json", {"retry-after-ms": "5"}), ("anthropic_529_overloaded.json", None)],
)
async def test_retryable_errors_retry_then_succeed(loopback, name: str, headers: dict[str, str] | None) -> None:
    path = WIRE_DIR / "errors" / name
    loopback.push(json_reply(error_status(path), path.read_bytes(), headers or headers_529()))
    loopback.push(sse_reply(load_body(recording("a01_text_basic.sse"))))
    _, m = await run_stream(make_model(loopback.url), user(), StreamOptions(api_key="k", retry_base_delay=0.01))
    assert m.stop_reason == "stop" and m.text() == "Hello there!"
    assert len(loopback.requests) == 2 and loopback.requests[0].json == loopback.requests[1].json


async def test_retry_hint_above_limit_fails_at_once(loopback) -> None:
    path = WIRE_DIR / "errors" / "anthropic_429_rate_limit.json"
    loopback.push(json_reply(429, path.read_bytes(), {"retry-after": "120"}))
    options = StreamOptions(api_key="k", max_retry_delay=30, retry_base_delay=0.01)
    _, m = await run_stream(make_model(loopback.url), user(), options)
    assert m.stop_reason == "error" and provider_message(path) in m.error_message
    assert len(loopback.requests) == 1
