"""The ``google-generative-ai`` provider: Gemini ``streamGenerateContent?alt=sse``.

Gemini differs from the other APIs in ways that shape this module:

- every SSE chunk is a complete ``GenerateContentResponse``; text arrives as parts that
  append to the current block, function calls arrive whole (no streamed JSON) unless Vertex
  streams them as ``partialArgs`` fragments addressed by JSON path;
- ``thoughtSignature`` rides on whatever part it belongs to (a function call, a text part,
  even an empty text part in the last chunk) and must be sent back on the same kind of part,
  to the same model only; Gemini 3 rejects replayed function calls without one;
- there is no terminal event: the chunk carrying ``finishReason`` is the last one, so a
  connection that closes before it means the answer is incomplete;
- ``usageMetadata`` is cumulative on every chunk (take the last) and thought tokens are
  counted apart from ``candidatesTokenCount``.
"""

from __future__ import annotations

import json
import re
import uuid
from typing import Any

from ..builder import MessageBuilder
from ..http import (
    ProviderConnectionError,
    ProviderHTTPError,
    apply_payload_hook,
    merge_headers,
    open_stream,
    sse_events,
)
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
    content_text,
)

DEFAULT_BASE_URL = "https://generativelanguage.googleapis.com/v1beta"
# Documented by Google for histories whose function calls carry no signature (other models).
DUMMY_THOUGHT_SIGNATURE = "skip_thought_signature_validator"

_STOP_REASONS = {"STOP": "stop", "MAX_TOKENS": "length"}
# Gemini 2.5 thinking budgets (tokens) per level; "xhigh" uses the model's maximum.
_BUDGETS = {"minimal": 512, "low": 2048, "medium": 8192, "high": 16384}
_MAX_BUDGET_PRO = 32768
_MAX_BUDGET_FLASH = 24576


# ============================================================================ request


def build_url(model: Model) -> str:
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    model_id = model.id.removeprefix("models/")
    return f"{base}/models/{model_id}:streamGenerateContent?alt=sse"


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    """The request body for ``context`` (camelCase field names, as the REST API documents)."""
    payload: dict[str, Any] = {"contents": convert_messages(model, context)}
    if context.system_prompt:
        payload["systemInstruction"] = {"parts": [{"text": context.system_prompt}]}
    if context.tools:
        payload["tools"] = [
            {
                "functionDeclarations": [
                    {"name": t.name, "description": t.description, "parametersJsonSchema": t.parameters}
                    for t in context.tools
                ]
            }
        ]
    config: dict[str, Any] = {"maxOutputTokens": options.max_tokens or model.max_tokens}
    if options.temperature is not None:
        config["temperature"] = options.temperature
    thinking = thinking_config(model, options)
    if thinking is not None:
        config["thinkingConfig"] = thinking
    payload["generationConfig"] = config
    return payload


def _is_gemini3(model: Model) -> bool:
    return "gemini-3" in model.id.lower()


def thinking_config(model: Model, options: StreamOptions) -> dict[str, Any] | None:
    """``thinkingConfig`` for the requested level, or None to leave the model's default.

    Gemini 3 takes a ``thinkingLevel`` (low|high) and cannot switch thinking off; Gemini 2.5
    takes a token budget, and only the Flash models accept 0 (= off).
    """
    if not model.reasoning:
        return None
    level = options.reasoning
    model_id = model.id.lower()
    if level is None or level == "off":
        if not _is_gemini3(model) and "flash" in model_id:
            return {"thinkingBudget": 0}
        return None
    if _is_gemini3(model):
        return {"includeThoughts": True, "thinkingLevel": "low" if level in ("minimal", "low") else "high"}
    budgets = options.extra.get("thinking_budgets") or {}
    if level in budgets:
        budget = int(budgets[level])
    elif level == "xhigh":
        budget = _MAX_BUDGET_PRO if "pro" in model_id else _MAX_BUDGET_FLASH
    else:
        budget = _BUDGETS.get(level, _BUDGETS["medium"])
    return {"includeThoughts": True, "thinkingBudget": budget}


