"""OpenAI Chat Completions (``POST {base}/chat/completions``) and every compatible server.

One implementation serves OpenAI, OpenRouter, Groq, xAI, DeepSeek, Mistral, z.ai,
Qwen/DashScope and local servers (Ollama, llama.cpp, vLLM, LM Studio). What differs between
them is detected from ``model.provider`` and ``model.base_url`` (see
:mod:`.openai_compat`) and can be overridden per model with ``model.compat`` keys:

``supportsDeveloperRole`` (bool)
    Send the system prompt with role ``developer`` to reasoning models (OpenAI only by
    default; everyone else gets ``system``).
``maxTokensField`` (``"max_tokens"`` | ``"max_completion_tokens"`` | null)
    Name of the output limit. OpenAI, OpenRouter and Groq take ``max_completion_tokens``;
    Mistral rejects it, so every other server gets ``max_tokens``. ``null``: never send one.
``sendDefaultMaxTokens`` (bool)
    Send ``model.max_tokens`` when the caller gave no limit. Off for local servers unless the
    model sets ``maxTokens`` itself: their real context is often smaller than the default
    limit assumes (vLLM rejects such requests).
``supportsUsageInStreaming`` (bool)
    Send ``stream_options: {"include_usage": true}``. Off for Mistral (strict schema).
``supportsReasoningEffort`` (bool)
    Send ``reasoning_effort`` (thinking format ``openai``). Off for xAI and DeepSeek.
``reasoningEffortMap`` (object)
    Thinking level -> effort string, merged over the defaults (OpenAI passes ``minimal``
    through; most servers only know low/medium/high; ``xhigh`` becomes ``high``).
``thinkingFormat`` (``openai`` | ``openrouter`` | ``zai`` | ``qwen`` | ``qwen-chat-template`` | ``none``)
    How thinking is switched: ``reasoning_effort``; OpenRouter ``reasoning: {effort}``;
    z.ai ``thinking: {type: enabled|disabled}``; DashScope ``enable_thinking``; Qwen chat
    templates on vLLM/SGLang/llama.cpp ``chat_template_kwargs: {enable_thinking}``.
``reasoningField`` (str)
    Field that carries replayed thinking when the stream did not tell us which one it used
    (default ``reasoning_content``; ``reasoning`` for OpenRouter, Groq, Ollama, vLLM).
``requiresThinkingAsText`` (bool)
    Replay this model's own thinking as plain text instead of a reasoning field (Mistral).
``supportsReasoningReplay`` (bool)
    Send this model's own earlier thinking back at all; off for Groq, which rejects the
    reasoning fields on assistant messages (the thinking is then dropped, not turned to text).
``requiresToolResultName`` (bool)
    ``tool`` messages carry the tool ``name`` (Mistral).
``requiresAssistantAfterToolResult`` (bool)
    Insert a short assistant message between a tool result and a following user message
    (Mistral rejects ``user`` right after ``tool``).
``requiresMistralToolIds`` (bool)
    Tool-call ids from other providers become exactly 9 alphanumeric characters (Mistral).
``toolCallIdMaxLength`` (int)
    Longest tool-call id from another provider that is passed on (OpenAI: 40).
``supportsStore`` (bool)
    Send ``store: false`` (OpenAI only).
``supportsPromptCacheKey`` (bool)
    Send ``options.session_id`` as ``prompt_cache_key`` (OpenAI only).
``openRouterRouting`` (object)
    OpenRouter's provider routing preferences, sent as the request's ``provider`` field.

Streaming: text in ``delta.content`` (a string, or Mistral's list of typed parts), thinking in
the first non-empty of ``reasoning_content`` / ``reasoning`` / ``reasoning_text`` (the field
name is kept in the thinking block's ``thinking_signature`` so a replay to the same model
uses the same field), tool calls assembled by ``index``. Usage comes from whichever chunk
carries it (a final ``choices: []`` chunk, or the finish chunk on DeepSeek, Groq, llama.cpp).
Any data object with a truthy ``error`` (OpenRouter) and ``event: error`` (Groq) end the
stream with the provider's message. Wire reference: fixtures/wire/wire.md §2, §5.2, §6.
"""

from __future__ import annotations

