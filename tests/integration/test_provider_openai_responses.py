"""The openai-responses provider against a loopback server replaying recorded streams.

Every recording in fixtures/wire/openai_responses is replayed (files added later too) and
checked against an independent reading of the raw events below; request bodies are compared
with the recorded requests; error bodies, retries, malformed and cut streams, abort and a
cross-provider history are exercised over real HTTP.
"""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import Reply, json_reply
from tests.support.stream_checks import check_event_grammar as check_grammar
from tests.support.wire import load_body, load_error, load_meta, recordings
from wolli.ai.abort import AbortController
from wolli.ai.overflow import is_context_overflow
from wolli.ai.providers.openai_responses import normalize_id
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

FOLDER = "openai_responses"
RECORDINGS = recordings(FOLDER)
WITH_META = [p for p in RECORDINGS if load_meta(p) is not None]
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="
ITEM_KINDS = ("message", "reasoning", "function_call")
SAFE_CALL_ID = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def make_model(url: str, id: str = "gpt-5.5", reasoning: bool = True, **kw: Any) -> Model:
    return Model(
        id=id, api="openai-responses", provider="openai", base_url=url, reasoning=reasoning,
        input=["text", "image"], **kw,
    )


async def collect(
    model: Model, context: Context, options: StreamOptions | None = None
) -> tuple[list[Any], AssistantMessage]:
    s = stream(model, context, options or StreamOptions(retry_base_delay=0.01))
    events = [event async for event in s]
    return events, await s.result()


def ask(text: str = "hi") -> Context:
    return Context(messages=[UserMessage(content=text)])


def rec(prefix: str) -> bytes:
    """The body of the recording whose name starts with ``prefix`` (e.g. ``"r01"``)."""
    return load_body(next(p for p in RECORDINGS if p.name.startswith(prefix)))


def result(call_id: str, text: str, name: str = "t", **kw: Any) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name=name, content=[TextContent(text=text)], **kw)


# ---------------------------------------------------------------------------- raw reading


def raw_events(body: bytes) -> list[dict[str, Any]]:
    """Data payloads of an SSE body, read without the project's SSE decoder."""
    out = []
    for block in re.split(r"\r?\n\r?\n", body.decode("utf-8")):
        data = [line[5:].lstrip(" ") for line in block.splitlines() if line.startswith("data:")]
        if data:
            out.append(json.loads("\n".join(data)))
    return out


def split_responses(body: bytes) -> list[bytes]:
    """One body per response: some recordings concatenate several (each restarts at created)."""
    blocks = [b for b in re.split(rb"\r?\n\r?\n", body) if b.strip()]
    groups: list[list[bytes]] = []
    for block in blocks:
        if b'"response.created"' in block or not groups:
            if not groups or any(b'"response.created"' in x for x in groups[-1]):
                groups.append([])
        groups[-1].append(block)
    return [b"\n\n".join(g) + b"\n\n" for g in groups]


