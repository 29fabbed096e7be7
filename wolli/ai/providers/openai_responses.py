"""OpenAI Responses API (``POST {base}/responses``, streamed).

Requests are stateless (``store: false``): the whole conversation is sent as ``input``
items every turn, and reasoning is replayed from the encrypted reasoning item the server
returned (kept verbatim, as JSON, in the thinking block's ``thinking_signature``). A
function call has two ids, the ``call_id`` that its output must reference and the item id
(``fc_...``); both survive a session round trip as ``ToolCall.id = "{call_id}|{item_id}"``.

Wire reference: fixtures/wire/wire.md §3 (grammar), §5.2 (errors), §6 (usage).
"""

from __future__ import annotations

import hashlib
import json
import re
from typing import Any

from ..builder import MessageBuilder, parse_tool_arguments
from ..http import apply_payload_hook, merge_headers, open_stream, sse_events
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

DEFAULT_BASE_URL = "https://api.openai.com/v1"
_MAX_ID = 64
_UNSAFE_ID_CHARS = re.compile(r"[^A-Za-z0-9_-]")
_TERMINAL = ("response.completed", "response.incomplete", "response.failed")


# ---------------------------------------------------------------------------- ids


def _safe_id_part(value: str) -> str:
    """An id the API accepts: ``[A-Za-z0-9_-]``, at most 64 chars (long ids keep a hash)."""
    cleaned = _UNSAFE_ID_CHARS.sub("_", value)
    if len(cleaned) > _MAX_ID:
        digest = hashlib.sha1(value.encode("utf-8")).hexdigest()[:10]
        cleaned = f"{cleaned[: _MAX_ID - 11]}_{digest}"
    return cleaned or "call_" + hashlib.sha1(value.encode("utf-8")).hexdigest()[:10]


def split_tool_call_id(tool_call_id: str) -> tuple[str, str | None]:
    """``"call|fc_item"`` -> ``("call", "fc_item")``; a plain id has no item id."""
    call_id, sep, item_id = tool_call_id.partition("|")
    return call_id, (item_id or None) if sep else None


def normalize_id(tool_call_id: str, model: Model, message: AssistantMessage) -> str:
    """Rewrite another provider's tool-call id into one the Responses API accepts."""
    call_id, item_id = split_tool_call_id(tool_call_id)
    call_id = _safe_id_part(call_id)
    if item_id is None:
        return call_id
    item_id = _safe_id_part(item_id if item_id.startswith("fc_") else f"fc_{item_id}")
    return f"{call_id}|{item_id}"


# ---------------------------------------------------------------------------- request


def _image_url(image: ImageContent) -> str:
    return f"data:{image.mime_type};base64,{image.data}"


def _user_item(message: UserMessage, model: Model) -> dict[str, Any] | None:
    if isinstance(message.content, str):
        return {"role": "user", "content": message.content} if message.content else None
    parts: list[dict[str, Any]] = []
    dropped = 0
    for block in message.content:
        if isinstance(block, TextContent):
            if block.text:
                parts.append({"type": "input_text", "text": block.text})
        elif "image" in model.input:
            parts.append({"type": "input_image", "detail": "auto", "image_url": _image_url(block)})
        else:
            dropped += 1
    if dropped:
        parts.append(
            {"type": "input_text", "text": f"({dropped} image(s) omitted: {model.id} does not accept images)"}
        )
    return {"role": "user", "content": parts} if parts else None


def _tool_output(message: ToolResultMessage, model: Model) -> str | list[dict[str, Any]]:
    text = "\n".join(b.text for b in message.content if isinstance(b, TextContent))
    images = [b for b in message.content if isinstance(b, ImageContent)]
    if not text:
        text = "Tool failed without output" if message.is_error else ("" if images else "(no output)")
    if not images or "image" not in model.input:
        if images:
            text = (
                text + "\n" if text else ""
            ) + f"({len(images)} image(s) omitted: {model.id} does not accept images)"
        return text
    parts: list[dict[str, Any]] = [{"type": "input_text", "text": text}] if text else []
    parts += [{"type": "input_image", "detail": "auto", "image_url": _image_url(b)} for b in images]
    return parts