import json
from typing import Any

from ...base.ids import uuid4_hex
from ..builder import MessageBuilder
from ..http import (
    ProviderConnectionError,
    ProviderHTTPError,
    apply_payload_hook,
    merge_headers,
    open_stream,
    sse_events,
)
from ..sse import SSEEvent
from ..transform import is_same_model, transform_messages
from ..types import (
    AssistantMessage,
    Context,
    ImageContent,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from .openai_compat import (
    DEFAULT_BASE_URLS,
    REASONING_FIELDS,
    OpenAICompat,
    detect_server,
    normalize_tool_call_id,
    resolve_compat,
)

INCOMPLETE = "The OpenAI-compatible stream ended before completion (no finish_reason and no [DONE])."
# Thinking that arrived as a typed part of ``content`` (Mistral Magistral), not a field.
CONTENT_THINKING = "content"
_AFTER_TOOL_FILLER = "I have received the tool results."


# ---------------------------------------------------------------------------- request


def normalize_id(tool_call_id: str, model: Model, message: AssistantMessage) -> str:
    """``transform_messages`` hook: rewrite ids produced by other providers."""
    return normalize_tool_call_id(tool_call_id, resolve_compat(model))


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"type": "image_url", "image_url": {"url": f"data:{image.mime_type};base64,{image.data}"}}


def _omitted(count: int, model: Model) -> str:
    return f"({count} image(s) omitted: {model.id} does not accept images)"


def _user_content(message: UserMessage, model: Model) -> str | list[dict[str, Any]] | None:
    if isinstance(message.content, str):
        return message.content or None
    texts = [b.text for b in message.content if isinstance(b, TextContent) and b.text]
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if images and "image" not in model.input:
        texts.append(_omitted(len(images), model))
        images = []
    if not images:
        return "\n".join(texts) or None
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent) and block.text:
            parts.append({"type": "text", "text": block.text})
        elif isinstance(block, ImageContent):
            parts.append(_image_part(block))
    return parts


def _assistant_entry(message: AssistantMessage, model: Model, compat: OpenAICompat) -> dict[str, Any] | None:
    # Separate blocks (split by thinking or tool calls, or thinking turned into text) stay apart.
    text = "\n\n".join(b.text for b in message.content if isinstance(b, TextContent) and b.text)
    thinking = [b for b in message.content if isinstance(b, ThinkingContent) and not b.redacted and b.thinking.strip()]
    calls = [b for b in message.content if isinstance(b, ToolCall)]
    entry: dict[str, Any] = {"role": "assistant"}
    content_parts: list[dict[str, Any]] = []
    if thinking and compat.requires_thinking_as_text:
        text = "\n\n".join([*(b.thinking for b in thinking), *([text] if text else [])])
    elif thinking and compat.supports_reasoning_replay:
        fields: dict[str, list[str]] = {}
        for block in thinking:
            name = block.thinking_signature
            if name == CONTENT_THINKING:
                content_parts.append({"type": "thinking", "thinking": [{"type": "text", "text": block.thinking}]})
                continue
            fields.setdefault(name if name in REASONING_FIELDS else compat.reasoning_field, []).append(block.thinking)
        for name, pieces in fields.items():
            entry[name] = "\n\n".join(pieces)
    if content_parts:
        entry["content"] = [*content_parts, *([{"type": "text", "text": text}] if text else [])]
    elif text:
        entry["content"] = text
    if calls:
        entry["tool_calls"] = [
            {
                "id": call.id,
                "type": "function",
                "function": {"name": call.name, "arguments": json.dumps(call.arguments, ensure_ascii=False)},
            }
            for call in calls
        ]
        same = is_same_model(message, model) and compat.supports_reasoning_replay
        details = _stored_reasoning_details(calls) if same else None
        if details:
            entry["reasoning_details"] = details
    if "content" not in entry and not calls:
        return None  # nothing the server could use (e.g. only thinking, or empty)
    return entry


def _stored_reasoning_details(calls: list[ToolCall]) -> list[Any] | None:
    """OpenRouter ``reasoning_details`` kept on the first tool call (see ``_ChatStream.finish``)."""
    for call in calls:
        if call.thought_signature:
            try:
                value = json.loads(call.thought_signature)
            except ValueError:
                return None
            return value if isinstance(value, list) else None
    return None