def reference(events: list[dict[str, Any]]) -> dict[str, Any]:
    """What the final message must hold, derived directly from the wire events."""
    texts: dict[str, str] = {}
    order: list[tuple[str, str]] = []
    ref: dict[str, Any] = {"thinking": [], "tools": [], "usage": None, "stop": None, "error": None}
    ref["id"] = None
    done_items: dict[str, dict[str, Any]] = {}
    for ev in events:
        t = ev.get("type")
        if t == "response.created":
            ref["id"] = ev["response"]["id"]
        elif t == "response.output_item.added" and ev["item"]["type"] in ITEM_KINDS:
            order.append((ev["item"]["type"], ev["item"]["id"]))
            texts.setdefault(ev["item"]["id"], "")
        elif t in ("response.output_text.delta", "response.refusal.delta"):
            texts[ev["item_id"]] = texts.get(ev["item_id"], "") + ev["delta"]
        elif t == "response.output_item.done":
            done_items[ev["item"].get("id")] = ev["item"]
        elif t in ("response.completed", "response.incomplete", "response.failed"):
            resp = ev["response"]
            ref["usage"] = resp.get("usage")
            if ref["stop"] is None:
                if t == "response.failed":
                    ref["stop"], ref["error"] = "error", resp["error"]["message"]
                elif t == "response.incomplete":
                    reason = resp["incomplete_details"]["reason"]
                    ref["stop"] = "error" if reason == "content_filter" else "length"
                else:
                    ref["stop"] = "stop"
            break
        elif t == "error":
            err = ev.get("error") if isinstance(ev.get("error"), dict) else ev
            ref["stop"], ref["error"] = "error", err["message"]
            break
    ref["texts"] = [texts[i] for kind, i in order if kind == "message"]
    for kind, item_id in order:
        item = done_items.get(item_id)
        if item is None:
            continue
        if kind == "reasoning":
            parts = [s["text"] for s in item.get("summary") or [] if s["text"]]
            parts = parts or [c["text"] for c in item.get("content") or [] if c.get("text")]  # raw reasoning
            ref["thinking"].append("\n\n".join(parts))
        elif kind == "function_call":
            args = json.loads(item["arguments"] or "{}")
            ref["tools"].append((f"{item['call_id']}|{item['id']}", item["name"], args))
    if ref["stop"] == "stop" and ref["tools"]:
        ref["stop"] = "toolUse"
    return ref



# ---------------------------------------------------------------------------- 1. recordings


def test_recordings_found() -> None:
    names = {p.name.split("_")[0] for p in RECORDINGS}
    assert {"r01", "r02", "r04", "r09"} <= names


@pytest.mark.parametrize("path", RECORDINGS, ids=lambda p: p.name)
async def test_recording_replays_to_reference(loopback, path: Path) -> None:
    for part in split_responses(load_body(path)):
        loopback.push(Reply(body=part))
        events, message = await collect(make_model(loopback.url), ask())
        check_grammar(events, message)
        ref = reference(raw_events(part))
        assert message.stop_reason == ref["stop"]
        assert message.response_id == ref["id"]
        assert [b.text for b in message.content if isinstance(b, TextContent)] == ref["texts"]
        assert [b.thinking for b in message.content if isinstance(b, ThinkingContent)] == ref["thinking"]
        assert [(b.id, b.name, b.arguments) for b in message.tool_calls()] == ref["tools"]
        if ref["error"]:
            assert ref["error"] in (message.error_message or "")
        if ref["usage"]:
            details = ref["usage"].get("input_tokens_details") or {}
            cached, written = details.get("cached_tokens") or 0, details.get("cache_write_tokens") or 0
            assert message.usage.input == ref["usage"]["input_tokens"] - cached - written
            assert (message.usage.cache_read, message.usage.cache_write) == (cached, written)
            assert message.usage.output == ref["usage"]["output_tokens"]
            assert message.usage.total_tokens == ref["usage"]["total_tokens"]


async def test_r02_function_call_exact(loopback) -> None:
    loopback.push(Reply(body=rec("r02")))
    _, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "toolUse"
    [call] = message.tool_calls()
    assert call.id == "call_sVidsfFJ6zlzRpelrPkTPlpd|fc_00d64fa806f333310169fab1bf324481a0852cda3180856290"
    assert (call.name, call.arguments) == ("multiply", {"a": 1231, "b": 2331})
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (58, 23, 81)


async def test_r04_reasoning_summary_exact(loopback) -> None:
    loopback.push(Reply(body=rec("r04")))
    _, message = await collect(make_model(loopback.url, id="o3-mini"), ask())
    thinking, text = message.content
    assert isinstance(thinking, ThinkingContent) and isinstance(text, TextContent)
    assert thinking.thinking.startswith("**Providing street crossing instructions**\n\n")
    assert thinking.thinking.count("\n\n**") == 3  # four summary parts, blank-line separated
    item = json.loads(thinking.thinking_signature or "")
    assert item["id"] == "rs_68c42d1d0878819d8266007cd3d1402c08fbf9b1584184ff"
    assert item["type"] == "reasoning" and item["encrypted_content"].startswith("gAAAA")
    assert text.text_signature == "msg_68c42d26866c819da8d5c606621c911608fbf9b1584184ff"
    assert text.text.startswith("I'm not a road safety professional")
    assert (message.usage.output, message.stop_reason) == (1680, "stop")


