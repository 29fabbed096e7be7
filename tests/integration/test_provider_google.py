"""The google-generative-ai provider against a loopback server replaying recorded Gemini streams."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import time
from pathlib import Path
from typing import Any

import pytest

from tests.support.loopback import json_reply, sse_reply
from tests.support.stream_checks import check_event_grammar as check_grammar
from tests.support.wire import WIRE_DIR, load_body, load_error, load_meta, recordings
from wolli.ai.abort import AbortController
from wolli.ai.builder import parse_partial_json
from wolli.ai.overflow import is_context_overflow
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

GEMINI = "gemini"
PNG = base64.b64encode(b"\x89PNG\r\n\x1a\nfake-image-bytes").decode()


# ============================================================================ helpers


def make_model(base_url: str, model_id: str = "gemini-2.5-flash", **kw: Any) -> Model:
    kw.setdefault("reasoning", True)
    kw.setdefault("input", ["text", "image"])
    return Model(id=model_id, api="google-generative-ai", provider="google", base_url=base_url, **kw)


def fast(**kw: Any) -> StreamOptions:
    kw.setdefault("retry_base_delay", 0.01)
    return StreamOptions(**kw)


async def run_stream(model: Model, context: Context, options: StreamOptions | None = None) -> tuple[list, AssistantMessage]:
    s = stream(model, context, options or fast())
    events = [e async for e in s]
    return events, await s.result()


def hello() -> Context:
    return Context(messages=[UserMessage(content="hi")])


def frame(*chunks: dict[str, Any]) -> bytes:
    return b"".join(b"data: " + json.dumps(c).encode() + b"\r\n\r\n" for c in chunks)


def chunk(parts: list[dict[str, Any]] | None = None, finish: str | None = None, usage: dict | None = None, **extra: Any) -> dict:
    candidate: dict[str, Any] = {"content": {"parts": parts or [], "role": "model"}, "index": 0}
    if finish:
        candidate["finishReason"] = finish
    out: dict[str, Any] = {"candidates": [candidate], "modelVersion": "gemini-test", "responseId": "resp-1"}
    if usage is not None:
        out["usageMetadata"] = usage
    out.update(extra)
    return out


def content_type_of(path: Path) -> str:
    meta = load_meta(path)
    if meta:
        value = meta["response"]["headers"].get("content-type")
        if value:
            return value[0]
    return "text/event-stream"



# ============================================================================ independent reference reader


def _raw_chunks(body: bytes) -> list[dict[str, Any]]:
    text = body.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")
    out = []
    for block in text.split("\n\n"):
        data = "\n".join(line[5:].lstrip(" ") for line in block.split("\n") if line.startswith("data:"))
        if data.strip():
            out.append(json.loads(data))
    return out


def _assign(args: dict, path: str, value: Any, concat: bool) -> None:
    tokens = re.findall(r"\.([^.\[\]]+)|\[(\d+)\]", path[1:])
    keys: list[Any] = [int(i) if i else k for k, i in tokens]
    node: Any = args
    for key, nxt in zip(keys, keys[1:] + [None], strict=True):
        if nxt is None:
            break
        if isinstance(key, int):
            while len(node) <= key:
                node.append(None)
            if node[key] is None:
                node[key] = [] if isinstance(nxt, int) else {}
        else:
            node.setdefault(key, [] if isinstance(nxt, int) else {})
        node = node[key]
    last = keys[-1]
    if isinstance(last, int):
        while len(node) <= last:
            node.append(None)
        node[last] = node[last] + value if concat and isinstance(node[last], str) else value
    else:
        node[last] = node[last] + value if concat and isinstance(node.get(last), str) else value


def reference(body: bytes) -> dict[str, Any]:
    """What a recording says, read straight from the raw events."""
    text, thinking, calls = "", "", []
    usage: dict[str, Any] = {}
    finish = None
    streaming: dict | None = None
    for raw in _raw_chunks(body):
        if "promptTokenCount" in raw.get("usageMetadata", {}):
            usage = raw["usageMetadata"]  # cumulative: the last report with counts wins
        for cand in raw.get("candidates", [])[:1]:
            for part in cand.get("content", {}).get("parts", []):
                if "functionCall" in part:
                    fc = part["functionCall"]
                    if fc.get("name"):
                        streaming = {"name": fc["name"], "args": dict(fc.get("args") or {})}
                        calls.append(streaming)
                    if streaming is not None:
                        for frag in fc.get("partialArgs", []):
                            value_key = next(k for k in frag if k.endswith("Value"))
                            value = None if value_key == "nullValue" else frag[value_key]
                            _assign(streaming["args"], frag["jsonPath"], value, value_key == "stringValue")
                    if not fc.get("willContinue"):
                        streaming = None
                elif "text" in part:
                    if part.get("thought"):
                        thinking += part["text"]
                    else:
                        text += part["text"]
            finish = cand.get("finishReason") or finish
    stop = {"STOP": "toolUse" if calls else "stop", "MAX_TOKENS": "length"}.get(finish or "", "error")
    cached = usage.get("cachedContentTokenCount", 0)
    return {
        "text": text,
        "thinking": thinking,
        "calls": [(c["name"], c["args"]) for c in calls],
        "stop": stop,
        "input": usage.get("promptTokenCount", 0) - cached,
        "cache_read": cached,
        "output": usage.get("candidatesTokenCount", 0) + usage.get("thoughtsTokenCount", 0),
        "total": usage.get("totalTokenCount", 0),
    }


def assert_matches_reference(message: AssistantMessage, expected: dict[str, Any]) -> None:
    assert message.text() == expected["text"]
    thinking = "".join(b.thinking for b in message.content if isinstance(b, ThinkingContent))
    assert thinking == expected["thinking"]
    assert [(c.name, c.arguments) for c in message.tool_calls()] == expected["calls"]
    assert message.stop_reason == expected["stop"]
    usage = message.usage
    assert (usage.input, usage.cache_read, usage.output) == (expected["input"], expected["cache_read"], expected["output"])
    if expected["total"]:
        assert usage.total_tokens == expected["total"]


# ============================================================================ 1. every recording


ALL = recordings(GEMINI)


def test_recordings_exist():
    assert len(ALL) >= 6


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
async def test_recording_replays(loopback, path: Path):
    body = load_body(path)
    loopback.push(sse_reply(body, content_type=content_type_of(path)))
    expected = reference(body)
    first = _raw_chunks(body)[0]
    model = make_model(loopback.url, first.get("modelVersion", "gemini-2.5-flash"))
    events, message = await run_stream(model, hello())
    final = check_grammar(events)
    assert final is message or final == message
    assert_matches_reference(message, expected)
    assert message.response_id == first.get("responseId")
    ids = [c.id for c in message.tool_calls()]
    assert all(ids) and len(set(ids)) == len(ids)
    assert loopback.last.path.endswith(f"/models/{model.id}:streamGenerateContent?alt=sse")


@pytest.mark.parametrize("path", ALL, ids=[p.name for p in ALL])
async def test_recording_split_between_cr_and_lf(loopback, path: Path):
    body = load_body(path)
    loopback.push(sse_reply(body, content_type=content_type_of(path), chunk_sizes=(1, 3)))
    _, message = await run_stream(make_model(loopback.url), hello())
    assert_matches_reference(message, reference(body))


async def test_g01_text_exact(loopback):
    path = WIRE_DIR / GEMINI / "g01_text.sse"
    loopback.push(sse_reply(load_body(path), content_type="text/event-stream"))
    _, message = await run_stream(make_model(loopback.url), hello())
    assert message.stop_reason == "stop"
    assert message.text() == "\n".join(str(i) for i in range(1, 31))
    assert len(message.content) == 1
    usage = message.usage
    assert (usage.input, usage.output, usage.cache_read, usage.total_tokens) == (18, 115, 0, 133)
    assert message.response_id == "ru1garvBEoOiqtsP2fznmQw"


async def test_g02_thought_summaries_exact(loopback):
    path = WIRE_DIR / GEMINI / "g02_thought_summaries.sse"
    loopback.push(sse_reply(load_body(path)))
    _, message = await run_stream(make_model(loopback.url, "gemini-2.5-pro"), hello())
    assert [b.type for b in message.content] == ["thinking", "text"]
    thinking, text = message.content
    assert thinking.thinking.startswith("**Clarifying User Goals**")
    assert "**Crafting Safe Instructions**" in thinking.thinking
    assert thinking.thinking_signature is None
    assert text.text.startswith("This is a great question!")
    assert text.text_signature and text.text_signature.startswith("CiIB0e2Kb6Syj1a961Ef")
    assert message.stop_reason == "stop"
    assert (message.usage.input, message.usage.output) == (34, 469 + 787)


async def test_g03_function_call_with_signature(loopback):
    path = WIRE_DIR / GEMINI / "g03_function_call_thought_signature.turn1.sse"
    loopback.push(sse_reply(load_body(path)))
    _, message = await run_stream(make_model(loopback.url, "gemini-3-pro-preview"), hello())
    assert message.stop_reason == "toolUse"
    [call] = message.tool_calls()
    assert call.name == "get_country" and call.arguments == {}
    assert call.id
    assert call.thought_signature and call.thought_signature.startswith("EpwICpkIAXLI2nxlU6gs")
    assert [b.type for b in message.content] == ["toolCall"]  # the empty final text part adds nothing


async def test_g06_signature_on_empty_final_text_part(loopback):
    path = WIRE_DIR / GEMINI / "g06_vercel_text_gemini3.chunks.jsonl"
    loopback.push(sse_reply(load_body(path)))
    _, message = await run_stream(make_model(loopback.url, "gemini-3-pro-preview"), hello())
    [block] = message.content
    assert block.text == 'There are **3** "r"s in strawberry.\n\nst**r**awbe**rr**y'
    assert block.text_signature and block.text_signature.startswith("EqsFCqgFAb4+9vvtAF5n")
    assert (message.usage.input, message.usage.output, message.usage.total_tokens) == (9, 23 + 185, 217)


async def test_g07_tool_call_arguments(loopback):
    path = WIRE_DIR / GEMINI / "g07_vercel_tool_call_gemini3.chunks.jsonl"
    loopback.push(sse_reply(load_body(path)))
    _, message = await run_stream(make_model(loopback.url, "gemini-3-pro-preview"), hello())
    [call] = message.tool_calls()
    assert (call.name, call.arguments) == ("weather", {"location": "San Francisco"})
    assert call.thought_signature.startswith("EqUCCqICAb4+")
    assert message.stop_reason == "toolUse"


# ============================================================================ synthetic streams


async def test_parallel_calls_get_unique_ids_and_given_ids_are_kept(loopback):
    body = frame(
        chunk([{"text": "Let me look."}]),
        chunk(
            [
                {"functionCall": {"name": "read", "args": {"path": "a"}}},
                {"functionCall": {"name": "read", "args": {"path": "b"}}},
                {"functionCall": {"name": "read", "args": {"path": "c"}, "id": "given-1"}},
            ],
            finish="STOP",
        ),
    )
    loopback.push(sse_reply(body))
    events, message = await run_stream(make_model(loopback.url, "gemini-2.0-flash"), hello())
    check_grammar(events)
    calls = message.tool_calls()
    assert [c.arguments["path"] for c in calls] == ["a", "b", "c"]
    assert calls[2].id == "given-1"
    assert len({c.id for c in calls}) == 3
    assert message.stop_reason == "toolUse"
    assert [b.type for b in message.content] == ["text", "toolCall", "toolCall", "toolCall"]


async def test_text_after_tool_call_opens_new_block_and_cached_usage(loopback):
    usage = {"promptTokenCount": 1000, "cachedContentTokenCount": 800, "candidatesTokenCount": 7,
             "thoughtsTokenCount": 5, "totalTokenCount": 1012}
    body = frame(
        chunk([{"text": "thinking...", "thought": True, "thoughtSignature": "sig-think"}]),
        chunk([{"text": "a"}, {"functionCall": {"name": "ls", "args": {}}}, {"text": "b"}]),
        chunk([{"text": "c"}], finish="STOP", usage=usage),
    )
    loopback.push(sse_reply(body))
    events, message = await run_stream(make_model(loopback.url), hello())
    check_grammar(events)
    assert [b.type for b in message.content] == ["thinking", "text", "toolCall", "text"]
    assert message.content[0].thinking_signature == "sig-think"
    assert message.content[3].text == "bc"
    u = message.usage
    assert (u.input, u.cache_read, u.output, u.total_tokens) == (200, 800, 12, 1012)


def _partial(path: str, cont: bool = False, **value: Any) -> dict:
    frag: dict[str, Any] = {"jsonPath": path, **value}
    if cont:
        frag["willContinue"] = True
    return frag


def _fc(partial: list[dict] | None = None, cont: bool = True, **extra: Any) -> dict:
    call: dict[str, Any] = dict(extra)
    if partial:
        call["partialArgs"] = partial
    if cont:
        call["willContinue"] = True
    return {"functionCall": call}


async def test_vertex_streamed_partial_args(loopback):
    start = _fc(name="write")
    start["thoughtSignature"] = "sig-call"
    body = frame(
        chunk([start]),
        chunk([_fc([_partial("$.path", True, stringValue="src/ma")])]),
        chunk([_fc([_partial("$.path", True, stringValue="in.py")])]),
        chunk([_fc([_partial("$.path", stringValue="")])]),
        chunk([_fc([_partial("$.files[0].name", True, stringValue='a "quoted" é')])]),
        chunk([_fc([_partial("$.files[0].name", stringValue="")])]),
        chunk([_fc([_partial("$.files[0].size", numberValue=1.5)])]),
        chunk([_fc()]),
        chunk([_fc([_partial("$.files[1].name", True, stringValue="b")])]),
        chunk([_fc([_partial("$.files[1].name", stringValue="")])]),
        chunk([_fc([_partial("$.overwrite", boolValue=True), _partial("$.mode", nullValue="NULL_VALUE")])]),
        chunk([_fc(cont=False)], finish="STOP", usage={"promptTokenCount": 3, "candidatesTokenCount": 4}),
    )
    loopback.push(sse_reply(body))
    events, message = await run_stream(make_model(loopback.url, "gemini-3.1-pro-preview"), hello())
    check_grammar(events)
    [call] = message.tool_calls()
    expected = {
        "path": "src/main.py",
        "files": [{"name": 'a "quoted" é', "size": 1.5}, {"name": "b"}],
        "overwrite": True,
        "mode": None,
    }
    assert call.name == "write" and call.arguments == expected
    assert call.thought_signature == "sig-call"
    assert reference(body)["calls"] == [("write", expected)]
    deltas = [e for e in events if e.type == "toolcall_delta"]
    assert len(deltas) > 5  # arguments streamed, not delivered at the end only
    prefixes = ["".join(d.delta for d in deltas[: i + 1]) for i in range(len(deltas))]
    assert '{"path":"src/ma' in prefixes  # the open string streams as it grows
    assert parse_partial_json(prefixes[3]) == {"path": "src/main.py", "files": [{}]}


async def test_vertex_streamed_call_without_terminal_part(loopback):
    body = frame(
        chunk([_fc(name="items")]),
        chunk([_fc([_partial("$.ops[0].action", True, stringValue="add")])]),
        chunk([_fc([_partial("$.ops[0].action", stringValue="")])]),
        chunk([_fc([_partial("$.ops[0].price", numberValue=0.5)], cont=False)]),
        chunk([_fc(name="second", willContinue=False)]),
        chunk([{"text": ""}], finish="STOP"),
    )
    body = body.replace(b', "willContinue": false', b"")
    loopback.push(sse_reply(body))
    events, message = await run_stream(make_model(loopback.url, "gemini-3-flash-preview"), hello())
    check_grammar(events)
    calls = message.tool_calls()
    assert [(c.name, c.arguments) for c in calls] == [("items", {"ops": [{"action": "add", "price": 0.5}]}), ("second", {})]
    assert reference(body)["calls"] == [(c.name, c.arguments) for c in calls]


@pytest.mark.parametrize(
    ("reason", "stop"),
    [("MAX_TOKENS", "length"), ("SAFETY", "error"), ("RECITATION", "error"), ("BLOCKLIST", "error"),
     ("PROHIBITED_CONTENT", "error"), ("SPII", "error"), ("MALFORMED_FUNCTION_CALL", "error"), ("OTHER", "error")],
)
async def test_finish_reasons(loopback, reason: str, stop: str):
    last = chunk([{"text": " world"}], finish=reason)
    if stop == "error":
        last["candidates"][0]["finishMessage"] = f"details about {reason.lower()}"
    loopback.push(sse_reply(frame(chunk([{"text": "hello"}]), last)))
    events, message = await run_stream(make_model(loopback.url), hello())
    check_grammar(events)
    assert message.stop_reason == stop
    assert message.text() == "hello world"  # partial content kept
    if stop == "error":
        assert reason in message.error_message
        assert f"details about {reason.lower()}" in message.error_message
        assert events[-1].type == "error"


async def test_prompt_blocked_without_candidates(loopback):
    body = frame({"promptFeedback": {"blockReason": "SAFETY"}, "usageMetadata": {"promptTokenCount": 8}})
    loopback.push(sse_reply(body))
    events, message = await run_stream(make_model(loopback.url), hello())
    check_grammar(events)
    assert message.stop_reason == "error"
    assert "SAFETY" in message.error_message and "blocked" in message.error_message
    assert message.usage.input == 8


async def test_error_object_in_stream(loopback):
    body = frame(chunk([{"text": "partial"}]), {"error": {"code": 500, "message": "Internal error encountered.", "status": "INTERNAL"}})
    loopback.push(sse_reply(body))
    events, message = await run_stream(make_model(loopback.url), hello())
    check_grammar(events)
    assert message.stop_reason == "error"
    assert "Internal error encountered." in message.error_message
    assert message.text() == "partial"


# ============================================================================ 4. broken streams, abort


async def test_malformed_json_chunk(loopback):
    body = frame(chunk([{"text": "ok"}])) + b"data: {\"candidates\": [\r\n\r\n" + frame(chunk([{"text": "!"}], finish="STOP"))
    loopback.push(sse_reply(body))
    events, message = await run_stream(make_model(loopback.url), hello())
    check_grammar(events)
    assert message.stop_reason == "error"
    assert "malformed JSON" in message.error_message and "chunk 2" in message.error_message
    assert message.text() == "ok"


async def test_stream_without_finish_reason_fails(loopback):
    body = load_body(WIRE_DIR / GEMINI / "g01_text.sse")
    without_last = b"\r\n\r\n".join(body.split(b"\r\n\r\n")[:2]) + b"\r\n\r\n"
    loopback.push(sse_reply(without_last))
    events, message = await run_stream(make_model(loopback.url), hello())
    check_grammar(events)
    assert message.stop_reason == "error"
    assert "ended before completion" in message.error_message
    assert message.text().startswith("1\n2\n3")


async def test_stream_cut_mid_body(loopback):
    body = load_body(WIRE_DIR / GEMINI / "g01_text.sse")
    loopback.push(sse_reply(body, cut_after=len(body) // 2))
    events, message = await run_stream(make_model(loopback.url), hello())
    check_grammar(events)
    assert message.stop_reason == "error"
    assert "ended before completion" in message.error_message
    assert message.text().startswith("1\n2\n3")


async def test_abort_mid_stream_keeps_partial_text(loopback):
    body = load_body(WIRE_DIR / GEMINI / "g02_thought_summaries.sse")
    loopback.push(sse_reply(body, chunk_sizes=(100, 200), pause=0.01))
    controller = AbortController()
    s = stream(make_model(loopback.url, "gemini-2.5-pro"), hello(), fast(signal=controller.signal))
    events = []
    async for event in s:
        events.append(event)
        if event.type == "text_delta" and not controller.signal.aborted:
            controller.abort("user pressed Esc")
    message = await s.result()
    check_grammar(events)
    assert message.stop_reason == "aborted"
    full = reference(body)["text"]
    assert message.text() and full.startswith(message.text()) and message.text() != full
    assert message.content[0].thinking.startswith("**Clarifying")


# ============================================================================ 3. HTTP errors

ERROR_FILES = sorted((WIRE_DIR / "errors").glob("gemini_*.json"))


def _provider_message(raw: bytes) -> str:
    data = json.loads(raw)
    if isinstance(data, list):
        data = data[0]
    return data["error"]["message"]


@pytest.mark.parametrize("path", ERROR_FILES, ids=[p.name for p in ERROR_FILES])
async def test_error_bodies(loopback, path: Path):
    status = int(re.match(r"gemini_(\d{3})_", path.name).group(1))
    raw = path.read_bytes()
    loopback.push(json_reply(status, raw))
    events, message = await run_stream(make_model(loopback.url), hello(), fast(max_retries=0))
    check_grammar(events)
    assert message.stop_reason == "error"
    assert _provider_message(raw) in message.error_message
    if "input_token_count" in path.name:
        assert is_context_overflow(message)
    else:
        assert not is_context_overflow(message)
    assert len(loopback.requests) == 1


async def test_429_retry_info_above_limit_fails_at_once(loopback):
    loopback.push(json_reply(429, load_error("gemini_429_resource_exhausted_retryinfo.json")))
    started = time.monotonic()
    _, message = await run_stream(make_model(loopback.url), hello(), fast(max_retry_delay=1.0))
    assert time.monotonic() - started < 5
    assert message.stop_reason == "error"
    assert "You exceeded your current quota" in message.error_message
    assert "34s" in message.error_message and "limit" in message.error_message
    assert len(loopback.requests) == 1


async def test_429_retry_info_short_delay_retries_then_succeeds(loopback):
    raw = load_error("gemini_429_resource_exhausted_retryinfo.json").replace(b'"34.4s"', b'"0.01s"')
    assert b'"0.01s"' in raw
    loopback.push(json_reply(429, raw), sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    _, message = await run_stream(make_model(loopback.url), hello(), fast(max_retry_delay=1.0))
    assert message.stop_reason == "stop"
    assert message.text().endswith("29\n30")
    assert len(loopback.requests) == 2
    assert loopback.requests[0].json == loopback.requests[1].json


async def test_503_with_retry_after_ms_retries(loopback):
    unavailable = {"error": {"code": 503, "message": "The model is overloaded.", "status": "UNAVAILABLE"}}
    loopback.push(json_reply(503, unavailable, {"retry-after-ms": "5"}), sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    _, message = await run_stream(make_model(loopback.url), hello())
    assert message.stop_reason == "stop"
    assert len(loopback.requests) == 2


# ============================================================================ 2. request bodies


def _by_camel(value: Any) -> Any:
    """pydantic-ai's cassettes mix snake_case keys in; compare on camelCase."""
    if isinstance(value, dict):
        return {re.sub(r"_(\w)", lambda m: m.group(1).upper(), k): _by_camel(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_by_camel(v) for v in value]
    return value


def _unsafe_b64(sig: str) -> str:
    return sig.replace("-", "+").replace("_", "/")


async def test_request_g01_contents(loopback):
    meta = load_meta(WIRE_DIR / GEMINI / "g01_text.sse")
    expected = meta["request"]["body_json"]
    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    context = Context(messages=[UserMessage(content=expected["contents"][0]["parts"][0]["text"])])
    await run_stream(make_model(loopback.url, "gemini-2.5-flash", reasoning=False), context)
    sent = loopback.last.json
    assert sent["contents"] == expected["contents"]
    assert "thinkingConfig" not in sent["generationConfig"]
    assert loopback.last.path == "/models/gemini-2.5-flash:streamGenerateContent?alt=sse"


async def test_request_g02_system_tools_thinking(loopback):
    meta = load_meta(WIRE_DIR / GEMINI / "g02_thought_summaries.sse")
    expected = meta["request"]["body_json"]
    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g02_thought_summaries.sse")))
    context = Context(
        system_prompt=expected["systemInstruction"]["parts"][0]["text"],
        messages=[UserMessage(content=expected["contents"][0]["parts"][0]["text"])],
        tools=[Tool(name="dummy", description="", parameters={"type": "object", "properties": {}})],
    )
    await run_stream(make_model(loopback.url, "gemini-2.5-pro"), context, fast(reasoning="high"))
    sent = loopback.last.json
    assert sent["contents"] == expected["contents"]
    assert sent["systemInstruction"]["parts"] == expected["systemInstruction"]["parts"]
    declared = sent["tools"][0]["functionDeclarations"]
    assert [(d["name"], d["description"]) for d in declared] == [
        (d["name"], d["description"]) for d in expected["tools"][0]["functionDeclarations"]
    ]
    assert declared[0]["parametersJsonSchema"] == {"type": "object", "properties": {}}
    thinking = sent["generationConfig"]["thinkingConfig"]
    assert thinking["includeThoughts"] is expected["generationConfig"]["thinkingConfig"]["includeThoughts"] is True
    assert thinking["thinkingBudget"] > 0


async def test_request_g03_then_g04_replays_call_signature_and_result(loopback):
    g03 = WIRE_DIR / GEMINI / "g03_function_call_thought_signature.turn1.sse"
    g04 = WIRE_DIR / GEMINI / "g04_function_response.turn2.sse"
    meta3 = load_meta(g03)["request"]["body_json"]
    meta4 = load_meta(g04)["request"]["body_json"]
    schema = _by_camel(meta3["tools"][0]["functionDeclarations"][0])["parametersJsonSchema"]
    tools = [Tool(name="get_country", description="", parameters=schema)]
    model = make_model(loopback.url, "gemini-3-pro-preview")
    question = UserMessage(content=meta3["contents"][0]["parts"][0]["text"])

    loopback.push(sse_reply(load_body(g03)), sse_reply(load_body(g04)))
    _, turn1 = await run_stream(model, Context(messages=[question], tools=tools))
    sent1 = loopback.last.json
    assert sent1["contents"] == meta3["contents"]
    assert _by_camel(sent1["tools"]) == _by_camel(meta3["tools"])

    [call] = turn1.tool_calls()
    result = ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text="Mexico")])
    _, turn2 = await run_stream(model, Context(messages=[question, turn1, result], tools=tools))
    assert turn2.text() == "The capital of Mexico is Mexico City."
    sent = _by_camel(loopback.last.json)
    want = _by_camel(meta4)
    assert [c["role"] for c in sent["contents"]] == [c["role"] for c in want["contents"]] == ["user", "model", "user"]
    assert sent["contents"][0] == want["contents"][0]
    [model_part] = sent["contents"][1]["parts"]
    [want_part] = want["contents"][1]["parts"]
    assert model_part["functionCall"]["name"] == want_part["functionCall"]["name"]
    assert model_part["functionCall"]["args"] == want_part["functionCall"]["args"]
    assert _unsafe_b64(model_part["thoughtSignature"]) == _unsafe_b64(want_part["thoughtSignature"])
    [response_part] = sent["contents"][2]["parts"]
    response = response_part["functionResponse"]
    assert response["name"] == want["contents"][2]["parts"][0]["functionResponse"]["name"]
    assert response["id"] == model_part["functionCall"]["id"] == call.id
    assert response["response"] == {"output": "Mexico"}
    assert isinstance(response["response"], dict)