def _image_part(image: ImageContent) -> dict[str, Any]:
    return {"inlineData": {"mimeType": image.mime_type, "data": image.data}}


def _user_parts(model: Model, content: str | list[Any]) -> list[dict[str, Any]]:
    if isinstance(content, str):
        return [{"text": content}] if content else []
    parts: list[dict[str, Any]] = []
    for block in content:
        if isinstance(block, TextContent):
            if block.text:
                parts.append({"text": block.text})
        elif isinstance(block, ImageContent):
            if "image" in model.input:
                parts.append(_image_part(block))
            else:
                parts.append({"text": "(image omitted: this model does not accept images)"})
    return parts


def _model_parts(model: Model, message: AssistantMessage) -> list[dict[str, Any]]:
    same = is_same_model(message, model)
    parts: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, TextContent):
            signature = block.text_signature if same else None
            if not block.text and not signature:
                continue
            part: dict[str, Any] = {"text": block.text}
            if signature:
                part["thoughtSignature"] = signature
            parts.append(part)
        elif isinstance(block, ThinkingContent):
            # transform_messages already turned other models' thinking into text.
            if block.redacted or (not block.thinking and not block.thinking_signature):
                continue
            part = {"text": block.thinking, "thought": True}
            if block.thinking_signature:
                part["thoughtSignature"] = block.thinking_signature
            parts.append(part)
        elif isinstance(block, ToolCall):
            call: dict[str, Any] = {"name": block.name, "args": block.arguments}
            if block.id:
                call["id"] = block.id
            part = {"functionCall": call}
            if same and block.thought_signature:
                part["thoughtSignature"] = block.thought_signature
            parts.append(part)
    calls = [p for p in parts if "functionCall" in p]
    if calls and _is_gemini3(model) and not any("thoughtSignature" in p for p in calls):
        # Gemini 3 validates the first call of each step; a foreign history has none.
        calls[0]["thoughtSignature"] = DUMMY_THOUGHT_SIGNATURE
    return parts


def _tool_result_parts(model: Model, result: ToolResultMessage) -> list[dict[str, Any]]:
    text = content_text(result.content)
    images = [b for b in result.content if isinstance(b, ImageContent)]
    if not text and images:
        text = "(see the attached image)" if len(images) == 1 else "(see the attached images)"
    response: dict[str, Any] = {"name": result.tool_name, "response": {"error" if result.is_error else "output": text}}
    if result.tool_call_id:
        response["id"] = result.tool_call_id
    parts: list[dict[str, Any]] = [{"functionResponse": response}]
    if images and "image" in model.input:
        parts.extend(_image_part(image) for image in images)
    return parts


def convert_messages(model: Model, context: Context) -> list[dict[str, Any]]:
    """Wolli messages -> Gemini ``contents`` (roles user/model; tool results in user turns)."""
    contents: list[dict[str, Any]] = []
    last_was_tool_result = False
    for message in transform_messages(context.messages, model):
        if isinstance(message, ToolResultMessage):
            parts = _tool_result_parts(model, message)
            if last_was_tool_result and contents:
                contents[-1]["parts"].extend(parts)
            else:
                contents.append({"role": "user", "parts": parts})
            last_was_tool_result = True
            continue
        last_was_tool_result = False
        if isinstance(message, UserMessage):
            parts = _user_parts(model, message.content)
            role = "user"
        else:
            parts = _model_parts(model, message)
            role = "model"
        if parts:
            contents.append({"role": role, "parts": parts})
    return contents


# ============================================================================ streamed arguments

_PATH_TOKEN = re.compile(r"\.([^.\[\]]+)|\[(\d+)\]|\[\s*'((?:[^'\\]|\\.)*)'\s*\]|\[\s*\"((?:[^\"\\]|\\.)*)\"\s*\]")