def _reasoning_item(block: ThinkingContent) -> dict[str, Any] | None:
    """The stored reasoning item, if it can be replayed statelessly."""
    if not block.thinking_signature:
        return None
    try:
        item = json.loads(block.thinking_signature)
    except ValueError:
        return None
    if not isinstance(item, dict) or item.get("type") != "reasoning":
        return None
    # With store:false the server cannot look an id up: only encrypted items replay.
    return item if item.get("encrypted_content") else None


def _assistant_items(message: AssistantMessage, model: Model) -> list[dict[str, Any]]:
    same = is_same_model(message, model)
    # A different model of this same API: its fc_ item ids are tied to reasoning items we no
    # longer send, and the API rejects such an item "without its required reasoning item".
    drop_item_ids = not same and message.api == model.api
    items: list[dict[str, Any]] = []
    for block in message.content:
        if isinstance(block, ThinkingContent):
            if same and (reasoning := _reasoning_item(block)) is not None:
                items.append(reasoning)
        elif isinstance(block, TextContent):
            if not block.text:
                continue
            item: dict[str, Any] = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "output_text", "text": block.text, "annotations": []}],
            }
            if same and block.text_signature:
                item["id"] = block.text_signature
                item["status"] = "completed"
            items.append(item)
        elif isinstance(block, ToolCall):
            call_id, item_id = split_tool_call_id(block.id)
            call: dict[str, Any] = {
                "type": "function_call",
                "call_id": _safe_id_part(call_id),
                "name": block.name,
                "arguments": json.dumps(block.arguments, ensure_ascii=False),
            }
            if item_id and item_id.startswith("fc_") and not drop_item_ids:
                call["id"] = item_id
            items.append(call)
    # A reasoning item must be followed by the output it produced, or the API answers 400.
    while items and items[-1].get("type") == "reasoning":
        items.pop()
    return items


def convert_input(context: Context, model: Model) -> list[dict[str, Any]]:
    """The conversation as Responses ``input`` items (system prompt first)."""
    items: list[dict[str, Any]] = []
    if context.system_prompt:
        role = "developer" if model.reasoning else "system"
        items.append({"role": role, "content": context.system_prompt})
    for message in transform_messages(list(context.messages), model, normalize_id):
        if isinstance(message, UserMessage):
            if (user := _user_item(message, model)) is not None:
                items.append(user)
        elif isinstance(message, AssistantMessage):
            items.extend(_assistant_items(message, model))
        else:
            items.append(
                {
                    "type": "function_call_output",
                    "call_id": _safe_id_part(split_tool_call_id(message.tool_call_id)[0]),
                    "output": _tool_output(message, model),
                }
            )
    return items


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    payload: dict[str, Any] = {
        "model": model.id,
        "input": convert_input(context, model),
        "stream": True,
        "store": False,
    }
    max_tokens = options.max_tokens or model.max_tokens
    if max_tokens:
        payload["max_output_tokens"] = max_tokens
    if options.temperature is not None and not model.reasoning:
        payload["temperature"] = options.temperature
    if options.session_id:
        payload["prompt_cache_key"] = options.session_id
    if context.tools:
        payload["tools"] = [
            {
                "type": "function",
                "name": tool.name,
                "description": tool.description,
                "parameters": tool.parameters,
                # The Responses API defaults to strict schemas, which most tool schemas are not.
                "strict": False,
            }
            for tool in context.tools
        ]
        if "tool_choice" in options.extra:
            payload["tool_choice"] = options.extra["tool_choice"]
    if model.reasoning:
        # Reasoning models think even when not asked to; keep their items replayable.
        payload["include"] = ["reasoning.encrypted_content"]
        level = options.reasoning
        if level and level != "off":
            effort_map = (model.compat or {}).get("reasoningEffortMap") or {}
            payload["reasoning"] = {
                "effort": effort_map.get(level, level),
                "summary": options.extra.get("reasoning_summary", "auto"),
            }
    return payload


def endpoint(model: Model) -> str:
    return (model.base_url or DEFAULT_BASE_URL).rstrip("/") + "/responses"


# ---------------------------------------------------------------------------- stream


def _error_text(error: Any, fallback: str, *, nested: bool = True) -> str:
    """``code: message`` from an error object (nested or flat event, or response.error)."""
    if not isinstance(error, dict):
        return str(error) if error else fallback
    message = str(error.get("message") or fallback)
    code = error.get("code") or (error.get("type") if nested else None)
    return f"{code}: {message}" if code and str(code) not in message else message