async def test_r09_insufficient_quota(loopback) -> None:
    loopback.push(Reply(body=rec("r09")))
    events, message = await collect(make_model(loopback.url), ask())
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert "You exceeded your current quota" in (message.error_message or "")
    assert "insufficient_quota" in (message.error_message or "")


# ---------------------------------------------------------------------------- 2. request bodies


def context_from_meta(body: dict[str, Any], model: Model) -> tuple[Context, StreamOptions]:
    """The Context/options that should make the provider send ``body``."""
    messages: list[Any] = []
    system = body.get("instructions") or None

    def assistant() -> AssistantMessage:
        if not messages or not isinstance(messages[-1], AssistantMessage):
            messages.append(AssistantMessage(api=model.api, provider=model.provider, model=model.id))
        return messages[-1]

    for item in body["input"]:
        kind = item.get("type", "message")
        role = item.get("role")
        if role in ("system", "developer"):
            system = item["content"] if isinstance(item["content"], str) else item["content"][0]["text"]
        elif role == "user":
            content = item["content"]
            if not isinstance(content, str):
                content = [
                    TextContent(text=p["text"]) if p["type"] == "input_text"
                    else ImageContent(
                        data=p["image_url"].split(",", 1)[1],
                        mime_type=p["image_url"][5:].split(";")[0])
                    for p in content
                ]
            messages.append(UserMessage(content=content))
        elif kind == "function_call":
            call_id = item["call_id"] + (f"|{item['id']}" if item.get("id") else "")
            args = json.loads(item["arguments"])
            assistant().content.append(ToolCall(id=call_id, name=item["name"], arguments=args))
        elif kind == "function_call_output":
            messages.append(result(item["call_id"], item["output"]))
        elif kind == "reasoning":
            assistant().content.append(ThinkingContent(thinking="", thinking_signature=json.dumps(item)))
        elif role == "assistant":
            content = item["content"]
            text = content if isinstance(content, str) else "".join(p.get("text", "") for p in content)
            assistant().content.append(TextContent(text=text, text_signature=item.get("id")))
    tools = [
        Tool(name=t["name"], description=t.get("description", ""), parameters=t["parameters"])
        for t in body.get("tools", []) if t.get("type") == "function"
    ]
    reasoning = body.get("reasoning") or {}
    options = StreamOptions(reasoning=reasoning.get("effort"), temperature=body.get("temperature"),
                            max_tokens=body.get("max_output_tokens"), retry_base_delay=0.01)
    if reasoning.get("summary"):
        options.extra["reasoning_summary"] = reasoning["summary"]
    return Context(system_prompt=system, messages=messages, tools=tools or None), options


def normal_items(items: list[dict[str, Any]]) -> list[Any]:
    out: list[Any] = []
    for item in items:
        kind, role = item.get("type", "message"), item.get("role")
        if role in ("system", "developer"):
            content = item["content"]
            out.append(("system", content if isinstance(content, str) else content[0]["text"]))
        elif role == "user":
            content = item["content"]
            parts = [{"type": "input_text", "text": content}] if isinstance(content, str) else content
            out.append(("user", [(p["type"], p.get("text") or p.get("image_url")) for p in parts]))
        elif kind == "function_call":
            out.append(("call", item["call_id"], item.get("id"), item["name"], json.loads(item["arguments"])))
        elif kind == "function_call_output":
            out.append(("output", item["call_id"], item["output"]))
        elif kind == "reasoning":
            out.append(("reasoning", item["id"], item.get("encrypted_content")))
        elif role == "assistant":
            out.append(("text", "".join(p["text"] for p in item["content"]), item.get("id")))
    return out


