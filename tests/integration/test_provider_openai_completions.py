"""The openai-completions provider against a loopback server replaying recorded streams.

Every recording in fixtures/wire/openai_chat is replayed (files added later too) and checked
against an independent reading of the raw events; request bodies are compared with the
recorded requests; compat switches per server, error bodies, retries, malformed and cut
streams, abort and cross-provider histories are exercised over real HTTP.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import Reply, json_reply
from tests.support.stream_checks import check_event_grammar as check_well_formed
from tests.support.wire import WIRE_DIR, load_body, load_error, load_meta, recordings
from wolli.ai.abort import AbortController
from wolli.ai.overflow import is_context_overflow
from wolli.ai.providers.openai_compat import describe, detect_server, resolve_compat
from wolli.ai.stream import stream
from wolli.ai.types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

FOLDER = "openai_chat"
RECORDINGS = recordings(FOLDER)
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")


def make_model(url: str, id: str = "gpt-4o-mini", provider: str = "openai", **kw: Any) -> Model:
    kw.setdefault("input", ["text", "image"])
    return Model(id=id, api="openai-completions", provider=provider, base_url=url + "/v1", **kw)


def opts(**kw: Any) -> StreamOptions:
    kw.setdefault("retry_base_delay", 0.01)
    return StreamOptions(**kw)


async def collect(model: Model, context: Context, options: StreamOptions | None = None) -> tuple[list[Any], AssistantMessage]:
    s = stream(model, context, options or opts())
    events = [event async for event in s]
    return events, await s.result()


def ask(text: str = "hi") -> Context:
    return Context(messages=[UserMessage(content=text)])


def chunk(delta: dict[str, Any] | None = None, finish: str | None = None, **extra: Any) -> str:
    body = {"id": "chatcmpl-t", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish}]}
    body.update(extra)
    return "data: " + json.dumps(body) + "\n\n"


DONE = "data: [DONE]\n\n"


# ---------------------------------------------------------------------------- independent reading


def raw_events(body: bytes) -> list[tuple[str, str]]:
    """(event name, data) pairs of an SSE body, read without the project's SSE decoder."""
    out = []
    for block in re.split(r"\r\n\r\n|\n\n|\r\r", body.decode("utf-8")):
        name, data = "message", []
        for line in re.split(r"\r\n|\n|\r", block):
            if line.startswith("event:"):
                name = line[6:].strip()
            elif line.startswith("data:"):
                data.append(line[5:].removeprefix(" "))
        if data:
            out.append((name, "\n".join(data)))
    return out


def expected_from(body: bytes) -> dict[str, Any]:
    """What the final message must hold, derived directly from the raw chunks."""
    text, thinking, fields = "", "", []
    calls: dict[int, dict[str, Any]] = {}
    finish, usage, error, done = None, None, None, False
    for name, data in raw_events(body):
        if data.strip() == "[DONE]":
            done = True
            break
        obj = json.loads(data)
        if isinstance(obj.get("usage"), dict):
            usage = obj["usage"]
        if name == "error" or obj.get("error"):
            error = (obj.get("error") or obj).get("message")
            break
        for choice in obj.get("choices") or []:
            if choice.get("index", 0) != 0:
                continue
            delta = choice.get("delta") or {}
            for field in REASONING_FIELDS:
                if isinstance(delta.get(field), str) and delta[field]:
                    thinking += delta[field]
                    fields.append(field)
                    break
            if isinstance(delta.get("content"), str):
                text += delta["content"]
            for call in delta.get("tool_calls") or []:
                entry = calls.setdefault(call["index"], {"id": None, "name": None, "args": ""})
                entry["id"] = entry["id"] or call.get("id")
                entry["name"] = entry["name"] or (call.get("function") or {}).get("name")
                entry["args"] += (call.get("function") or {}).get("arguments") or ""
            if choice.get("finish_reason"):
                finish = choice["finish_reason"]
    if error is not None:
        stop = "error"
    elif finish is None and not done:
        stop = "error"
    else:
        stop = {"length": "length", "tool_calls": "toolUse"}.get(finish or "stop", "stop")
        if stop == "stop" and calls:
            stop = "toolUse"
    tokens = None
    if usage:
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or usage.get("prompt_cache_hit_tokens") or 0
        tokens = {"input": usage["prompt_tokens"] - cached, "output": usage["completion_tokens"], "cache_read": cached}
    return {
        "text": text,
        "thinking": thinking,
        "thinking_field": fields[0] if fields else None,
        "calls": [(c["id"], c["name"], json.loads(c["args"] or "{}")) for _, c in sorted(calls.items())],
        "stop": stop,
        "usage": tokens,
        "error": error,
    }



# ---------------------------------------------------------------------------- every recording