async def test_same_model_replays_thoughts_and_text_signatures(loopback):
    g02 = WIRE_DIR / GEMINI / "g02_thought_summaries.sse"
    model = make_model(loopback.url, "gemini-2.5-pro")
    loopback.push(sse_reply(load_body(g02)), sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    _, turn1 = await run_stream(model, hello(), fast(reasoning="medium"))
    await run_stream(model, Context(messages=[UserMessage(content="hi"), turn1, UserMessage(content="thanks")]))
    parts = loopback.last.json["contents"][1]["parts"]
    assert parts[0]["thought"] is True and parts[0]["text"] == turn1.content[0].thinking
    assert "thoughtSignature" not in parts[0]
    assert parts[1]["text"] == turn1.text() and parts[1]["thoughtSignature"] == turn1.content[1].text_signature
    assert "thought" not in parts[1]


async def test_images_tool_results_merged_and_errors(loopback):
    model = make_model(loopback.url, "gemini-2.5-flash")
    assistant = AssistantMessage(
        api="google-generative-ai", provider="google", model="gemini-2.5-flash", stop_reason="toolUse",
        content=[
            ToolCall(id="c1", name="screenshot", arguments={}, thought_signature="sig-1"),
            ToolCall(id="c2", name="bash", arguments={"command": "false"}),
        ],
    )
    context = Context(
        messages=[
            UserMessage(content=[TextContent(text="look"), ImageContent(data=PNG, mime_type="image/png")]),
            assistant,
            ToolResultMessage(tool_call_id="c1", tool_name="screenshot", content=[ImageContent(data=PNG, mime_type="image/png")]),
            ToolResultMessage(tool_call_id="c2", tool_name="bash", content=[TextContent(text="exit 1")], is_error=True),
            UserMessage(content="go on"),
        ]
    )
    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    await run_stream(model, context, fast(temperature=0.3, max_tokens=1234, reasoning="off"))
    sent = loopback.last.json
    contents = sent["contents"]
    assert [c["role"] for c in contents] == ["user", "model", "user", "user"]
    assert contents[0]["parts"] == [{"text": "look"}, {"inlineData": {"mimeType": "image/png", "data": PNG}}]
    assert contents[1]["parts"][0] == {"functionCall": {"name": "screenshot", "args": {}, "id": "c1"}, "thoughtSignature": "sig-1"}
    assert contents[1]["parts"][1] == {"functionCall": {"name": "bash", "args": {"command": "false"}, "id": "c2"}}
    results = contents[2]["parts"]
    assert results[0]["functionResponse"]["id"] == "c1"
    assert isinstance(results[0]["functionResponse"]["response"]["output"], str)
    assert results[1] == {"inlineData": {"mimeType": "image/png", "data": PNG}}
    assert results[2] == {"functionResponse": {"name": "bash", "id": "c2", "response": {"error": "exit 1"}}}
    assert contents[3]["parts"] == [{"text": "go on"}]
    config = sent["generationConfig"]
    assert config["temperature"] == 0.3 and config["maxOutputTokens"] == 1234
    assert config["thinkingConfig"] == {"thinkingBudget": 0}


@pytest.mark.parametrize(
    ("model_id", "level", "expected"),
    [
        ("gemini-2.5-flash", None, {"thinkingBudget": 0}),
        ("gemini-2.5-flash-lite", "off", {"thinkingBudget": 0}),
        ("gemini-2.5-pro", "off", None),
        ("gemini-3-pro-preview", "off", None),
        ("gemini-3-pro-preview", "low", {"includeThoughts": True, "thinkingLevel": "low"}),
        ("gemini-3-flash-preview", "minimal", {"includeThoughts": True, "thinkingLevel": "low"}),
        ("gemini-3-pro-preview", "high", {"includeThoughts": True, "thinkingLevel": "high"}),
        ("gemini-2.5-flash", "low", {"includeThoughts": True, "thinkingBudget": 2048}),
        ("gemini-2.5-pro", "medium", {"includeThoughts": True, "thinkingBudget": 8192}),
        ("gemini-2.5-pro", "xhigh", {"includeThoughts": True, "thinkingBudget": 32768}),
    ],
)
async def test_thinking_config(loopback, model_id: str, level: str | None, expected: dict | None):
    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    await run_stream(make_model(loopback.url, model_id), hello(), fast(reasoning=level))
    assert loopback.last.json["generationConfig"].get("thinkingConfig") == expected


async def test_non_reasoning_model_gets_no_thinking_config(loopback):
    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    await run_stream(make_model(loopback.url, "gemini-2.0-flash", reasoning=False), hello(), fast(reasoning="high"))
    assert "thinkingConfig" not in loopback.last.json["generationConfig"]


async def test_headers_key_and_payload_hook(loopback):
    seen: list[dict] = []

    async def hook(payload: dict, model: Model) -> dict:
        seen.append(payload)
        return {**payload, "safetySettings": []}

    model = make_model(loopback.url, headers={"x-model": "m"})
    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    await run_stream(model, hello(), fast(api_key="secret-key", headers={"x-call": "c"}, on_payload=hook))
    request = loopback.last
    assert request.headers["x-goog-api-key"] == "secret-key"
    assert request.headers["x-model"] == "m" and request.headers["x-call"] == "c"
    assert request.json["safetySettings"] == [] and seen and "contents" in seen[0]

    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    await run_stream(model, hello(), fast(on_payload=lambda payload, model: None))
    assert "x-goog-api-key" not in loopback.last.headers
    assert "safetySettings" not in loopback.last.json


# ============================================================================ 5. cross-provider hand-off


def foreign_history() -> list:
    anthropic = AssistantMessage(
        api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5", stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="I should list files.", thinking_signature="EoQDCm0IDhgCKkCD"),
            ThinkingContent(thinking="", thinking_signature="EqkECkYIBxgC", redacted=True),
            TextContent(text="Listing."),
            ToolCall(id="toolu_01825dXWLSoJwCst1qTsiWdb", name="ls", arguments={"path": "."}),
        ],
    )
    responses = AssistantMessage(
        api="openai-responses", provider="openai", model="gpt-5", stop_reason="toolUse",
        content=[
            ThinkingContent(thinking="Read both.", thinking_signature='{"type":"reasoning","id":"rs_1"}'),
            TextContent(text="Reading.", text_signature="msg_123"),
            ToolCall(id="call_abc|fc_123+/=", name="read", arguments={"path": "a.txt"}),
            ToolCall(id="call_def|fc_456", name="read", arguments={"path": "b.txt"}),
        ],
    )
    return [
        UserMessage(content="list and read"),
        anthropic,
        ToolResultMessage(tool_call_id="toolu_01825dXWLSoJwCst1qTsiWdb", tool_name="ls", content=[TextContent(text="a.txt b.txt")]),
        responses,
        ToolResultMessage(tool_call_id="call_abc|fc_123+/=", tool_name="read", content=[TextContent(text="A")]),
        # no result for call_def|fc_456
        UserMessage(content="and now?"),
    ]