@pytest.mark.parametrize("path", WITH_META, ids=lambda p: p.name)
async def test_request_body_matches_recording(loopback, path: Path) -> None:
    request = load_meta(path)["request"]  # type: ignore[index]
    sent = request.get("body_json") or request.get("body")
    if isinstance(sent["input"], str):
        sent["input"] = [{"role": "user", "content": sent["input"]}]
    thinks = "reasoning" in sent or "include" in sent
    model = make_model(loopback.url, id=sent["model"], reasoning=thinks)
    context, options = context_from_meta(sent, model)
    loopback.push(Reply(body=split_responses(load_body(path))[0]))
    _, message = await collect(model, context, options)
    assert message.stop_reason != "error", message.error_message
    body = loopback.last.json
    assert loopback.last.path == "/responses" and loopback.last.method == "POST"
    assert body["model"] == sent["model"] and body["stream"] is True and body["store"] is False
    expected = normal_items(sent["input"])
    if sent.get("instructions"):
        expected.insert(0, ("system", sent["instructions"]))
    assert normal_items(body["input"]) == expected
    functions = [t for t in sent.get("tools", []) if t["type"] == "function"]
    want_tools = [(t["name"], t.get("description", ""), t["parameters"]) for t in functions]
    assert [(t["name"], t["description"], t["parameters"]) for t in body.get("tools", [])] == want_tools
    assert all(t["type"] == "function" for t in body.get("tools", []))
    if "include" in sent:
        assert "reasoning.encrypted_content" in body["include"]
    if sent.get("reasoning", {}).get("effort"):
        assert body["reasoning"]["effort"] == sent["reasoning"]["effort"]
        assert body["reasoning"]["summary"] == sent["reasoning"].get("summary", "auto")
    else:
        assert "reasoning" not in body
    for key in ("max_output_tokens",) if thinks else ("temperature", "max_output_tokens"):
        if sent.get(key) is not None:
            assert body[key] == sent[key]


async def test_r03_replays_function_call_and_output(loopback) -> None:
    loopback.push(Reply(body=rec("r02")))
    model = make_model(loopback.url)
    tools = [Tool(name="multiply", description="Multiply two numbers.", parameters={"type": "object"})]
    context = Context(messages=[UserMessage(content="What is 1231 * 2331? Use the multiply tool.")])
    context.tools = tools
    _, first = await collect(model, context, StreamOptions(reasoning="low"))
    # Session round trip: the stored message replays the same ids.
    first = AssistantMessage.model_validate_json(first.to_json())
    call = first.tool_calls()[0]
    context.messages += [first, result(call.id, "2869461", "multiply")]
    loopback.push(Reply(body=rec("r03")))
    _, second = await collect(model, context, StreamOptions(reasoning="low"))
    assert second.text() == "1231 × 2331 = **2,869,461**"
    items = loopback.last.json["input"]
    assert items[1] == {
        "type": "function_call", "call_id": "call_sVidsfFJ6zlzRpelrPkTPlpd", "name": "multiply",
        "arguments": json.dumps({"a": 1231, "b": 2331}),
        "id": "fc_00d64fa806f333310169fab1bf324481a0852cda3180856290",
    }
    assert items[2] == {
        "type": "function_call_output", "call_id": "call_sVidsfFJ6zlzRpelrPkTPlpd", "output": "2869461"
    }


async def test_reasoning_replay_same_model_only(loopback) -> None:
    loopback.push(Reply(body=rec("r04")))
    model = make_model(loopback.url, id="o3-mini")
    _, first = await collect(model, ask("How do I cross the street?"), StreamOptions(reasoning="high"))
    first = AssistantMessage.model_validate_json(first.to_json())
    history = [UserMessage(content="How do I cross the street?"), first, UserMessage(content="thanks")]
    raw_item = next(e["item"] for e in raw_events(rec("r04"))
                    if e["type"] == "response.output_item.done" and e["item"]["type"] == "reasoning")

    loopback.push(Reply(body=rec("r01")))
    context = Context(system_prompt="Be brief.", messages=history)
    await collect(model, context, StreamOptions(reasoning="high"))
    items = loopback.last.json["input"]
    assert items[0] == {"role": "developer", "content": "Be brief."}
    assert items[2] == raw_item  # sent back exactly as received
    assert items[3]["type"] == "message"
    assert items[3]["id"] == "msg_68c42d26866c819da8d5c606621c911608fbf9b1584184ff"
    assert items[3]["content"][0]["type"] == "output_text"

    loopback.push(Reply(body=rec("r01")))
    other = make_model(loopback.url, id="gpt-5.5")
    await collect(other, Context(messages=history))
    items = loopback.last.json["input"]
    assert not any(i.get("type") == "reasoning" for i in items)
    assert items[1]["content"][0]["text"].startswith("**Providing street crossing")  # thinking became text
    assert all("id" not in i for i in items if i.get("type") == "message")