def parse_json_path(path: str) -> list[str | int] | None:
    """``$.a.b[0]['c d']`` -> ``["a", "b", 0, "c d"]``; None when it is not understood."""
    text = path.strip()
    if not text.startswith("$"):
        return None
    keys: list[str | int] = []
    pos = 1
    while pos < len(text):
        match = _PATH_TOKEN.match(text, pos)
        if match is None:
            return None
        name, index, single, double = match.groups()
        if index is not None:
            keys.append(int(index))
        else:
            keys.append(name if name is not None else single if single is not None else double)
        pos = match.end()
    return keys


def _set_path(root: dict[str, Any], keys: list[str | int], value: Any, append: bool) -> None:
    node: Any = root
    for key, nxt in zip(keys, keys[1:], strict=False):
        empty: Any = [] if isinstance(nxt, int) else {}
        if isinstance(key, int):
            if not isinstance(node, list):
                return
            while len(node) <= key:
                node.append(None)
            if not isinstance(node[key], dict | list):
                node[key] = empty
            node = node[key]
        else:
            if not isinstance(node, dict):
                return
            if not isinstance(node.get(key), dict | list):
                node[key] = empty
            node = node[key]
    last = keys[-1]
    if isinstance(last, int):
        if not isinstance(node, list):
            return
        while len(node) <= last:
            node.append(None)
        current = node[last]
        node[last] = current + value if append and isinstance(current, str) else value
    elif isinstance(node, dict):
        current = node.get(last)
        node[last] = current + value if append and isinstance(current, str) else value


class StreamedCall:
    """A Vertex function call whose arguments arrive as ``partialArgs`` fragments.

    Keeps the argument object, plus a JSON text that grows by appending (fragments come in
    document order), so the builder can stream it like any provider's argument deltas.
    """

    def __init__(self, index: int) -> None:
        self.index = index
        self.args: dict[str, Any] = {}
        self.emitted = ""
        self.in_sync = True
        self._open_string: list[str | int] | None = None

    def feed(self, fragment: dict[str, Any]) -> str:
        """Apply one fragment; return the text to append to the streamed JSON ('' if none)."""
        keys = parse_json_path(str(fragment.get("jsonPath", "")))
        if not keys:
            return ""
        continues = bool(fragment.get("willContinue"))
        if "stringValue" in fragment:
            piece = str(fragment["stringValue"])
            if self._open_string == keys:
                _set_path(self.args, keys, piece, append=True)
                delta = json.dumps(piece, ensure_ascii=False)[1:-1] + ("" if continues else '"')
                self._open_string = keys if continues else None
                return self._emit_tail(delta)
            _set_path(self.args, keys, piece, append=False)
            self._open_string = keys if continues else None
        else:
            value: Any
            if "numberValue" in fragment:
                value = fragment["numberValue"]
            elif "boolValue" in fragment:
                value = bool(fragment["boolValue"])
            elif "nullValue" in fragment:
                value = None
            elif "structValue" in fragment:
                value = fragment["structValue"]
            elif "listValue" in fragment:
                value = fragment["listValue"]
            else:
                return ""
            _set_path(self.args, keys, value, append=False)
            self._open_string = None
        return self._emit(self._partial_text(keys))

    def finish(self) -> str:
        self._open_string = None
        return self._emit(json.dumps(self.args, ensure_ascii=False, separators=(",", ":")))

    def _partial_text(self, last: list[str | int]) -> str:
        """The JSON of ``args`` with the containers around the last value left open."""
        text = json.dumps(self.args, ensure_ascii=False, separators=(",", ":"))
        text = text[: len(text) - len(last)]  # one closer per container on the path
        if self._open_string is not None:
            text = text[:-1]
        return text

    def _emit_tail(self, delta: str) -> str:
        if not self.in_sync:
            return ""
        self.emitted += delta
        return delta

    def _emit(self, text: str) -> str:
        if not self.in_sync:
            return ""
        if not text.startswith(self.emitted):
            self.in_sync = False  # out-of-order fragment: the final arguments still come through
            return ""
        delta = text[len(self.emitted) :]
        self.emitted = text
        return delta


# ============================================================================ response


