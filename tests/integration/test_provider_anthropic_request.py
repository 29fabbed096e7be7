"""What the anthropic-messages provider sends: bodies against recorded requests, payload rules,
headers, and histories handed over from other providers.

The recorded requests (``*.meta.json``) are turned back into a Wolli Context, sent through
the provider to the loopback server, and the body it sent is compared with the recording.
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest

from tests.integration.test_provider_anthropic import (
    make_model,
    recording,
    run_stream,
    user,
)
from tests.support.loopback import sse_reply
from tests.support.wire import load_body, load_meta, recordings
from wolli.ai.providers.anthropic_request import (
    BETA_FINE_GRAINED_TOOLS,
    BETA_INTERLEAVED_THINKING,
    THINKING_BUDGETS,
    build_payload,
    messages_url,
    normalize_tool_id,
    supports_adaptive_thinking,
)
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

META_RECORDINGS = [p for p in recordings("anthropic") if load_meta(p) is not None]
VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=="

# ---------------------------------------------------------------------------- request bodies

LEVEL_BY_BUDGET = {v: k for k, v in THINKING_BUDGETS.items()}


LEVEL_BY_EFFORT = {"low": "low", "medium": "medium", "high": "high", "max": "xhigh"}
REPRESENTABLE = {"text", "image", "thinking", "redacted_thinking", "tool_use", "tool_result"}


def context_from_body(body: dict[str, Any], model_id: str) -> tuple[Context, StreamOptions, dict[str, Any]]:
    """The Wolli Context, options and model settings that should produce a recorded request body."""
    names: dict[str, str] = {}
    messages: list[Any] = []

    def blocks_of(content: Any) -> list[dict[str, Any]]:
        return [{"type": "text", "text": content}] if isinstance(content, str) else content

    def media(block: dict[str, Any]) -> ImageContent:
        return ImageContent(data=block["source"]["data"], mime_type=block["source"]["media_type"])

    for message in body["messages"]:
        content = blocks_of(message["content"])
        if message["role"] == "assistant":
            parts: list[Any] = []
            for b in content:
                if b["type"] == "text":
                    parts.append(TextContent(text=b["text"]))
                elif b["type"] == "thinking":
                    parts.append(ThinkingContent(thinking=b["thinking"], thinking_signature=b["signature"]))
                elif b["type"] == "redacted_thinking":
                    parts.append(ThinkingContent(thinking="", thinking_signature=b["data"], redacted=True))
                elif b["type"] == "tool_use":
                    names[b["id"]] = b["name"]
                    parts.append(ToolCall(id=b["id"], name=b["name"], arguments=b["input"]))
            stop = "toolUse" if any(isinstance(p, ToolCall) for p in parts) else "stop"
            messages.append(AssistantMessage(content=parts, api="anthropic-messages", provider="anthropic",
                                             model=model_id, stop_reason=stop))
            continue
        user_parts: list[Any] = []
        for b in content:
            if b["type"] == "tool_result":
                result = [TextContent(text=c["text"]) if c["type"] == "text" else media(c)
                          for c in blocks_of(b.get("content", []))]
                messages.append(ToolResultMessage(tool_call_id=b["tool_use_id"], tool_name=names[b["tool_use_id"]],
                                                  content=result, is_error=bool(b.get("is_error"))))
            elif b["type"] == "text":
                user_parts.append(TextContent(text=b["text"]))
            elif b["type"] == "image":
                user_parts.append(media(b))
        if user_parts:
            messages.append(UserMessage(content=user_parts))
    system = body.get("system")
    if isinstance(system, list):
        system = "\n\n".join(b["text"] for b in system)
    tools = [Tool(name=t["name"], description=t.get("description", ""), parameters=t["input_schema"])
             for t in body.get("tools", [])]
    options = StreamOptions(api_key="k", max_tokens=body["max_tokens"])
    model_kwargs: dict[str, Any] = {}
    thinking = body.get("thinking") or {}
    if thinking.get("type") == "enabled":
        budget = thinking["budget_tokens"]
        options.reasoning = LEVEL_BY_BUDGET.get(budget, "medium")  # type: ignore[assignment]
        if budget not in LEVEL_BY_BUDGET:
            options.extra["thinking_budgets"] = {"medium": budget}
        model_kwargs["compat"] = {"adaptiveThinking": False}
    elif thinking.get("type") == "adaptive":
        effort = (body.get("output_config") or {}).get("effort", "high")
        options.reasoning = LEVEL_BY_EFFORT.get(effort, "high")  # type: ignore[assignment]
        model_kwargs["compat"] = {"adaptiveThinking": True}
    elif "temperature" in body:
        options.temperature = body["temperature"]
    return Context(system_prompt=system, messages=messages, tools=tools or None), options, model_kwargs


def normalise_body(body: dict[str, Any]) -> dict[str, Any]:
    """The fields that matter, in one canonical shape (no cache marks, string content as blocks)."""
    body = copy.deepcopy(body)

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            value.pop("cache_control", None)
            if value.get("type") == "tool_result":
                if isinstance(value.get("content"), str):
                    value["content"] = [{"type": "text", "text": value["content"]}]
                if not value.get("is_error"):
                    value.pop("is_error", None)
            return {k: strip(v) for k, v in value.items()}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    # Blocks a Wolli history cannot hold (server tools, compaction, documents, URL images) are
    # left out of the comparison; everything else must match.
    for message in body.get("messages", []):
        if isinstance(message["content"], list):
            message["content"] = [
                b for b in message["content"]
                if b.get("type") in REPRESENTABLE and (b.get("type") != "image" or b["source"]["type"] == "base64")
            ]
    body["messages"] = [m for m in body.get("messages", []) if m["content"]]
    if (body.get("thinking") or {}).get("type") == "disabled":
        body.pop("thinking")
    out = {k: strip(body.get(k)) for k in ("model", "max_tokens", "stream", "messages", "tools", "thinking")}
    if out["thinking"]:
        out["thinking"].pop("display", None)  # a display preference, not a setting that changes the answer
    for message in out["messages"]:
        if isinstance(message["content"], str):
            message["content"] = [{"type": "text", "text": message["content"]}]
    if body.get("system"):
        system = body["system"]
        out["system"] = [{"type": "text", "text": system}] if isinstance(system, str) else strip(system)
    if not body.get("thinking") and "temperature" in body:
        out["temperature"] = body["temperature"]
    return out


@pytest.mark.parametrize("path", META_RECORDINGS, ids=lambda p: p.name)
async def test_request_body_matches_the_recorded_request(loopback, path: Path) -> None:
    meta = load_meta(path)
    recorded = meta["request"].get("body_json") or meta["request"].get("body")
    if isinstance(recorded, str):
        recorded = json.loads(recorded)
    context, options, model_kwargs = context_from_body(recorded, recorded["model"])
    loopback.push(sse_reply(load_body(path)))
    events, m = await run_stream(make_model(loopback.url, recorded["model"], **model_kwargs), context, options)
    assert events[-1].type in ("done", "error")
    sent = loopback.last.json
    assert loopback.last.path == "/v1/messages"
    assert meta["request"].get("uri", "/v1/messages").split("?")[0].endswith("/v1/messages")
    assert normalise_body(sent) == normalise_body(recorded)
    assert loopback.last.headers["anthropic-version"] == "2023-06-01"
    assert loopback.last.headers["x-api-key"] == "k"
    if recorded.get("thinking"):
        assert "temperature" not in sent
    # the cache breakpoint sits on the last block of the last user turn
    last_user = [msg for msg in sent["messages"] if msg["role"] == "user"][-1]
    assert last_user["content"][-1]["cache_control"] == {"type": "ephemeral"}
    assert sum(json.dumps(msg).count("cache_control") for msg in sent["messages"]) == 1


async def test_a06_replay_of_turn_one_output(loopback) -> None:
    """Turn 1's streamed message, fed back as history, yields turn 2's recorded request."""
    loopback.push(sse_reply(load_body(recording("a05_thinking_then_tool_use.turn1.sse"))))
    model = make_model(loopback.url, "claude-haiku-4-5-20251001")
    prompt = "Use the fixed_version tool. Then tell me the version and make one short joke about it. Think about it first."
    tools = [Tool(name="fixed_version", description="Return a fixed test version string",
                  parameters={"properties": {}, "type": "object"})]
    options = StreamOptions(api_key="k", max_tokens=64000, reasoning="minimal")
    _, turn1 = await run_stream(model, Context(messages=[UserMessage(content=prompt)], tools=tools), options)
    call = turn1.tool_calls()[0]
    history = [UserMessage(content=prompt), turn1,
               ToolResultMessage(tool_call_id=call.id, tool_name=call.name, content=[TextContent(text="0.32a0")])]
    loopback.push(sse_reply(load_body(recording("a06_thinking_then_tool_use.turn2.sse"))))
    _, turn2 = await run_stream(model, Context(messages=history, tools=tools), options)
    assert turn2.stop_reason == "stop"
    recorded = load_meta(recording("a06_thinking_then_tool_use.turn2.sse"))["request"]["body_json"]
    assert normalise_body(loopback.last.json) == normalise_body(recorded)
    beta = loopback.last.headers["anthropic-beta"].split(",")
    assert BETA_INTERLEAVED_THINKING in beta and BETA_FINE_GRAINED_TOOLS in beta


# ---------------------------------------------------------------------------- payload rules


def payload_for(context: Context, options: StreamOptions | None = None, **model_kwargs: Any) -> dict[str, Any]:
    return build_payload(make_model("http://x", **model_kwargs), context, options or StreamOptions())


@pytest.mark.parametrize("level", ["minimal", "low", "medium", "high", "xhigh"])
def test_budget_thinking_per_level_raises_max_tokens(level: str) -> None:
    p = payload_for(user(), StreamOptions(reasoning=level, max_tokens=1500, temperature=0.3))
    assert p["thinking"] == {"type": "enabled", "budget_tokens": THINKING_BUDGETS[level]}
    assert p["max_tokens"] > THINKING_BUDGETS[level] and "temperature" not in p
    assert "output_config" not in p


def test_thinking_budget_shrinks_below_a_small_model_cap() -> None:
    p = payload_for(user(), StreamOptions(reasoning="xhigh"), max_tokens=8192)
    assert p["max_tokens"] <= 8192 and p["thinking"]["budget_tokens"] < p["max_tokens"]


@pytest.mark.parametrize(
    ("model_id", "compat", "adaptive"),
    [("claude-opus-4-6", None, True), ("claude-sonnet-4-6-20260101", None, True), ("claude-sonnet-5", None, True),
     ("claude-opus-4-7", None, True), ("claude-sonnet-4-5", None, False), ("claude-sonnet-4-20250514", None, False),
     ("claude-3-7-sonnet-20250219", None, False), ("claude-haiku-4-5", None, False),
     ("my-proxy-model", {"adaptiveThinking": True}, True), ("claude-opus-4-6", {"adaptiveThinking": False}, False)],
)
def test_adaptive_thinking_detection(model_id: str, compat: dict | None, adaptive: bool) -> None:
    assert supports_adaptive_thinking(make_model("http://x", model_id, compat=compat)) is adaptive


@pytest.mark.parametrize(("level", "effort"), [("minimal", "low"), ("low", "low"), ("medium", "medium"),
                                               ("high", "high"), ("xhigh", "max")])
def test_adaptive_thinking_uses_effort(level: str, effort: str) -> None:
    p = payload_for(user(), StreamOptions(reasoning=level, temperature=0.5), model_id="claude-opus-4-6")
    assert p["thinking"] == {"type": "adaptive"} and p["output_config"] == {"effort": effort}
    assert "temperature" not in p


async def test_adaptive_thinking_headers_skip_interleaved_beta(loopback) -> None:
    loopback.push(sse_reply(load_body(recording("a01_text_basic.sse"))))
    ctx = Context(messages=[UserMessage(content="x")], tools=[Tool(name="t")])
    await run_stream(make_model(loopback.url, "claude-opus-4-6"), ctx, StreamOptions(reasoning="high"))
    assert loopback.last.headers["anthropic-beta"] == BETA_FINE_GRAINED_TOOLS
    assert "x-api-key" not in loopback.last.headers  # no key given: no auth header


def test_no_thinking_when_off_or_model_cannot_reason() -> None:
    assert "thinking" not in payload_for(user(), StreamOptions(reasoning="off", temperature=0.2))
    p = payload_for(user(), StreamOptions(reasoning="high", temperature=0.2), reasoning=False)
    assert "thinking" not in p and p["temperature"] == 0.2


def test_system_prompt_tools_and_cache_marks() -> None:
    ctx = Context(system_prompt="Be terse.", messages=[UserMessage(content="a")],
                  tools=[Tool(name="read", description="Read a file",
                              parameters={"type": "object", "properties": {"path": {"type": "string"}}})])
    p = payload_for(ctx)
    assert p["system"] == [{"type": "text", "text": "Be terse.", "cache_control": {"type": "ephemeral"}}]
    assert p["tools"] == [{"name": "read", "description": "Read a file",
                           "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}}}]
    assert p["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}]}]
    assert p["stream"] is True


def test_tool_results_merge_into_one_user_turn_with_images_and_errors() -> None:
    calls = [ToolCall(id="toolu_1", name="read", arguments={"path": "a.png"}),
             ToolCall(id="toolu_2", name="bash", arguments={"command": "false"})]
    history = [
        UserMessage(content="go"),
        AssistantMessage(content=[TextContent(text=""), *calls], api="anthropic-messages", provider="anthropic",
                         model="claude-sonnet-4-5", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="toolu_1", tool_name="read",
                          content=[TextContent(text="an image"), ImageContent(data=PNG, mime_type="image/png")]),
        ToolResultMessage(tool_call_id="toolu_2", tool_name="bash", content=[TextContent(text="exit 1")], is_error=True),
    ]
    p = payload_for(Context(messages=history))
    assert [m["role"] for m in p["messages"]] == ["user", "assistant", "user"]
    assert p["messages"][1]["content"] == [  # empty text block dropped
        {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a.png"}},
        {"type": "tool_use", "id": "toolu_2", "name": "bash", "input": {"command": "false"}},
    ]
    first, second = p["messages"][2]["content"]
    assert first == {"type": "tool_result", "tool_use_id": "toolu_1", "is_error": False, "content": [
        {"type": "text", "text": "an image"},
        {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}}]}
    assert second["is_error"] is True and second["content"] == [{"type": "text", "text": "exit 1"}]
    assert second["cache_control"] == {"type": "ephemeral"} and "cache_control" not in first


def test_empty_text_is_never_sent_and_images_degrade_for_text_only_models() -> None:
    history = [UserMessage(content=[TextContent(text="  "), ImageContent(data=PNG, mime_type="image/png")]),
               UserMessage(content="")]
    p = payload_for(Context(messages=history), input=["text"])
    assert p["messages"] == [{"role": "user", "content": [
        {"type": "text", "text": "(image omitted: this model does not accept image input)",
         "cache_control": {"type": "ephemeral"}}]}]


def test_same_model_thinking_replay_signed_unsigned_and_redacted() -> None:
    assistant = AssistantMessage(
        content=[ThinkingContent(thinking="signed", thinking_signature="sig1"),
                 ThinkingContent(thinking="", thinking_signature="opaque", redacted=True),
                 ThinkingContent(thinking="cut short"),
                 TextContent(text="answer")],
        api="anthropic-messages", provider="anthropic", model="claude-sonnet-4-5")
    p = payload_for(Context(messages=[UserMessage(content="q"), assistant, UserMessage(content="more")]))
    assert p["messages"][1]["content"] == [
        {"type": "thinking", "thinking": "signed", "signature": "sig1"},
        {"type": "redacted_thinking", "data": "opaque"},
        {"type": "text", "text": "cut short"},
        {"type": "text", "text": "answer"},
    ]


@pytest.mark.parametrize(
    ("base", "url"),
    [("https://api.anthropic.com", "https://api.anthropic.com/v1/messages"),
     ("https://proxy.example/v1/", "https://proxy.example/v1/messages"),
     ("https://proxy.example/anthropic", "https://proxy.example/anthropic/v1/messages"),
     ("", "https://api.anthropic.com/v1/messages")],
)
def test_messages_url(base: str, url: str) -> None:
    assert messages_url(make_model(base)) == url


def test_tool_id_normalisation() -> None:
    assert normalize_tool_id("toolu_01ABC-x") == "toolu_01ABC-x"
    ids = {normalize_tool_id(i) for i in ("call_a|fc_b", "call_a+fc_b", "x" * 100, "", "ä/=")}
    assert len(ids) == 5 and all(VALID_ID.match(i) for i in ids)
    assert normalize_tool_id("call_a|fc_b") == normalize_tool_id("call_a|fc_b")


async def test_headers_and_payload_hook(loopback) -> None:
    loopback.push(sse_reply(load_body(recording("a01_text_basic.sse"))))
    seen: list[dict[str, Any]] = []

    async def hook(payload: dict[str, Any], model: Model) -> dict[str, Any]:
        seen.append(payload)
        return {**payload, "metadata": {"user_id": "u1"}}

    model = make_model(loopback.url, headers={"x-team": "a", "anthropic-beta": "context-1m-2025-08-07"})
    options = StreamOptions(api_key="sk", headers={"x-req": "b"}, on_payload=hook, reasoning="low",
                            max_tokens=100)
    ctx = Context(messages=[UserMessage(content="x")], tools=[Tool(name="t")])
    _, m = await run_stream(model, ctx, options)
    assert m.stop_reason == "stop" and seen
    h = loopback.last.headers
    assert (h["x-team"], h["x-req"], h["x-api-key"], h["anthropic-version"]) == ("a", "b", "sk", "2023-06-01")
    assert set(h["anthropic-beta"].split(",")) == {
        BETA_FINE_GRAINED_TOOLS, BETA_INTERLEAVED_THINKING, "context-1m-2025-08-07"}
    assert loopback.last.json["metadata"] == {"user_id": "u1"}


# ---------------------------------------------------------------------------- cross-provider hand-off


async def test_foreign_history_serialises_into_an_acceptable_body(loopback) -> None:
    long_id = "functions." + "z" * 90
    history = [
        UserMessage(content="start"),
        AssistantMessage(  # OpenAI Responses: reasoning item, ids the Messages API rejects
            content=[ThinkingContent(thinking="I should read it", thinking_signature='{"id":"rs_1"}'),
                     TextContent(text="Reading.", text_signature="msg_1"),
                     ToolCall(id="call_abc|fc_1+/=", name="read", arguments={"path": "a"}),
                     ToolCall(id="call_def|fc_2", name="ls", arguments={})],  # never answered
            api="openai-responses", provider="openai", model="gpt-5", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id="call_abc|fc_1+/=", tool_name="read",
                          content=[TextContent(text="contents"), ImageContent(data=PNG, mime_type="image/png")]),
        UserMessage(content="and now?"),
        AssistantMessage(  # Gemini: thought signature on the call, very long id
            content=[ThinkingContent(thinking="", thinking_signature="gem-sig", redacted=True),
                     ToolCall(id=long_id, name="bash", arguments={"command": "ls"}, thought_signature="Ckw=")],
            api="google-generative-ai", provider="google", model="gemini-3-pro", stop_reason="toolUse"),
        ToolResultMessage(tool_call_id=long_id, tool_name="bash", content=[TextContent(text="a b")]),
        AssistantMessage(content=[ToolCall(id="half", name="write", arguments={})], api="anthropic-messages",
                         provider="anthropic", model="claude-sonnet-4-5", stop_reason="aborted"),
        UserMessage(content="finish"),
    ]
    loopback.push(sse_reply(load_body(recording("a01_text_basic.sse"))))
    _, m = await run_stream(make_model(loopback.url), Context(messages=history), StreamOptions(reasoning="high"))
    assert m.stop_reason == "stop"
    messages = loopback.last.json["messages"]
    roles = [msg["role"] for msg in messages]
    assert roles[0] == "user" and all(a != b for a, b in zip(roles, roles[1:], strict=False))
    body_text = json.dumps(messages)
    assert '"thinking"' not in body_text and "redacted_thinking" not in body_text and "gem-sig" not in body_text
    assert "half" not in body_text  # the aborted turn is not replayed
    for i, msg in enumerate(messages):
        for block in msg["content"]:
            if block["type"] == "text":
                assert block["text"].strip()
            assert block["type"] in ("text", "image", "tool_use", "tool_result")
        uses = [b["id"] for b in msg["content"] if b["type"] == "tool_use"]
        for use in uses:
            assert VALID_ID.match(use)
        if uses:  # every call is answered, first thing in the next user turn
            nxt = messages[i + 1]["content"]
            assert [b["tool_use_id"] for b in nxt[: len(uses)]] == uses
            assert all(b["type"] == "tool_result" for b in nxt[: len(uses)])
    results = [b for msg in messages for b in msg["content"] if b["type"] == "tool_result"]
    assert len(results) == 3 and sum(r["is_error"] for r in results) == 1
    assert messages[1]["content"][0] == {"type": "text", "text": "I should read it"}