async def test_request_options_headers_images_and_hooks(loopback) -> None:
    loopback.push(Reply(body=rec("r01")))
    model = make_model(loopback.url, reasoning=False, headers={"x-model": "m"})
    image = ImageContent(data=PNG, mime_type="image/png")
    context = Context(
        system_prompt="sys",
        messages=[
            UserMessage(content=[TextContent(text="look"), image]),
            AssistantMessage(api=model.api, provider=model.provider, model=model.id,
                             content=[ToolCall(id="call_1|fc_1", name="shot", arguments={})]),
            ToolResultMessage(
                tool_call_id="call_1|fc_1", tool_name="shot", content=[TextContent(text="here"), image]
            ),
            ToolResultMessage(tool_call_id="orphan", tool_name="x", content=[], is_error=True),
        ],
    )
    seen: list[dict[str, Any]] = []

    async def hook(payload: dict[str, Any], m: Model) -> None:
        seen.append(payload)

    options = StreamOptions(api_key="sk-test", temperature=0.3, max_tokens=321, session_id="sess-1",
                            headers={"x-opt": "o"}, on_payload=hook)
    await collect(model, context, options)
    req = loopback.last
    assert req.headers["authorization"] == "Bearer sk-test"
    assert (req.headers["x-model"], req.headers["x-opt"]) == ("m", "o")
    body = req.json
    assert body == seen[0]
    assert (body["temperature"], body["max_output_tokens"], body["prompt_cache_key"]) == (0.3, 321, "sess-1")
    assert "include" not in body and "reasoning" not in body
    assert body["input"][0] == {"role": "system", "content": "sys"}
    image_part = {"type": "input_image", "detail": "auto", "image_url": f"data:image/png;base64,{PNG}"}
    assert body["input"][1]["content"][1] == image_part
    output = body["input"][3]
    assert output["call_id"] == "call_1"
    assert output["output"] == [{"type": "input_text", "text": "here"}, image_part]

    # A returned dict replaces the payload; no key means no auth header; reasoning models drop temperature.
    loopback.push(Reply(body=rec("r01")))
    await collect(make_model(loopback.url), ask(), StreamOptions(
        temperature=0.3, on_payload=lambda p, m: {**p, "marker": 1}))
    assert "authorization" not in loopback.last.headers
    assert loopback.last.json["marker"] == 1 and "temperature" not in loopback.last.json
    assert "reasoning" not in loopback.last.json  # thinking off
    assert loopback.last.json["include"] == ["reasoning.encrypted_content"]


# ---------------------------------------------------------------------------- 3. errors and retries


async def test_http_400_model_not_found(loopback) -> None:
    loopback.push(json_reply(400, load_error("openai_responses_400_model_not_found.json")))
    events, message = await collect(make_model(loopback.url), ask())
    assert events[-1].type == "error" and message.stop_reason == "error"
    assert "The requested model 'gpt-5.2-proo' does not exist." in (message.error_message or "")
    assert len(loopback.requests) == 1


def _sse(*events: dict[str, Any]) -> bytes:
    return "".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events).encode()


CREATED = {"type": "response.created", "response": {"id": "resp_x", "status": "in_progress", "usage": None}}


async def test_in_stream_context_overflow(loopback) -> None:
    error = json.loads(load_error("openai_responses_stream_error_context_length_exceeded.json"))
    loopback.push(Reply(body=_sse(CREATED, error, {"type": "response.failed", "response": {
        "id": "resp_x", "error": {"code": "context_length_exceeded", "message": "other"}}})))
    _, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "error"
    assert error["error"]["message"] in (message.error_message or "")
    assert is_context_overflow(message)