@pytest.mark.parametrize("path", RECORDINGS, ids=[p.name for p in RECORDINGS])
async def test_replays_every_recording(loopback, path: Path) -> None:
    body = load_body(path)
    loopback.push(Reply(body=body))
    events, message = await collect(make_model(loopback.url), ask(), opts(api_key="sk-test"))
    check_well_formed(events, message)
    want = expected_from(body)
    assert message.stop_reason == want["stop"]
    assert message.text() == want["text"]
    thinking = [b for b in message.content if isinstance(b, ThinkingContent)]
    assert "".join(b.thinking for b in thinking) == want["thinking"]
    if want["thinking"]:
        assert thinking[0].thinking_signature == want["thinking_field"]
    got_calls = [(c.id, c.name, c.arguments) for c in message.tool_calls()]
    assert got_calls == want["calls"]
    if want["error"] is not None:
        assert message.error_message == want["error"]
    if want["usage"] is not None:
        usage = message.usage
        assert (usage.input, usage.output, usage.cache_read) == tuple(want["usage"].values())
        assert usage.total_tokens == usage.input + usage.output + usage.cache_read + usage.cache_write
    assert loopback.last.path == "/v1/chat/completions"
    assert loopback.last.headers["authorization"] == "Bearer sk-test"


def _recording(name: str) -> Path:
    return next(p for p in RECORDINGS if p.name.startswith(name))


async def _replay(loopback, name: str, **model_kw: Any) -> AssistantMessage:
    loopback.push(Reply(body=load_body(_recording(name))))
    _, message = await collect(make_model(loopback.url, **model_kw), ask())
    return message


async def test_c01_text_and_usage(loopback) -> None:
    message = await _replay(loopback, "c01")
    assert message.text().startswith("I'm unable to provide real-time weather updates.")
    assert message.stop_reason == "stop"
    assert message.response_id == "chatcmpl-ABfw031mOJeYCSHe4yI2ZjOA6kMJL"
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (14, 30, 44)


async def test_c02_parallel_tool_calls_by_index(loopback) -> None:
    message = await _replay(loopback, "c02")
    calls = message.tool_calls()
    assert [(c.id, c.name) for c in calls] == [
        ("call_JMW1whyEaYG438VE1OIflxA2", "GetWeatherArgs"),
        ("call_DNYTawLBoN8fj3KN6qU9N1Ou", "get_stock_price"),
    ]
    assert calls[0].arguments == {"city": "Edinburgh", "country": "GB", "units": "c"}
    assert calls[1].arguments == {"ticker": "AAPL", "exchange": "NASDAQ"}
    assert message.stop_reason == "toolUse"
    assert (message.usage.input, message.usage.output) == (149, 60)


async def test_c04_length(loopback) -> None:
    message = await _replay(loopback, "c04")
    assert message.stop_reason == "length"
    assert message.text() == '{"'


async def test_c07_deepseek_reasoning_content(loopback) -> None:
    message = await _replay(loopback, "c07", id="deepseek-reasoner", provider="deepseek", reasoning=True)
    thinking = message.content[0]
    assert isinstance(thinking, ThinkingContent)
    assert thinking.thinking.startswith('Hmm, the user just said "Hello".')
    assert thinking.thinking_signature == "reasoning_content"
    assert message.text() == "Hello there! 😊 How can I help you today?"
    assert (message.usage.input, message.usage.output, message.usage.cache_read) == (6, 212, 0)


async def test_c09_openrouter_reasoning_and_comments(loopback) -> None:
    message = await _replay(loopback, "c09", id="anthropic/claude-sonnet-4.5", provider="openrouter", reasoning=True)
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "This is a simple arithmetic question. 2+2 equals 4."
    assert message.content[0].thinking_signature == "reasoning"
    assert message.text() == "2 + 2 = 4"
    assert (message.usage.input, message.usage.output) == (43, 36)


async def test_c12_groq_error_event_keeps_partial_thinking(loopback) -> None:
    message = await _replay(loopback, "c12", id="openai/gpt-oss-120b", provider="groq", reasoning=True)
    assert message.stop_reason == "error"
    assert message.error_message.startswith("Tool call validation failed: tool call validation failed")
    assert message.content[0].thinking.startswith("We need to call the tool")


async def test_c13_openrouter_error_inside_chunk(loopback) -> None:
    message = await _replay(loopback, "c13", id="minimax/minimax-m2:free", provider="openrouter")
    assert message.stop_reason == "error"
    assert message.error_message == "Token limit reached"
    assert message.content[0].thinking == "We need to respond to a greeting. The user"
    assert (message.usage.input, message.usage.output) == (43, 10)
    assert is_context_overflow(message)


# ---------------------------------------------------------------------------- excerpts as parser inputs