def _assert_valid_gemini_contents(contents: list[dict]) -> None:
    assert {c["role"] for c in contents} <= {"user", "model"}
    for i, content in enumerate(contents):
        assert content["parts"], "Gemini rejects empty parts"
        calls = [p["functionCall"] for p in content["parts"] if "functionCall" in p]
        if calls:
            answers = [p["functionResponse"] for p in contents[i + 1]["parts"] if "functionResponse" in p]
            assert contents[i + 1]["role"] == "user"
            assert [a["name"] for a in answers] == [c["name"] for c in calls]
            assert [a.get("id") for a in answers] == [c.get("id") for c in calls]
            assert all(isinstance(a["response"], dict) for a in answers)
        for part in content["parts"]:
            assert not part.get("thought"), "foreign thinking must not be replayed as thoughts"


@pytest.mark.parametrize("model_id", ["gemini-2.5-flash", "gemini-3-pro-preview"])
async def test_foreign_history_serialises(loopback, model_id: str):
    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    _, message = await run_stream(make_model(loopback.url, model_id), Context(messages=foreign_history()))
    assert message.stop_reason == "stop"
    contents = loopback.last.json["contents"]
    _assert_valid_gemini_contents(contents)
    texts = [p.get("text") for c in contents for p in c["parts"]]
    assert "I should list files." in texts and "Read both." in texts
    body = json.dumps(contents)
    for foreign in ("EoQDCm0IDhgCKkCD", "EqkECkYIBxgC", "rs_1", "msg_123"):
        assert foreign not in body
    ids = [p["functionCall"]["id"] for c in contents for p in c["parts"] if "functionCall" in p]
    assert ids == ["toolu_01825dXWLSoJwCst1qTsiWdb", "call_abc|fc_123+/=", "call_def|fc_456"]
    missing = [p["functionResponse"] for c in contents for p in c["parts"] if "functionResponse" in p][-1]
    assert missing["id"] == "call_def|fc_456" and "error" in missing["response"]
    signatures = [p.get("thoughtSignature") for c in contents for p in c["parts"] if "functionCall" in p]
    if model_id.startswith("gemini-3"):
        assert signatures == ["skip_thought_signature_validator", "skip_thought_signature_validator", None]
    else:
        assert signatures == [None, None, None]


async def test_errored_assistant_turn_is_skipped(loopback):
    broken = AssistantMessage(
        api="google-generative-ai", provider="google", model="gemini-2.5-flash", stop_reason="error",
        error_message="boom", content=[ToolCall(id="x", name="ls", arguments={})],
    )
    loopback.push(sse_reply(load_body(WIRE_DIR / GEMINI / "g01_text.sse")))
    await run_stream(make_model(loopback.url), Context(messages=[UserMessage(content="a"), broken, UserMessage(content="b")]))
    contents = loopback.last.json["contents"]
    assert [c["role"] for c in contents] == ["user", "user"]


async def test_concurrent_streams_share_nothing(loopback):
    body = load_body(WIRE_DIR / GEMINI / "g01_text.sse")
    loopback.push(sse_reply(body), sse_reply(body))
    model = make_model(loopback.url)
    (_, a), (_, b) = await asyncio.gather(run_stream(model, hello()), run_stream(model, hello()))
    assert a.text() == b.text() == reference(body)["text"]