async def test_flat_error_event_and_failed_and_incomplete(loopback) -> None:
    flat = {"type": "error", "code": "server_error", "message": "flat boom", "param": None}
    loopback.push(Reply(body=_sse(CREATED, flat)))
    _, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "error" and "flat boom" in (message.error_message or "")

    failed = {"type": "response.failed", "response": {"id": "resp_x", "error": {"message": "it broke"}}}
    loopback.push(Reply(body=_sse(CREATED, failed)))
    _, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "error" and "it broke" in (message.error_message or "")

    for reason, stop in (("max_output_tokens", "length"), ("content_filter", "error")):
        added = {"type": "response.output_item.added", "item": {"id": "msg_1", "type": "message"}}
        delta = {"type": "response.output_text.delta", "item_id": "msg_1", "delta": "partial"}
        usage = {"input_tokens": 10, "input_tokens_details": {"cached_tokens": 4}, "output_tokens": 3}
        details = {"reason": reason}
        response = {"incomplete_details": details, "usage": usage}
        incomplete = {"type": "response.incomplete", "response": response}
        loopback.push(Reply(body=_sse(CREATED, added, delta, incomplete)))
        events, message = await collect(make_model(loopback.url), ask())
        check_grammar(events, message)
        assert message.stop_reason == stop and message.text() == "partial"
        assert (message.usage.input, message.usage.cache_read, message.usage.output) == (6, 4, 3)


async def test_429_retries_then_succeeds(loopback) -> None:
    body = load_error("openai_429_rate_limit_exceeded.json")
    loopback.push(json_reply(429, body, {"retry-after-ms": "5"}))
    loopback.push(json_reply(500, {"error": {"message": "x"}}))
    loopback.push(
                  Reply(body=rec("r01")))
    _, message = await collect(make_model(loopback.url), ask(), StreamOptions(retry_base_delay=0.01))
    assert message.stop_reason == "stop" and message.text() == "pong"
    assert len(loopback.requests) == 3


async def test_retry_hint_above_limit_fails_at_once(loopback) -> None:
    loopback.push(json_reply(429, load_error("openai_429_rate_limit_exceeded.json"), {"retry-after": "3600"}))
    options = StreamOptions(max_retry_delay=5, retry_base_delay=0.01)
    _, message = await collect(make_model(loopback.url), ask(), options)
    assert message.stop_reason == "error" and "Rate limit reached" in (message.error_message or "")
    assert len(loopback.requests) == 1


# ---------------------------------------------------------------------------- 4. broken streams, abort


async def test_malformed_json_fails_naming_the_event(loopback) -> None:
    body = rec("r01").replace(b'{"type":"response.output_text.done"', b'{"type":', 1)
    loopback.push(Reply(body=body))
    events, message = await collect(make_model(loopback.url), ask())
    check_grammar(events, message)
    assert message.stop_reason == "error" and "response.output_text.done" in (message.error_message or "")
    assert message.text() == "pong"