class _StreamState:
    """Maps output items (by item id, or output index for id-less events) to builder blocks."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.b = builder
        self.blocks: dict[str, tuple[str, int]] = {}
        self.by_index: dict[int, str] = {}
        self.arguments: dict[int, str] = {}

    def _key(self, event: dict[str, Any]) -> str | None:
        item_id = event.get("item_id")
        if isinstance(item_id, str) and item_id in self.blocks:
            return item_id
        index = event.get("output_index")
        return self.by_index.get(index) if isinstance(index, int) else None

    def _register(self, key: str, kind: str, index: int, output_index: Any) -> None:
        self.blocks[key] = (kind, index)
        if isinstance(output_index, int):
            self.by_index[output_index] = key

    def _block(self, event: dict[str, Any], kind: str) -> int | None:
        key = self._key(event)
        if key is None:
            # A delta for an item we never saw announced: open it now rather than lose text.
            if kind == "toolcall":
                return None
            key = str(event.get("item_id") or f"#{event.get('output_index')}")
            index = self.b.text_start() if kind == "text" else self.b.thinking_start()
            self._register(key, kind, index, event.get("output_index"))
            return index
        found_kind, index = self.blocks[key]
        return index if found_kind == kind else None

    # ------------------------------------------------------------------ items

    def item_added(self, event: dict[str, Any]) -> None:
        item = event.get("item") or {}
        kind = item.get("type")
        key = str(item.get("id") or f"#{event.get('output_index')}")
        if kind == "reasoning":
            self._register(key, "thinking", self.b.thinking_start(), event.get("output_index"))
        elif kind == "message":
            self._register(key, "text", self.b.text_start(), event.get("output_index"))
        elif kind == "function_call":
            call_id = item.get("call_id") or key
            tool_id = f"{call_id}|{item['id']}" if item.get("id") else str(call_id)
            index = self.b.toolcall_start(tool_id, str(item.get("name") or ""), item.get("arguments") or "")
            self._register(key, "toolcall", index, event.get("output_index"))

    def item_done(self, event: dict[str, Any]) -> None:
        item = event.get("item") or {}
        kind = item.get("type")
        key = str(item.get("id") or f"#{event.get('output_index')}")
        if key not in self.blocks and kind in ("reasoning", "message", "function_call"):
            self.item_added(event)  # a done without its added: still keep the item
        if key not in self.blocks:
            return
        _, index = self.blocks[key]
        if kind == "reasoning":
            texts = [s.get("text") for s in item.get("summary") or [] if isinstance(s, dict)]
            if not any(texts):  # raw reasoning (gpt-oss) instead of a summary
                texts = [c.get("text") for c in item.get("content") or [] if isinstance(c, dict)]
            self._complete(index, "\n\n".join(str(t) for t in texts if t), thinking=True)
            self.b.thinking_end(index, signature=json.dumps(item, ensure_ascii=False))
        elif kind == "message":
            parts = item.get("content") or []
            text = "".join(str(p.get("text") or p.get("refusal") or "") for p in parts if isinstance(p, dict))
            self._complete(index, text, thinking=False)
            self.b.text_end(index, signature=item.get("id"))
        elif kind == "function_call":
            final = item.get("arguments")
            if not isinstance(final, str):
                final = self.arguments.get(index, self.b.toolcall_json(index))
            if final and not self.b.toolcall_json(index):
                self.b.toolcall_delta(index, final)
            self.b.toolcall_end(index, arguments=parse_tool_arguments(final))

    def _complete(self, index: int, final: str, *, thinking: bool) -> None:
        """Make the block hold the item's final text when the deltas missed some of it."""
        block = self.b.message.content[index]
        current = block.thinking if isinstance(block, ThinkingContent) else getattr(block, "text", "")
        if not final or final == current:
            return
        if final.startswith(current):
            rest = final[len(current) :]
            (self.b.thinking_delta if thinking else self.b.text_delta)(index, rest)
        elif not current:
            (self.b.thinking_delta if thinking else self.b.text_delta)(index, final)

    # ------------------------------------------------------------------ deltas

    def text_delta(self, event: dict[str, Any]) -> None:
        index = self._block(event, "text")
        if index is not None:
            self.b.text_delta(index, str(event.get("delta") or ""))

    def thinking_delta(self, event: dict[str, Any]) -> None:
        index = self._block(event, "thinking")
        if index is not None:
            self.b.thinking_delta(index, str(event.get("delta") or ""))

    def summary_part_added(self, event: dict[str, Any]) -> None:
        index = self._block(event, "thinking")
        if index is None:
            return
        block = self.b.message.content[index]
        if isinstance(block, ThinkingContent) and block.thinking:
            self.b.thinking_delta(index, "\n\n")

    def arguments_delta(self, event: dict[str, Any]) -> None:
        index = self._block(event, "toolcall")
        if index is not None:
            self.b.toolcall_delta(index, str(event.get("delta") or ""))

    def arguments_done(self, event: dict[str, Any]) -> None:
        index = self._block(event, "toolcall")
        if index is not None and isinstance(event.get("arguments"), str):
            self.arguments[index] = event["arguments"]

    # ------------------------------------------------------------------ terminal

    def set_usage(self, response: dict[str, Any]) -> None:
        if response.get("id"):
            self.b.message.response_id = response["id"]
        usage = response.get("usage")
        if not isinstance(usage, dict):
            return
        details = usage.get("input_tokens_details") or {}
        cached = int(details.get("cached_tokens") or 0)
        written = int(details.get("cache_write_tokens") or 0)
        target = self.b.message.usage
        target.input = max(0, int(usage.get("input_tokens") or 0) - cached - written)
        target.cache_read = cached
        target.cache_write = written
        target.output = int(usage.get("output_tokens") or 0)
        target.total_tokens = int(usage.get("total_tokens") or 0) or (
            target.input + target.output + cached + written
        )

    def finish(self, kind: str, response: dict[str, Any]) -> None:
        self.set_usage(response)
        if kind == "response.completed":
            self.b.done("stop")
        elif kind == "response.incomplete":
            reason = (response.get("incomplete_details") or {}).get("reason")
            if reason == "content_filter":
                self.b.fail("OpenAI stopped the response: content_filter (blocked by its content filter).")
            else:
                self.b.done("length")
        else:
            self.b.fail(_error_text(response.get("error"), "OpenAI reported the response as failed."))