class StreamState:
    """Maps the parts of successive chunks onto builder blocks."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.current: tuple[str, int] | None = None  # ("text"|"thinking", content index)
        self.streamed: StreamedCall | None = None
        self.used_ids: set[str] = set()
        self.finish_reason: str | None = None
        self.finish_message: str | None = None

    # ------------------------------------------------------------------ blocks

    def close_current(self) -> None:
        if self.current is not None:
            kind, index = self.current
            if kind == "text":
                self.builder.text_end(index)
            else:
                self.builder.thinking_end(index)
            self.current = None
        self.close_streamed()

    def close_streamed(self) -> None:
        call = self.streamed
        if call is not None:
            self.streamed = None
            self.builder.toolcall_delta(call.index, call.finish())
            self.builder.toolcall_end(call.index, arguments=call.args)

    def _sign(self, kind: str, index: int, signature: str) -> None:
        block = self.builder.message.content[index]
        if kind == "thinking":
            self.builder.thinking_signature(index, signature, append=False)
        elif isinstance(block, TextContent):
            block.text_signature = signature

    def on_text(self, part: dict[str, Any]) -> None:
        text = part.get("text")
        text = text if isinstance(text, str) else ""
        signature = part.get("thoughtSignature") or None
        kind = "thinking" if part.get("thought") else "text"
        if not text and not signature:
            return
        if self.current is None or self.current[0] != kind:
            self.close_current()
            index = self.builder.thinking_start() if kind == "thinking" else self.builder.text_start()
            self.current = (kind, index)
        index = self.current[1]
        if kind == "thinking":
            self.builder.thinking_delta(index, text)
        else:
            self.builder.text_delta(index, text)
        if signature:
            self._sign(kind, index, signature)

    def _new_id(self, given: Any) -> str:
        if isinstance(given, str) and given:
            self.used_ids.add(given)
            return given
        while True:
            candidate = f"call_{uuid.uuid4().hex[:24]}"
            if candidate not in self.used_ids:
                self.used_ids.add(candidate)
                return candidate

    def on_function_call(self, part: dict[str, Any]) -> None:
        call = part["functionCall"] if isinstance(part.get("functionCall"), dict) else {}
        signature = part.get("thoughtSignature") or None
        name = call.get("name")
        if name:
            self.close_current()
            args = call.get("args")
            args = args if isinstance(args, dict) else {}
            index = self.builder.toolcall_start(self._new_id(call.get("id")), str(name), thought_signature=signature)
            if call.get("willContinue") or call.get("partialArgs"):
                self.streamed = StreamedCall(index)
                self.streamed.args.update(args)
            else:
                self.builder.toolcall_delta(index, json.dumps(args, ensure_ascii=False))
                self.builder.toolcall_end(index, arguments=args)
                return
        streamed = self.streamed
        if streamed is None:
            return  # a fragment without a call to belong to: nothing to attach it to
        if signature:
            block = self.builder.message.content[streamed.index]
            if isinstance(block, ToolCall) and not block.thought_signature:
                block.thought_signature = signature
        for fragment in call.get("partialArgs") or []:
            if isinstance(fragment, dict):
                self.builder.toolcall_delta(streamed.index, streamed.feed(fragment))
        if not call.get("willContinue"):
            self.close_streamed()  # ``{}`` or a last fragment without willContinue ends the call

    # ------------------------------------------------------------------ chunks

    def on_chunk(self, chunk: dict[str, Any]) -> str | None:
        """Apply one chunk; returns an error message when the chunk ends the stream badly."""
        builder = self.builder
        if isinstance(chunk.get("error"), dict | str):
            return _chunk_error(chunk["error"])
        response_id = chunk.get("responseId")
        if isinstance(response_id, str) and response_id and not builder.message.response_id:
            builder.message.response_id = response_id
        usage = chunk.get("usageMetadata")
        if isinstance(usage, dict):
            _apply_usage(builder, usage)
        candidates = chunk.get("candidates")
        if not isinstance(candidates, list) or not candidates:
            feedback = chunk.get("promptFeedback")
            if isinstance(feedback, dict) and feedback.get("blockReason"):
                detail = feedback.get("blockReasonMessage")
                return f"Gemini blocked the prompt ({feedback['blockReason']})" + (f": {detail}" if detail else "")
            return None
        candidate = next(
            (c for c in candidates if isinstance(c, dict) and c.get("index", 0) == 0),
            candidates[0] if isinstance(candidates[0], dict) else {},
        )
        content = candidate.get("content")
        parts = content.get("parts") if isinstance(content, dict) else None
        for part in parts if isinstance(parts, list) else []:
            if not isinstance(part, dict):
                continue
            if "functionCall" in part:
                self.on_function_call(part)
            elif "text" in part:
                self.on_text(part)
        reason = candidate.get("finishReason")
        if isinstance(reason, str) and reason:
            self.finish_reason = reason
            message = candidate.get("finishMessage")
            self.finish_message = message if isinstance(message, str) else None
        return None

    def finish(self) -> None:
        """End the message from the recorded finishReason."""
        self.close_current()
        reason = self.finish_reason or ""
        stop = _STOP_REASONS.get(reason)
        if stop is not None:
            self.builder.done(stop)
            return
        text = f"Gemini stopped the response: finishReason {reason}"
        if self.finish_message:
            text += f": {self.finish_message}"
        self.builder.fail(text)


def _chunk_error(error: Any) -> str:
    if isinstance(error, str):
        return f"Gemini stream error: {error}"
    message = error.get("message") or error.get("status") or "unknown error"
    code = error.get("code")
    return f"{code} {message}" if code else f"Gemini stream error: {message}"


def _count(usage: dict[str, Any], key: str) -> int:
    value = usage.get(key)
    return int(value) if isinstance(value, int | float) else 0


def _apply_usage(builder: MessageBuilder, metadata: dict[str, Any]) -> None:
    """Usage metadata is cumulative on every chunk: the latest one replaces the previous.

    Vertex sends ``usageMetadata`` without counts on early chunks; those are not reports.
    """
    if not any(key in metadata for key in ("promptTokenCount", "candidatesTokenCount", "totalTokenCount")):
        return
    prompt = _count(metadata, "promptTokenCount")
    cached = _count(metadata, "cachedContentTokenCount")
    output = _count(metadata, "candidatesTokenCount") + _count(metadata, "thoughtsTokenCount")
    usage = builder.message.usage
    usage.input = max(0, prompt - cached)
    usage.cache_read = cached
    usage.cache_write = 0
    usage.output = output
    usage.total_tokens = _count(metadata, "totalTokenCount") or (prompt + output)


# ============================================================================ entry point


async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    payload = await apply_payload_hook(build_payload(model, context, options), model, options)
    headers = merge_headers(
        {"x-goog-api-key": options.api_key} if options.api_key else None, model.headers, options.headers
    )
    state = StreamState(builder)
    try:
        async with open_stream(build_url(model), headers, payload, options) as response:
            builder.start()
            count = 0
            try:
                async for event in sse_events(response, options):
                    data = event.data.strip()
                    if not data:
                        continue
                    count += 1
                    try:
                        chunk = json.loads(data)
                    except ValueError as exc:
                        builder.fail(f"Gemini sent malformed JSON in stream chunk {count} ({exc}): {data[:200]}")
                        return
                    if not isinstance(chunk, dict):
                        builder.fail(f"Gemini sent an unexpected stream chunk {count}: {data[:200]}")
                        return
                    error = state.on_chunk(chunk)
                    if error is not None:
                        builder.fail(error)
                        return
            except ProviderConnectionError as exc:
                if state.finish_reason is None:
                    builder.fail(f"Gemini stream ended before completion: {exc}", kind="stream_cut")
                    return
    except (ProviderHTTPError, ProviderConnectionError) as exc:
        builder.fail_from(exc)
        return
    if state.finish_reason is None:
        builder.fail(
            "Gemini stream ended before completion: the connection closed without a finishReason.", kind="stream_cut"
        )
        return
    state.finish()