async def test_cut_stream_keeps_partial_content(loopback) -> None:
    body = rec("r04")
    loopback.push(Reply(body=body, cut_after=len(body) // 2))
    events, message = await collect(make_model(loopback.url), ask())
    check_grammar(events, message)
    assert message.stop_reason == "error" and message.error_message
    assert message.content and isinstance(message.content[0], ThinkingContent) and message.content[0].thinking


async def test_stream_without_terminal_event(loopback) -> None:
    body = rec("r01")
    loopback.push(Reply(body=body[: body.index(b"event: response.completed")]))
    _, message = await collect(make_model(loopback.url), ask())
    assert message.stop_reason == "error" and "ended before completion" in (message.error_message or "")
    assert message.text() == "pong"


async def test_abort_mid_stream_keeps_partial_text(loopback) -> None:
    body = rec("r03")
    loopback.push(Reply(body=body, chunk_sizes=(150, 300), pause=0.01))
    controller = AbortController()
    s = stream(make_model(loopback.url), ask(), StreamOptions(signal=controller.signal))
    events = []
    async for event in s:
        events.append(event)
        if event.type == "text_delta":
            controller.abort("user pressed Esc")
    message = await asyncio.wait_for(s.result(), 5)
    assert message.stop_reason == "aborted" and events[-1].type == "error"
    full = "1231 × 2331 = **2,869,461**"
    assert message.text() and full.startswith(message.text()) and message.text() != full


# ---------------------------------------------------------------------------- 5. hand-off


async def test_foreign_history_serialises_to_valid_input(loopback) -> None:
    long_id = "toolu_" + "x" * 80
    anthropic = AssistantMessage(
        api="anthropic-messages", provider="anthropic", model="claude-x", stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="Let me think.", thinking_signature="EoQDCm0IDhgCKkCD"),
            ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
            TextContent(text="Calling tools.", text_signature="not-a-msg-id"),
            ToolCall(id="toolu_01825dXWLSoJwCst1qTsiWdb", name="read", arguments={"path": "a"}),
            ToolCall(id=long_id, name="read", arguments={"path": "b"}),
            ToolCall(id="weird id/with.chars|item 7", name="ls", arguments={}, thought_signature="sig"),
        ],
    )
    other_openai = AssistantMessage(
        api="openai-responses", provider="openai", model="gpt-4o", stop_reason="toolUse",
        content=[ToolCall(id="call_abc|fc_abc", name="ls", arguments={})],
    )
    history = [
        UserMessage(content="go"), anthropic,
        result("toolu_01825dXWLSoJwCst1qTsiWdb", "A", "read"),
        result(long_id, "B", "read", is_error=True),
        # no result for the third call
        UserMessage(content="again"), other_openai,
        result("call_abc|fc_abc", "C", "ls"),
    ]
    loopback.push(Reply(body=rec("r01")))
    _, message = await collect(make_model(loopback.url), Context(messages=history))
    assert message.stop_reason == "stop"
    items = loopback.last.json["input"]
    calls = [i for i in items if i.get("type") == "function_call"]
    outputs = [i for i in items if i.get("type") == "function_call_output"]
    assert len(calls) == 4 and len({c["call_id"] for c in calls}) == 4
    assert [o["call_id"] for o in outputs] == [c["call_id"] for c in calls]
    for call in calls:
        assert SAFE_CALL_ID.match(call["call_id"]), call["call_id"]
        assert "id" not in call or (call["id"].startswith("fc_") and len(call["id"]) <= 64)
    assert calls[2]["id"] == "fc_item_7"
    assert "id" not in calls[3]  # another model's fc_ id would need its reasoning item
    assert not any(i.get("type") == "reasoning" for i in items)
    texts = [i["content"][0]["text"] for i in items if i.get("type") == "message"]
    assert texts == ["Let me think.", "Calling tools."]
    assert all("id" not in i for i in items if i.get("type") == "message")
    assert "No result provided" in outputs[2]["output"]


def test_normalize_id_rules() -> None:
    model = Model(id="m", api="openai-responses", provider="openai")
    msg = AssistantMessage()
    assert normalize_id("call_1|fc_2", model, msg) == "call_1|fc_2"
    assert normalize_id("a.b|c", model, msg) == "a_b|fc_c"
    long_a, long_b = normalize_id("y" * 100 + "a", model, msg), normalize_id("y" * 100 + "b", model, msg)
    assert len(long_a) == 64 and long_a != long_b and SAFE_CALL_ID.match(long_a)


async def test_thinking_only_message_sends_no_dangling_reasoning(loopback) -> None:
    model = make_model(loopback.url)
    item = {"id": "rs_1", "type": "reasoning", "encrypted_content": "gAAAA", "summary": []}
    cut = AssistantMessage(api=model.api, provider=model.provider, model=model.id, stop_reason="length",
                           content=[ThinkingContent(thinking="", thinking_signature=json.dumps(item))])
    loopback.push(Reply(body=rec("r01")))
    await collect(model, Context(messages=[UserMessage(content="a"), cut, UserMessage(content="b")]))
    assert [i.get("role") for i in loopback.last.json["input"]] == ["user", "user"]