def _tool_entry(message: ToolResultMessage, model: Model, compat: OpenAICompat) -> tuple[dict[str, Any], list[ImageContent]]:
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if images and "image" not in model.input:
        text = (text + "\n" if text else "") + _omitted(len(images), model)
        images = []
    if not text:
        if message.is_error:
            text = "Tool failed without output"
        else:
            text = "(see the attached image)" if images else "(no output)"
    entry: dict[str, Any] = {"role": "tool", "tool_call_id": message.tool_call_id, "content": text}
    if compat.requires_tool_result_name:
        entry["name"] = message.tool_name
    return entry, images


def convert_messages(context: Context, model: Model, compat: OpenAICompat) -> list[dict[str, Any]]:
    """The ``messages`` array: system prompt, then the transformed history."""
    out: list[dict[str, Any]] = []
    if context.system_prompt:
        role = "developer" if model.reasoning and compat.supports_developer_role else "system"
        out.append({"role": role, "content": context.system_prompt})
    history = transform_messages(
        list(context.messages), model, lambda i, m, msg: normalize_tool_call_id(i, compat)
    )
    pending_images: list[tuple[str, list[ImageContent]]] = []

    def add_user(content: str | list[dict[str, Any]]) -> None:
        if compat.requires_assistant_after_tool_result and out and out[-1]["role"] == "tool":
            out.append({"role": "assistant", "content": _AFTER_TOOL_FILLER})
        out.append({"role": "user", "content": content})

    def flush_images() -> None:
        # The tool role takes text only: images follow all the results as one user message.
        if not pending_images:
            return
        parts: list[dict[str, Any]] = []
        for tool_name, images in pending_images:
            parts.append({"type": "text", "text": f"Image(s) returned by the {tool_name} tool:"})
            parts.extend(_image_part(image) for image in images)
        pending_images.clear()
        add_user(parts)

    for message in history:
        if isinstance(message, ToolResultMessage):
            entry, images = _tool_entry(message, model, compat)
            out.append(entry)
            if images:
                pending_images.append((message.tool_name, images))
            continue
        flush_images()
        if isinstance(message, UserMessage):
            content = _user_content(message, model)
            if content:
                add_user(content)
        elif isinstance(message, AssistantMessage):
            assistant = _assistant_entry(message, model, compat)
            if assistant is not None:
                out.append(assistant)
    flush_images()
    return out


def _apply_reasoning(payload: dict[str, Any], model: Model, options: StreamOptions, compat: OpenAICompat) -> None:
    if not model.reasoning:
        return
    level = options.reasoning if options.reasoning and options.reasoning != "off" else None
    fmt = compat.thinking_format
    if fmt == "zai":
        payload["thinking"] = {"type": "enabled" if level else "disabled"}
    elif fmt == "qwen":
        payload["enable_thinking"] = bool(level)
    elif fmt == "qwen-chat-template":
        payload["chat_template_kwargs"] = {"enable_thinking": bool(level)}
    elif fmt == "openrouter":
        payload["reasoning"] = {"effort": compat.reasoning_effort_map.get(level, level) if level else "none"}
    elif fmt == "openai" and level and compat.supports_reasoning_effort:
        payload["reasoning_effort"] = compat.reasoning_effort_map.get(level, level)


def build_payload(model: Model, context: Context, options: StreamOptions, compat: OpenAICompat | None = None) -> dict[str, Any]:
    compat = compat or resolve_compat(model)
    payload: dict[str, Any] = {
        "model": model.id,
        "messages": convert_messages(context, model, compat),
        "stream": True,
    }
    if compat.supports_usage_in_streaming:
        payload["stream_options"] = {"include_usage": True}
    if compat.supports_store:
        payload["store"] = False
    # A limit the user wrote into models.json counts even for local servers.
    explicit = "max_tokens" in model.model_fields_set
    max_tokens = options.max_tokens or (model.max_tokens if compat.send_default_max_tokens or explicit else None)
    if max_tokens and compat.max_tokens_field:
        payload[compat.max_tokens_field] = max_tokens
    # OpenAI's reasoning models reject any temperature but the default.
    if options.temperature is not None and not (compat.server == "openai" and model.reasoning):
        payload["temperature"] = options.temperature
    if context.tools:
        payload["tools"] = [
            {
                "type": "function",
                "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
            }
            for t in context.tools
        ]
        for key in ("tool_choice", "parallel_tool_calls"):
            if key in options.extra:
                payload[key] = options.extra[key]
    _apply_reasoning(payload, model, options, compat)
    if compat.open_router_routing:  # models.json compat.openRouterRouting, as pi sends it
        payload["provider"] = dict(compat.open_router_routing)
    if options.session_id and compat.supports_prompt_cache_key:
        payload["prompt_cache_key"] = options.session_id
    return payload