async def test_c14_llamacpp_excerpt(loopback) -> None:
    events = [d for _, d in raw_events((WIRE_DIR / FOLDER / "c14_llamacpp_reasoning_content.excerpt.sse").read_bytes())]
    # Events 1-2 (start + reasoning), a text chunk, then event 3 (finish + usage + timings).
    body = "".join(f"data: {d}\n\n" for d in events[:2]) + chunk({"content": "Hi"}) + f"data: {events[2]}\n\n" + DONE
    loopback.push(Reply(body=body.encode()))
    model = make_model(loopback.url, id="gpt-oss:120b", provider="llama.cpp", reasoning=True)
    _, message = await collect(model, ask())
    assert message.stop_reason == "stop"
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "We"
    assert message.content[0].thinking_signature == "reasoning_content"
    assert (message.usage.input, message.usage.output) == (1085, 247)
    # Later events carry timings with cache_n but no usage: they must not disturb anything.
    loopback.push(Reply(body=("".join(f"data: {d}\n\n" for d in events[3:]) + chunk(finish="stop")).encode()))
    _, message = await collect(model, ask())
    assert message.stop_reason == "stop" and message.content[0].thinking == " if the"


async def test_llamacpp_cache_n_counts_as_cache_read(loopback) -> None:
    usage = {"completion_tokens": 5, "prompt_tokens": 10, "total_tokens": 15}
    body = chunk({"content": "x"}) + chunk(finish="stop", usage=usage, timings={"cache_n": 7, "prompt_n": 3}) + DONE
    loopback.push(Reply(body=body.encode()))
    _, message = await collect(make_model(loopback.url, provider="llama.cpp"), ask())
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (3, 7, 5)


async def test_c15_ollama_excerpt(loopback) -> None:
    lines = (WIRE_DIR / FOLDER / "c15_ollama_reasoning_field.excerpt.jsonl").read_text().splitlines()
    body = "".join(f"data: {line}\n\n" for line in lines if line.strip()) + chunk({"content": "Yes"}, "stop") + DONE
    loopback.push(Reply(body=body.encode()))
    _, message = await collect(make_model(loopback.url, id="gpt-oss:20b", provider="ollama", reasoning=True), ask())
    assert message.content[0].thinking == "We need answer"
    assert message.content[0].thinking_signature == "reasoning"
    assert message.text() == "Yes"