async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    payload = await apply_payload_hook(build_payload(model, context, options), model, options)
    headers = merge_headers(
        {"authorization": f"Bearer {options.api_key}"} if options.api_key else None,
        model.headers,
        options.headers,
    )
    async with open_stream(endpoint(model), headers, payload, options) as response:
        builder.start()
        state = _StreamState(builder)
        async for sse in sse_events(response, options):
            data = sse.data.strip()
            if not data or data == "[DONE]":
                continue
            try:
                event = json.loads(data)
            except ValueError as exc:
                builder.fail(f"OpenAI sent malformed JSON in a '{sse.event}' event: {exc}")
                return
            if not isinstance(event, dict):
                continue
            kind = str(event.get("type") or sse.event)
            if kind == "response.created":
                response_obj = event.get("response") or {}
                if response_obj.get("id"):
                    builder.message.response_id = response_obj["id"]
            elif kind == "response.output_item.added":
                state.item_added(event)
            elif kind == "response.output_item.done":
                state.item_done(event)
            elif kind in ("response.output_text.delta", "response.refusal.delta"):
                state.text_delta(event)
            elif kind in ("response.reasoning_summary_text.delta", "response.reasoning_text.delta"):
                state.thinking_delta(event)
            elif kind == "response.reasoning_summary_part.added":
                state.summary_part_added(event)
            elif kind == "response.function_call_arguments.delta":
                state.arguments_delta(event)
            elif kind == "response.function_call_arguments.done":
                state.arguments_done(event)
            elif kind in _TERMINAL:
                state.finish(kind, event.get("response") or {})
                return
            elif kind == "error" or sse.event == "error" or isinstance(event.get("error"), dict):
                nested = event.get("error")
                if isinstance(nested, dict):
                    builder.fail(_error_text(nested, "OpenAI reported an error in the stream."))
                else:
                    builder.fail(_error_text(event, "OpenAI reported an error in the stream.", nested=False))
                return
        builder.fail(
            "The OpenAI Responses stream ended before completion (no response.completed event).", kind="stream_cut"
        )