def endpoint(model: Model) -> str:
    base = model.base_url
    if not base:
        server, _ = detect_server(model.provider, "")
        base = DEFAULT_BASE_URLS.get(server, "")
        if not base:
            raise ValueError(
                f"Model {model.provider}/{model.id} has no baseUrl: set it in models.json "
                "(for example http://localhost:11434/v1 for Ollama)."
            )
    base = base.rstrip("/")
    return base if base.endswith("/chat/completions") else base + "/chat/completions"


# ---------------------------------------------------------------------------- stream


def error_text(error: Any, fallback: str = "The provider reported an error in the stream.") -> str:
    """The message of an in-stream error object (``{"message": ...}``, a string, or JSON text)."""
    if isinstance(error, dict):
        inner = error.get("error")
        if isinstance(inner, dict | str) and inner:
            return error_text(inner, fallback)
        message = error.get("message") or error.get("msg") or error.get("detail")
        return str(message) if message else (json.dumps(error)[:500] if error else fallback)
    if isinstance(error, str) and error.strip():
        return error.strip()
    return fallback


class _ChatStream:
    """Maps chat-completion chunks onto the builder; ``handle`` returns True when finished."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.b = builder
        self.current: tuple[str, int] | None = None  # open text/thinking block (kind, index)
        self.by_wire_index: dict[int, int] = {}  # tool_calls[].index -> block index
        self.by_id: dict[str, int] = {}
        self.tool_blocks: list[int] = []
        self.finish_reason: str | None = None
        self.details: dict[tuple[Any, Any], dict[str, Any]] = {}

    # ------------------------------------------------------------------ blocks

    def _close_current(self) -> None:
        if self.current is not None:
            kind, index = self.current
            (self.b.text_end if kind == "text" else self.b.thinking_end)(index)
            self.current = None

    def _text(self, text: str) -> None:
        if not text:
            return
        if self.current is None or self.current[0] != "text":
            self._close_current()
            self.current = ("text", self.b.text_start())
        self.b.text_delta(self.current[1], text)

    def _thinking(self, text: str, field: str) -> None:
        if not text:
            return
        if self.current is None or self.current[0] != "thinking":
            self._close_current()
            self.current = ("thinking", self.b.thinking_start(signature=field))
        self.b.thinking_delta(self.current[1], text)

    def _tool_call(self, delta: dict[str, Any]) -> None:
        wire_index = delta.get("index")
        call_id = delta.get("id") if isinstance(delta.get("id"), str) and delta.get("id") else None
        function: dict[str, Any] = delta["function"] if isinstance(delta.get("function"), dict) else {}
        name: str = function["name"] if isinstance(function.get("name"), str) else ""
        arguments = function.get("arguments")
        if isinstance(arguments, dict | list):
            arguments = json.dumps(arguments, ensure_ascii=False)
        elif not isinstance(arguments, str):
            arguments = ""
        block: int | None = None
        if isinstance(wire_index, int) and wire_index in self.by_wire_index:
            block = self.by_wire_index[wire_index]
            known = self.b.message.content[block]
            # A server that reuses index 0 for the next call sends a new id and name.
            if call_id and name and isinstance(known, ToolCall) and call_id != known.id:
                block = None
        elif call_id and call_id in self.by_id:
            block = self.by_id[call_id]
        elif wire_index is None and not call_id and self.tool_blocks:
            block = self.tool_blocks[-1]  # id-less continuation of the last call
        if block is None:
            self._close_current()
            block = self.b.toolcall_start(call_id or f"call_{uuid4_hex()[:24]}", name)
            self.tool_blocks.append(block)
            if call_id:
                self.by_id[call_id] = block
        elif name:
            known = self.b.message.content[block]
            if isinstance(known, ToolCall) and not known.name:
                known.name = name
        if isinstance(wire_index, int):
            self.by_wire_index[wire_index] = block
        self.b.toolcall_delta(block, arguments)

    # ------------------------------------------------------------------ chunks

    def handle(self, sse: SSEEvent) -> bool:
        data = sse.data.strip()
        if not data:
            return False
        if data == "[DONE]":
            self.finish()
            return True
        try:
            chunk = json.loads(data)
        except ValueError as exc:
            if sse.event == "error":
                self.b.fail(error_text(data))
            else:
                self.b.fail(f"The server sent malformed JSON in a '{sse.event}' event: {exc} (data: {data[:200]!r})")
            return True
        if not isinstance(chunk, dict):
            if sse.event == "error":
                self.b.fail(error_text(chunk))
                return True
            return False
        usage = chunk.get("usage")
        if not isinstance(usage, dict):
            x_groq = chunk.get("x_groq")
            usage = x_groq.get("usage") if isinstance(x_groq, dict) else None
        if isinstance(usage, dict):
            self._usage(usage, chunk.get("timings"))
        if chunk.get("error") or sse.event == "error":
            self.b.fail(error_text(chunk.get("error") or chunk))
            return True
        if isinstance(chunk.get("id"), str) and chunk["id"] and not self.b.message.response_id:
            self.b.message.response_id = chunk["id"]
        choices = chunk.get("choices")
        if isinstance(choices, list) and choices:
            choice = next((c for c in choices if isinstance(c, dict) and c.get("index", 0) == 0), choices[0])
            if isinstance(choice, dict):
                self._choice(choice)
        return False

    def _choice(self, choice: dict[str, Any]) -> None:
        if isinstance(choice.get("usage"), dict):  # Moonshot puts usage on the choice
            self._usage(choice["usage"], None)
        delta: dict[str, Any] = choice["delta"] if isinstance(choice.get("delta"), dict) else (
            choice["message"] if isinstance(choice.get("message"), dict) else {})
        reasoning = next(((f, delta[f]) for f in REASONING_FIELDS if isinstance(delta.get(f), str) and delta[f]), None)
        details = delta.get("reasoning_details")
        if isinstance(details, list):
            text_from_details = self._collect_details(details)
            if reasoning is None and text_from_details:
                reasoning = ("reasoning", text_from_details)
        if reasoning is not None:
            self._thinking(reasoning[1], reasoning[0])
        content = delta.get("content")
        if isinstance(content, str):
            self._text(content)
        elif isinstance(content, list):
            for part in content:
                self._content_part(part)
        if isinstance(delta.get("refusal"), str):
            self._text(delta["refusal"])
        calls = delta.get("tool_calls")
        if isinstance(calls, list):
            for call in calls:
                if isinstance(call, dict):
                    self._tool_call(call)
        elif isinstance(delta.get("function_call"), dict):  # legacy single function call
            self._tool_call({"index": 0, "function": delta["function_call"]})
        if isinstance(choice.get("finish_reason"), str) and choice["finish_reason"]:
            self.finish_reason = choice["finish_reason"]

    def _content_part(self, part: Any) -> None:
        """Mistral: ``{"type":"text","text"}`` or ``{"type":"thinking","thinking":[{"type":"text",...}]}``."""
        if isinstance(part, str):
            self._text(part)
        elif isinstance(part, dict) and part.get("type") == "text" and isinstance(part.get("text"), str):
            self._text(part["text"])
        elif isinstance(part, dict) and part.get("type") == "thinking":
            inner = part.get("thinking")
            if isinstance(inner, str):
                self._thinking(inner, CONTENT_THINKING)
            elif isinstance(inner, list):
                for piece in inner:
                    text = piece.get("text") if isinstance(piece, dict) else piece
                    if isinstance(text, str):
                        self._thinking(text, CONTENT_THINKING)

    def _collect_details(self, details: list[Any]) -> str:
        """Merge OpenRouter ``reasoning_details`` deltas; returns their readable text."""
        text = ""
        for item in details:
            if not isinstance(item, dict):
                continue
            kind = item.get("type")
            key = (item.get("index", 0), kind) if kind != "reasoning.encrypted" else (len(self.details), kind)
            merged = self.details.setdefault(key, {})
            for name, value in item.items():
                if name in ("text", "summary", "signature", "data") and isinstance(value, str):
                    merged[name] = merged.get(name, "") + value
                elif merged.get(name) is None:
                    merged[name] = value
            for name in ("text", "summary"):
                if isinstance(item.get(name), str):
                    text += item[name]
        return text

    def _usage(self, usage: dict[str, Any], timings: Any) -> None:
        def number(value: Any) -> int:
            return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else 0

        prompt = number(usage.get("prompt_tokens"))
        details = usage.get("prompt_tokens_details")
        details = details if isinstance(details, dict) else {}
        cached = number(details.get("cached_tokens")) or number(usage.get("prompt_cache_hit_tokens"))
        written = number(details.get("cache_write_tokens"))
        if not cached and isinstance(timings, dict) and number(timings.get("cache_n")):
            # llama.cpp: cache_n prompt tokens came from the KV cache, prompt_n were processed.
            cached = number(timings.get("cache_n"))
            prompt = max(prompt, cached + number(timings.get("prompt_n")))
        target = self.b.message.usage
        target.input = max(prompt - cached - written, 0)
        target.cache_read = cached
        target.cache_write = written
        target.output = number(usage.get("completion_tokens"))
        target.total_tokens = target.input + target.output + target.cache_read + target.cache_write

    # ------------------------------------------------------------------ end

    def finish(self) -> None:
        """Terminal: ``[DONE]``, or end of stream after a ``finish_reason``."""
        self._close_current()
        self._keep_opaque_details()
        for block in self.tool_blocks:
            self.b.toolcall_end(block)
        reason = (self.finish_reason or "stop").lower()
        if reason in ("content_filter", "sensitive"):
            self.b.fail(f"The provider's content filter stopped the response (finish_reason: {self.finish_reason}).")
        elif reason in ("error", "network_error"):
            self.b.fail(f"The provider ended the response with an error (finish_reason: {self.finish_reason}).")
        elif reason in ("length", "max_tokens", "model_length"):
            self.b.done("length")
        elif reason in ("tool_calls", "function_call", "tool_use"):
            self.b.done("toolUse" if self.tool_blocks else "stop")
        else:
            self.b.done("stop")

    def end_of_stream(self) -> None:
        if self.finish_reason is not None:
            self.finish()
        else:
            self.b.fail(INCOMPLETE)

    def _keep_opaque_details(self) -> None:
        """OpenRouter needs signed/encrypted reasoning back with the tool calls it preceded."""
        merged = list(self.details.values())
        if not self.tool_blocks or not any(d.get("signature") or d.get("data") for d in merged):
            return
        first = self.b.message.content[self.tool_blocks[0]]
        if isinstance(first, ToolCall):
            first.thought_signature = json.dumps(merged, ensure_ascii=False)


# ---------------------------------------------------------------------------- run



async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    try:
        compat = resolve_compat(model)
        url = endpoint(model)
        payload = await apply_payload_hook(build_payload(model, context, options, compat), model, options)
    except Exception as exc:  # bad history, options or compat: say so instead of raising
        builder.fail(f"Could not build the chat completions request: {type(exc).__name__}: {exc}")
        return
    auth = {"Authorization": f"Bearer {options.api_key}"} if options.api_key else None
    headers = merge_headers(auth, model.headers, options.headers)
    state = _ChatStream(builder)
    streaming = False
    try:
        async with open_stream(url, headers, payload, options) as response:
            streaming = True
            builder.start()
            events = sse_events(response, options)
            try:
                async for sse in events:
                    if state.handle(sse):
                        return
            finally:
                await events.aclose()
            state.end_of_stream()
    except ProviderHTTPError as exc:
        builder.fail_from(exc)
    except ProviderConnectionError as exc:
        if streaming:
            builder.fail(f"The OpenAI-compatible stream ended before completion: {exc}", kind="stream_cut")
        else:
            builder.fail_from(exc)