async def test_mistral_content_parts_and_usage_on_finish_chunk(loopback) -> None:
    parts = [{"type": "thinking", "thinking": [{"type": "text", "text": "Let me think."}]}]
    usage = {"prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16}
    body = chunk({"role": "assistant", "content": parts}) + chunk({"content": [{"type": "text", "text": "Answer"}]})
    body += chunk({"content": ""}, "stop", usage=usage) + DONE
    loopback.push(Reply(body=body.encode()))
    _, message = await collect(make_model(loopback.url, id="magistral-small", provider="mistral", reasoning=True), ask())
    assert [b.type for b in message.content] == ["thinking", "text"]
    assert message.content[0].thinking == "Let me think."
    assert message.text() == "Answer"
    assert (message.usage.input, message.usage.output) == (12, 4)


async def test_reasoning_text_refusal_and_deepseek_cache_hits(loopback) -> None:
    usage = {"prompt_tokens": 400, "completion_tokens": 9, "prompt_cache_hit_tokens": 320, "prompt_cache_miss_tokens": 80}
    body = chunk({"reasoning_text": "hmm"}) + chunk({"refusal": "I can't help with that."}) + chunk(finish="stop", usage=usage) + DONE
    loopback.push(Reply(body=body.encode()))
    _, message = await collect(make_model(loopback.url, provider="deepseek"), ask())
    assert message.content[0].thinking_signature == "reasoning_text"
    assert message.text() == "I can't help with that."
    assert (message.usage.input, message.usage.cache_read, message.usage.output) == (80, 320, 9)


async def test_tool_call_without_index_and_reused_index(loopback) -> None:
    first = {"tool_calls": [{"index": 0, "id": "a1", "type": "function", "function": {"name": "read", "arguments": '{"path"'}}]}
    more = {"tool_calls": [{"index": 0, "function": {"arguments": ': "x"}'}}]}
    second = {"tool_calls": [{"index": 0, "id": "b2", "type": "function", "function": {"name": "ls", "arguments": {"dir": "."}}}]}
    body = chunk(first) + chunk(more) + chunk(second) + chunk(finish="tool_calls") + DONE
    loopback.push(Reply(body=body.encode()))
    _, message = await collect(make_model(loopback.url, provider="ollama"), ask())
    assert [(c.id, c.name, c.arguments) for c in message.tool_calls()] == [
        ("a1", "read", {"path": "x"}),
        ("b2", "ls", {"dir": "."}),
    ]
    assert message.stop_reason == "toolUse"


async def test_content_filter_is_an_error(loopback) -> None:
    loopback.push(Reply(body=(chunk({"content": "Part"}) + chunk(finish="content_filter") + DONE).encode()))
    _, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "error"
    assert "content_filter" in message.error_message
    assert message.text() == "Part"


async def test_finish_without_done_completes_but_bare_end_fails(loopback) -> None:
    loopback.push(Reply(body=(chunk({"content": "ok"}) + chunk(finish="stop")).encode()))
    _, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "stop" and message.text() == "ok"
    loopback.push(Reply(body=chunk({"content": "partial"}).encode()))
    events, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "error"
    assert "ended before completion" in message.error_message
    assert message.text() == "partial"
    check_well_formed(events, message)


async def test_error_event_with_plain_text_and_no_space_after_colon(loopback) -> None:
    body = 'data:{"choices":[{"index":0,"delta":{"content":"a"}}]}\n\nevent: error\ndata: upstream exploded\n\n'
    loopback.push(Reply(body=body.encode()))
    _, message = await collect(make_model(loopback.url), ask())
    assert message.text() == "a"
    assert message.error_message == "upstream exploded"


async def test_malformed_json_fails_clearly(loopback) -> None:
    loopback.push(Reply(body=(chunk({"content": "a"}) + "data: {not json\n\n" + DONE).encode()))
    events, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "error"
    assert "malformed JSON" in message.error_message and "'message' event" in message.error_message
    assert message.text() == "a"
    check_well_formed(events, message)


async def test_cut_stream_keeps_partial_text(loopback) -> None:
    body = load_body(_recording("c01"))
    loopback.push(Reply(body=body, cut_after=len(body) // 2))
    events, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "error"
    assert "ended before completion" in message.error_message
    assert message.text().startswith("I'm unable")
    check_well_formed(events, message)


async def test_abort_mid_stream_keeps_partial_text(loopback) -> None:
    loopback.push(Reply(body=load_body(_recording("c01")), chunk_sizes=(40, 80), pause=0.02))
    controller = AbortController()
    s = stream(make_model(loopback.url), ask(), opts(signal=controller.signal))
    events = []
    async for event in s:
        events.append(event)
        if event.type == "text_delta":
            controller.abort()
    message = await s.result()
    assert message.stop_reason == "aborted"
    full = expected_from(load_body(_recording("c01")))["text"]
    assert message.text() and full.startswith(message.text()) and len(message.text()) < len(full)
    assert events[-1].type == "error"


# ---------------------------------------------------------------------------- request bodies


def _meta_body(name: str) -> dict[str, Any]:
    meta = load_meta(_recording(name))
    assert meta is not None
    return meta["request"]["body_json"]


def _normalise_calls(messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Messages with tool-call arguments parsed, so JSON spacing does not matter."""
    out = []
    for message in messages:
        message = dict(message)
        if "tool_calls" in message:
            message["tool_calls"] = [
                {**c, "function": {**c["function"], "arguments": json.loads(c["function"]["arguments"])}}
                for c in message["tool_calls"]
            ]
        out.append(message)
    return out


def _tools_from(body: dict[str, Any]) -> list[Tool]:
    return [
        Tool(name=t["function"]["name"], description=t["function"]["description"], parameters=t["function"]["parameters"])
        for t in body.get("tools", [])
    ]


async def _send(loopback, model: Model, context: Context, options: StreamOptions | None = None) -> dict[str, Any]:
    loopback.push(Reply(body=(chunk({"content": "ok"}, "stop") + DONE).encode()))
    _, message = await collect(model, context, options)
    assert message.stop_reason == "stop", message.error_message
    return loopback.last.json


async def test_request_c05_first_turn(loopback) -> None:
    want = _meta_body("c05")
    context = Context(messages=[UserMessage(content="What is 1231 * 2331?")], tools=_tools_from(want))
    sent = await _send(loopback, make_model(loopback.url), context)
    for key in ("model", "messages", "stream", "stream_options", "tools"):
        assert sent[key] == want[key], key
    assert sent["store"] is False and sent["max_completion_tokens"] == 16_384
    assert "max_tokens" not in sent


async def test_request_c06_tool_call_replay_and_result(loopback) -> None:
    want = _meta_body("c06")
    model = make_model(loopback.url)
    call = ToolCall(id="call_1EYWDzueHEp8OsB8jJSEp7WB", name="multiply", arguments={"a": 1231, "b": 2331})
    history = [
        UserMessage(content="What is 1231 * 2331?"),
        AssistantMessage(content=[call], api=model.api, provider=model.provider, model=model.id, stop_reason="toolUse"),
        ToolResultMessage(tool_call_id=call.id, tool_name="multiply", content=[TextContent(text="2869461")]),
    ]
    sent = await _send(loopback, model, Context(messages=history, tools=_tools_from(want)))
    # The recording also has an empty assistant message (a quirk of the client that made it).
    recorded = [m for m in want["messages"] if m != {"role": "assistant", "content": ""}]
    assert _normalise_calls(sent["messages"]) == _normalise_calls(recorded)
    assert sent["tools"] == want["tools"]


async def test_request_c07_deepseek(loopback) -> None:
    want = _meta_body("c07")
    model = make_model(loopback.url, id="deepseek-reasoner", provider="deepseek", reasoning=True)
    sent = await _send(loopback, model, ask("Hello"), opts(reasoning="high"))
    for key in ("model", "messages", "stream", "stream_options"):
        assert sent[key] == want[key], key
    assert "reasoning_effort" not in sent and "store" not in sent
    assert sent["max_tokens"] == model.max_tokens


async def test_request_c09_openrouter_reasoning(loopback) -> None:
    want = _meta_body("c09")
    model = make_model(loopback.url, id="anthropic/claude-sonnet-4.5", provider="openrouter", reasoning=True)
    sent = await _send(loopback, model, ask("What is 2+2?"), opts(reasoning="medium"))
    for key in ("model", "messages", "stream", "stream_options"):
        assert sent[key] == want[key], key
    assert want["reasoning"]["enabled"] and sent["reasoning"] == {"effort": "medium"}
    off = await _send(loopback, model, ask("What is 2+2?"), opts(reasoning="off"))
    assert off["reasoning"] == {"effort": "none"}


async def test_request_c12_groq_system_prompt_and_tools(loopback) -> None:
    want = _meta_body("c12")
    system = want["messages"][0]["content"]
    model = make_model(loopback.url, id="openai/gpt-oss-120b", provider="groq", reasoning=True)
    context = Context(system_prompt=system, messages=[UserMessage(content=want["messages"][1]["content"])], tools=_tools_from(want))
    sent = await _send(loopback, model, context, opts(reasoning="minimal"))
    assert sent["messages"] == want["messages"]
    assert sent["tools"] == want["tools"]
    assert sent["reasoning_effort"] == "low"  # Groq knows low/medium/high only


async def test_request_c13_openrouter_max_tokens(loopback) -> None:
    want = _meta_body("c13")
    model = make_model(loopback.url, id="minimax/minimax-m2:free", provider="openrouter")
    sent = await _send(loopback, model, ask("Hello there"), opts(max_tokens=10))
    for key in ("model", "messages", "stream", "stream_options", "max_completion_tokens"):
        assert sent[key] == want[key], key


async def test_headers_and_no_key_for_local_servers(loopback) -> None:
    model = make_model(loopback.url, provider="ollama", headers={"X-Model": "m"})
    sent = await _send(loopback, model, ask(), opts(headers={"X-Call": "c"}))
    headers = loopback.last.headers
    assert "authorization" not in headers
    assert headers["x-model"] == "m" and headers["x-call"] == "c"
    assert "max_tokens" not in sent and "max_completion_tokens" not in sent  # local: no default limit
    sent = await _send(loopback, model, ask(), opts(max_tokens=99, temperature=0.2))
    assert sent["max_tokens"] == 99 and sent["temperature"] == 0.2
    configured = Model.model_validate({"id": "q", "api": "openai-completions", "provider": "llamacpp",
                                       "baseUrl": loopback.url + "/v1", "maxTokens": 4096})
    assert (await _send(loopback, configured, ask()))["max_tokens"] == 4096
    qwen = make_model(loopback.url, id="qwen/qwen3-32b", provider="groq", reasoning=True)
    assert (await _send(loopback, qwen, ask(), opts(reasoning="high")))["reasoning_effort"] == "default"


async def test_on_payload_replaces_body_sync_and_async(loopback) -> None:
    model = make_model(loopback.url)
    sent = await _send(loopback, model, ask(), opts(on_payload=lambda p, m: {**p, "seed": 7}))
    assert sent["seed"] == 7

    async def hook(payload: dict[str, Any], m: Model) -> None:
        payload["user"] = "u1"  # mutating in place and returning None keeps the payload

    sent = await _send(loopback, model, ask(), opts(on_payload=hook, session_id="s-1"))
    assert sent["user"] == "u1" and sent["prompt_cache_key"] == "s-1"


async def test_system_prompt_role_and_reasoning_formats(loopback) -> None:
    ctx = Context(system_prompt="Be brief.", messages=[UserMessage(content="hi")])
    openai = await _send(loopback, make_model(loopback.url, id="gpt-5", reasoning=True), ctx, opts(reasoning="xhigh", temperature=0.5))
    assert openai["messages"][0] == {"role": "developer", "content": "Be brief."}
    assert openai["reasoning_effort"] == "high" and "temperature" not in openai
    cases = [
        ("zai", {}, "high", {"thinking": {"type": "enabled"}}),
        ("zai", {}, None, {"thinking": {"type": "disabled"}}),
        ("dashscope", {}, "low", {"enable_thinking": True}),
        ("vllm", {"thinkingFormat": "qwen-chat-template"}, "off", {"chat_template_kwargs": {"enable_thinking": False}}),
        ("xai", {}, "high", {}),
        ("openai", {"reasoningEffortMap": {"xhigh": "xhigh"}}, "xhigh", {"reasoning_effort": "xhigh"}),
    ]
    keys = ("thinking", "enable_thinking", "chat_template_kwargs", "reasoning_effort", "reasoning")
    for provider, compat, level, expected in cases:
        model = make_model(loopback.url, id="m", provider=provider, reasoning=True, compat=compat)
        sent = await _send(loopback, model, ctx, opts(reasoning=level))
        assert {k: sent[k] for k in keys if k in sent} == expected, provider
        if provider != "openai":
            assert sent["messages"][0]["role"] == "system"
    plain = await _send(loopback, make_model(loopback.url, provider="zai"), ctx, opts(reasoning="high"))
    assert "thinking" not in plain  # not a reasoning model


async def test_invalid_compat_value_fails_clearly(loopback) -> None:
    model = make_model(loopback.url, compat={"maxTokensField": "max_output"})
    _, message = await collect(model, ask())
    assert message.stop_reason == "error" and "maxTokensField" in message.error_message
    assert loopback.requests == []


def test_compat_detection_per_server() -> None:
    def compat(provider: str, url: str) -> dict[str, Any]:
        return describe(resolve_compat(Model(id="m", api="openai-completions", provider=provider, base_url=url)))

    assert detect_server("custom", "https://api.openai.com/v1") == ("openai", False)
    assert detect_server("custom", "https://openrouter.ai/api/v1")[0] == "openrouter"
    assert detect_server("custom", "https://api.groq.com/openai/v1")[0] == "groq"
    assert detect_server("custom", "https://api.x.ai/v1")[0] == "xai"
    assert detect_server("custom", "https://api.deepseek.com")[0] == "deepseek"
    assert detect_server("custom", "https://api.mistral.ai/v1")[0] == "mistral"
    assert detect_server("custom", "https://api.z.ai/api/paas/v4")[0] == "zai"
    assert detect_server("custom", "https://dashscope-intl.aliyuncs.com/compatible-mode/v1")[0] == "qwen"
    assert detect_server("custom", "http://localhost:11434/v1") == ("ollama", True)
    assert detect_server("custom", "http://127.0.0.1:1234/v1") == ("lmstudio", True)
    assert detect_server("llama.cpp", "http://10.0.0.5:8080/v1") == ("llamacpp", True)
    assert detect_server("vllm", "http://gpu-box:8000/v1") == ("vllm", True)
    assert detect_server("custom", "http://192.168.1.9:8000/v1") == ("local", True)
    assert detect_server("custom", "https://llm.example.com/v1") == ("generic", False)
    mistral = compat("mistral", "")
    assert mistral["requiresToolResultName"] and mistral["requiresMistralToolIds"] and not mistral["supportsUsageInStreaming"]
    assert compat("openai", "")["supportsDeveloperRole"] and compat("openai", "")["supportsStore"]
    assert compat("ollama", "")["maxTokensField"] == "max_tokens" and not compat("ollama", "")["supportsStore"]
    assert compat("zai", "")["thinkingFormat"] == "zai" and compat("qwen", "")["thinkingFormat"] == "qwen"
    assert not compat("xai", "")["supportsReasoningEffort"]
    override = Model(id="m", api="openai-completions", provider="mistral", compat={"requiresToolResultName": False, "unknownKey": 1})
    assert not describe(resolve_compat(override))["requiresToolResultName"]


# ---------------------------------------------------------------------------- history serialisation


async def test_images_in_user_messages_and_tool_results(loopback) -> None:
    model = make_model(loopback.url)
    image = ImageContent(data=PNG, mime_type="image/png")
    calls = [ToolCall(id="call_a", name="screenshot", arguments={}), ToolCall(id="call_b", name="read", arguments={"path": "x"})]
    history = [
        UserMessage(content=[TextContent(text="Look:"), image]),
        AssistantMessage(content=calls, api=model.api, provider=model.provider, model=model.id, stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="call_a", tool_name="screenshot", content=[image]),
        ToolResultMessage(tool_call_id="call_b", tool_name="read", content=[TextContent(text="no such file")], is_error=True),
        UserMessage(content="thanks"),
    ]
    sent = (await _send(loopback, model, Context(messages=history)))["messages"]
    assert sent[0]["content"] == [
        {"type": "text", "text": "Look:"},
        {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
    ]
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "tool", "user", "user"]
    assert sent[2] == {"role": "tool", "tool_call_id": "call_a", "content": "(see the attached image)"}
    assert sent[3]["content"] == "no such file"
    assert sent[4]["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "content" not in sent[1]
    text_only = (await _send(loopback, make_model(loopback.url, input=["text"]), Context(messages=history)))["messages"]
    assert "omitted" in text_only[0]["content"] and "omitted" in text_only[2]["content"]
    assert [m["role"] for m in text_only] == ["user", "assistant", "tool", "tool", "user"]


async def test_same_model_thinking_replays_in_its_field(loopback) -> None:
    model = make_model(loopback.url, id="deepseek-reasoner", provider="deepseek", reasoning=True)
    own = AssistantMessage(
        content=[
            ThinkingContent(thinking="Let me see.", thinking_signature="reasoning_content"),
            TextContent(text="Sure."),
        ],
        api=model.api, provider=model.provider, model=model.id,
    )
    sent = (await _send(loopback, model, Context(messages=[UserMessage(content="q"), own, UserMessage(content="more")])))["messages"]
    assert sent[1] == {"role": "assistant", "reasoning_content": "Let me see.", "content": "Sure."}
    ollama = make_model(loopback.url, id="gpt-oss:20b", provider="ollama", reasoning=True)
    own_ollama = own.model_copy(update={"provider": "ollama", "model": "gpt-oss:20b", "content": [
        ThinkingContent(thinking="Hm.", thinking_signature="reasoning"), TextContent(text="Yes.")]})
    sent = (await _send(loopback, ollama, Context(messages=[UserMessage(content="q"), own_ollama])))["messages"]
    assert sent[1] == {"role": "assistant", "reasoning": "Hm.", "content": "Yes."}
    groq = make_model(loopback.url, id="gpt-oss:20b", provider="groq", reasoning=True)
    own_groq = own_ollama.model_copy(update={"provider": "groq"})
    sent = (await _send(loopback, groq, Context(messages=[UserMessage(content="q"), own_groq])))["messages"]
    assert sent[1] == {"role": "assistant", "content": "Yes."}  # Groq rejects reasoning fields
    mistral = make_model(loopback.url, id="magistral", provider="mistral", reasoning=True)
    own_mistral = own_ollama.model_copy(update={"provider": "mistral", "model": "magistral"})
    sent = (await _send(loopback, mistral, Context(messages=[UserMessage(content="q"), own_mistral])))["messages"]
    assert sent[1] == {"role": "assistant", "content": "Hm.\n\nYes."}


async def test_openrouter_signed_reasoning_survives_a_tool_round_trip(loopback) -> None:
    details = [{"type": "reasoning.text", "text": "Think", "format": "anthropic-claude-v1", "index": 0}]
    signed = [{"type": "reasoning.text", "signature": "SIG==", "format": "anthropic-claude-v1", "index": 0}]
    call = {"tool_calls": [{"index": 0, "id": "toolu_1", "type": "function", "function": {"name": "ls", "arguments": "{}"}}]}
    body = chunk({"reasoning": "Think", "reasoning_details": details}) + chunk({"reasoning": None, "reasoning_details": signed})
    body += chunk(call) + chunk(finish="tool_calls") + DONE
    loopback.push(Reply(body=body.encode()))
    model = make_model(loopback.url, id="anthropic/claude-sonnet-4.5", provider="openrouter", reasoning=True)
    _, first = await collect(model, ask())
    assert first.stop_reason == "toolUse"
    result = ToolResultMessage(tool_call_id="toolu_1", tool_name="ls", content=[TextContent(text="a.txt")])
    sent = (await _send(loopback, model, Context(messages=[UserMessage(content="hi"), first, result])))["messages"]
    assert sent[1]["reasoning"] == "Think"
    assert sent[1]["reasoning_details"] == [
        {"type": "reasoning.text", "text": "Think", "format": "anthropic-claude-v1", "index": 0, "signature": "SIG=="}
    ]


def _foreign_history() -> list[Any]:
    """A conversation produced by other providers, with ids this API would reject."""
    long_id = "call_QhAfjS3n9Fz1|fc_0123456789abcdef0123456789abcdef0123456789abcdef0123"
    return [
        UserMessage(content="Fix the bug"),
        AssistantMessage(
            content=[
                ThinkingContent(thinking="I should read the file.", thinking_signature="EoQDCm0IDhgCKkCD"),
                ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
                TextContent(text="Reading it."),
                ToolCall(id="toolu_01825dXWLSoJwCst1qTsiWdb", name="read", arguments={"path": "a.py"}),
            ],
            api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5", stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id="toolu_01825dXWLSoJwCst1qTsiWdb", tool_name="read", content=[TextContent(text="x = 1")]),
        AssistantMessage(
            content=[
                ToolCall(id=long_id, name="edit", arguments={"path": "a.py"}),
                ToolCall(id="call_orphan|fc_1", name="bash", arguments={"command": "ls"}),
            ],
            api="openai-responses", provider="openai", model="gpt-5.5", stop_reason="toolUse",
        ),
        ToolResultMessage(tool_call_id=long_id, tool_name="edit", content=[TextContent(text="done")]),
        UserMessage(content="And now?"),
        AssistantMessage(content=[TextContent(text="half")], api="google-generative-ai", provider="google", model="gemini", stop_reason="error"),
        UserMessage(content="Continue"),
    ]


def _check_tool_pairs(messages: list[dict[str, Any]], id_pattern: str) -> list[str]:
    """Every tool_call is answered by a tool message right after its assistant message."""
    ids = []
    for i, message in enumerate(messages):
        calls = message.get("tool_calls") or []
        if not calls:
            continue
        answered = []
        for follower in messages[i + 1 :]:
            if follower["role"] != "tool":
                break
            answered.append(follower["tool_call_id"])
        assert answered == [c["id"] for c in calls]
        for call in calls:
            assert re.fullmatch(id_pattern, call["id"]), call["id"]
            ids.append(call["id"])
    assert len(ids) == len(set(ids))
    return ids


async def test_cross_provider_history_for_openai(loopback) -> None:
    sent = (await _send(loopback, make_model(loopback.url, reasoning=True), Context(messages=_foreign_history())))["messages"]
    ids = _check_tool_pairs(sent, r"[A-Za-z0-9_-]{1,40}")
    assert ids[0] == "toolu_01825dXWLSoJwCst1qTsiWdb" and ids[1] == "call_QhAfjS3n9Fz1" and ids[2] == "call_orphan"
    first = sent[1]
    assert first["content"] == "I should read the file.\n\nReading it."
    assert not any(f in m for m in sent for f in REASONING_FIELDS)
    orphan = next(m for m in sent if m.get("tool_call_id") == "call_orphan")
    assert orphan["content"] == "No result provided"
    assert "half" not in json.dumps(sent)  # errored turns are skipped
    assert [m["role"] for m in sent][-2:] == ["user", "user"]


async def test_cross_provider_history_for_mistral(loopback) -> None:
    model = make_model(loopback.url, id="mistral-large-latest", provider="mistral")
    sent = await _send(loopback, model, Context(messages=_foreign_history()))
    messages = sent["messages"]
    _check_tool_pairs(messages, r"[A-Za-z0-9]{9}")
    assert all(m["name"] for m in messages if m["role"] == "tool")
    for i, message in enumerate(messages[1:], 1):
        if message["role"] == "user":
            assert messages[i - 1]["role"] != "tool"
    assert "stream_options" not in sent and sent["max_tokens"] == model.max_tokens


# ---------------------------------------------------------------------------- HTTP errors


def _error_reply(name: str, **headers: str) -> Reply:
    status = int(re.search(r"_(\d{3})_", name).group(1))
    return json_reply(status, load_error(name), headers=headers)


def _provider_message(name: str) -> str:
    return json.loads(load_error(name))["error"]["message"]


@pytest.mark.parametrize(
    "name",
    ["openai_400_context_length_exceeded.json", "openai_chat_404_model_not_found.json", "groq_400_tool_use_failed.json"],
)
async def test_error_bodies_end_with_the_providers_message(loopback, name: str) -> None:
    loopback.push(_error_reply(name))
    events, message = await collect(make_model(loopback.url), ask())
    assert [e.type for e in events] == ["start", "error"]
    assert message.stop_reason == "error"
    assert _provider_message(name) in message.error_message
    assert len(loopback.requests) == 1  # 4xx other than 408/409/429 are not retried
    assert is_context_overflow(message) == ("context_length" in name)


async def test_429_retries_then_succeeds(loopback) -> None:
    name = "openai_429_rate_limit_exceeded.json"
    loopback.push(_error_reply(name, **{"retry-after-ms": "5"}), json_reply(503, {"error": {"message": "busy"}}))
    loopback.push(Reply(body=load_body(_recording("c01"))))
    _, message = await collect(make_model(loopback.url), ask(), opts(api_key="k"))
    assert message.stop_reason == "stop"
    assert len(loopback.requests) == 3
    assert all(r.json == loopback.requests[0].json for r in loopback.requests)


async def test_429_with_long_retry_hint_fails_at_once(loopback) -> None:
    name = "openai_429_rate_limit_exceeded.json"
    loopback.push(_error_reply(name, **{"retry-after": "3600"}))
    _, message = await collect(make_model(loopback.url), ask(), opts(max_retry_delay=5))
    assert message.stop_reason == "error"
    assert _provider_message(name) in message.error_message
    assert len(loopback.requests) == 1


async def test_connection_refused_is_an_error_not_an_exception() -> None:
    model = Model(id="m", api="openai-completions", provider="ollama", base_url="http://127.0.0.1:9/v1")
    _, message = await collect(model, ask(), opts(max_retries=0))
    assert message.stop_reason == "error" and message.error_message


async def test_missing_base_url_defaults_or_explains() -> None:
    model = Model(id="m", api="openai-completions", provider="my-proxy")
    _, message = await collect(model, ask())
    assert message.stop_reason == "error" and "baseUrl" in message.error_message


async def test_many_concurrent_streams(loopback) -> None:
    body = load_body(_recording("c02"))
    for _ in range(5):
        loopback.push(Reply(body=body))
    results = await asyncio.gather(*(collect(make_model(loopback.url), ask()) for _ in range(5)))
    assert all(len(m.tool_calls()) == 2 for _, m in results)
