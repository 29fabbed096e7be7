"""The ``anthropic-messages`` provider: Claude over the Messages API with SSE streaming.

``run`` builds the request (see :mod:`.anthropic_request`), POSTs it through the shared
retrying client and maps the wire events (wire.md §1.3) onto the :class:`MessageBuilder`.
The reader is deliberately tolerant: unknown block and delta types (server tools,
compaction, citations, whatever ships next) are skipped rather than fatal, a tool block the
stream never closes (output cut by ``max_tokens``) keeps its best-effort arguments, and
only ``message_stop`` counts as a complete answer.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from ..builder import MessageBuilder
from ..http import ProviderConnectionError, ProviderHTTPError, apply_payload_hook, open_stream, sse_events
from ..types import Context, Model, StreamOptions
from .anthropic_request import build_headers, build_payload, messages_url

# Wire stop reasons that end a turn normally. ``pause_turn`` (a server-tool loop paused)
# ends this response; the caller may simply continue the conversation.
STOP_REASONS: dict[str, str] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "pause_turn": "stop",
    "max_tokens": "length",
    "tool_use": "toolUse",
}
INCOMPLETE = "Anthropic stream ended before completion (no message_stop event); the answer may be cut off."
# Anthropic's in-stream ``error.type`` values and the failure kinds they are (wolli.ai.failures).
_STREAM_ERROR_KINDS = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limited",
    "api_error": "server_error",
    "timeout_error": "timeout",
    "authentication_error": "auth",
    "permission_error": "auth",
    "invalid_request_error": "invalid_request",
    "request_too_large": "context_overflow",
}


@dataclass(slots=True)
class _Block:
    kind: str  # text | thinking | tool
    index: int  # index in the builder's message content
    initial_input: dict[str, Any] | None = None


class AnthropicStreamReader:
    """Maps decoded SSE events onto a builder. ``feed`` returns False once the stream is over."""

    def __init__(self, builder: MessageBuilder) -> None:
        self.builder = builder
        self.blocks: dict[int, _Block] = {}
        self.stop_reason: str | None = None
        self.stop_details: Any = None

    # ------------------------------------------------------------------ dispatch

    def feed(self, event_name: str, data: str) -> bool:
        if self.builder.finished:
            return False
        if event_name == "ping" or not data.strip() or data.strip() == "[DONE]":
            return True
        try:
            payload = json.loads(data)
        except ValueError as exc:
            self.builder.fail(
                f"Anthropic sent malformed JSON in a '{event_name}' event ({exc}); the response is incomplete."
            )
            return False
        if not isinstance(payload, dict):
            return True
        kind = payload.get("type") or event_name
        handler = _HANDLERS.get(kind)
        if handler is None:  # unknown event types are new features, not errors
            return True
        return handler(self, payload)

    def finish(self) -> None:
        """The connection closed: anything short of ``message_stop`` is an incomplete answer."""
        if not self.builder.finished:
            self.builder.fail(INCOMPLETE)

    # ------------------------------------------------------------------ message events

    def _message_start(self, payload: dict[str, Any]) -> bool:
        self.builder.start()
        message = payload.get("message")
        if isinstance(message, dict):
            if isinstance(message.get("id"), str):
                self.builder.message.response_id = message["id"]
            self._apply_usage(message.get("usage"))
        return True

    def _message_delta(self, payload: dict[str, Any]) -> bool:
        delta = payload.get("delta")
        if isinstance(delta, dict):
            if delta.get("stop_reason"):
                self.stop_reason = str(delta["stop_reason"])
            if delta.get("stop_details") is not None:
                self.stop_details = delta["stop_details"]
        # message_delta usage is cumulative: its values replace those from message_start.
        self._apply_usage(payload.get("usage"))
        return True

    def _message_stop(self, payload: dict[str, Any]) -> bool:
        reason = self.stop_reason
        if reason == "refusal":
            self.builder.fail(self._refusal_message())
        elif reason == "model_context_window_exceeded":
            self.builder.fail(
                "The model's context window was exceeded while answering "
                "(stop reason model_context_window_exceeded); compact the conversation and retry."
            )
        else:
            self.builder.done(STOP_REASONS.get(reason or "", "stop"))
        return False

    def _error(self, payload: dict[str, Any]) -> bool:
        error = payload.get("error")
        message = None
        kind = None
        if isinstance(error, dict):
            message = error.get("message") or error.get("type")
            kind = _STREAM_ERROR_KINDS.get(str(error.get("type")))
        elif isinstance(error, str):
            message = error
        text = str(message or payload.get("message") or "Anthropic reported an error in the stream")
        self.builder.fail(text, kind=kind)
        return False

    def _refusal_message(self) -> str:
        text = "The model refused to answer this request (stop reason refusal)"
        details = self.stop_details if isinstance(self.stop_details, dict) else {}
        if details.get("explanation"):
            text += f": {details['explanation']}"
        if details.get("category"):
            text += f" [category: {details['category']}]"
        return text

    def _apply_usage(self, usage: Any) -> None:
        if not isinstance(usage, dict):
            return
        target = self.builder.message.usage
        for wire, attr in (
            ("input_tokens", "input"),
            ("output_tokens", "output"),
            ("cache_read_input_tokens", "cache_read"),
            ("cache_creation_input_tokens", "cache_write"),
        ):
            value = usage.get(wire)
            if isinstance(value, int | float):
                setattr(target, attr, int(value))
        target.total_tokens = target.input + target.output + target.cache_read + target.cache_write

    # ------------------------------------------------------------------ content blocks

    def _block_start(self, payload: dict[str, Any]) -> bool:
        wire_index = payload.get("index")
        block = payload.get("content_block")
        if not isinstance(wire_index, int) or not isinstance(block, dict):
            return True
        previous = self.blocks.pop(wire_index, None)
        if previous is not None:  # a repeated index: close the old block first
            self._end(previous)
        builder = self.builder
        kind = block.get("type")
        if kind == "text":
            self.blocks[wire_index] = _Block("text", builder.text_start(text=str(block.get("text") or "")))
        elif kind == "thinking":
            index = builder.thinking_start(
                text=str(block.get("thinking") or ""), signature=block.get("signature") or None
            )
            self.blocks[wire_index] = _Block("thinking", index)
        elif kind == "redacted_thinking":
            # The opaque payload travels as the signature; it must be sent back unchanged.
            index = builder.thinking_start(signature=str(block.get("data") or ""), redacted=True)
            self.blocks[wire_index] = _Block("thinking", index)
        elif kind == "tool_use":
            index = builder.toolcall_start(str(block.get("id") or ""), str(block.get("name") or ""))
            initial = block.get("input")
            self.blocks[wire_index] = _Block("tool", index, initial if isinstance(initial, dict) and initial else None)
        # server_tool_use, web_search_tool_result, compaction, ...: run by the server, skipped.
        return True

    def _block_delta(self, payload: dict[str, Any]) -> bool:
        block = self.blocks.get(payload.get("index"))  # type: ignore[arg-type]
        delta = payload.get("delta")
        if block is None or not isinstance(delta, dict):
            return True
        kind = delta.get("type")
        builder = self.builder
        if kind == "text_delta" and block.kind == "text":
            builder.text_delta(block.index, str(delta.get("text") or ""))
        elif kind == "thinking_delta" and block.kind == "thinking":
            builder.thinking_delta(block.index, str(delta.get("thinking") or ""))
        elif kind == "signature_delta" and block.kind == "thinking":
            builder.thinking_signature(block.index, str(delta.get("signature") or ""))
        elif kind == "input_json_delta" and block.kind == "tool":
            builder.toolcall_delta(block.index, str(delta.get("partial_json") or ""))
        # citations_delta and unknown deltas carry nothing the message model holds.
        return True

    def _block_stop(self, payload: dict[str, Any]) -> bool:
        block = self.blocks.pop(payload.get("index"), None)  # type: ignore[arg-type]
        if block is not None:
            self._end(block)
        return True

    def _end(self, block: _Block) -> None:
        builder = self.builder
        if block.kind == "text":
            builder.text_end(block.index)
        elif block.kind == "thinking":
            builder.thinking_end(block.index)
        else:
            arguments = None
            if block.initial_input and not builder.toolcall_json(block.index).strip():
                arguments = block.initial_input
            builder.toolcall_end(block.index, arguments)


_HANDLERS = {
    "message_start": AnthropicStreamReader._message_start,
    "message_delta": AnthropicStreamReader._message_delta,
    "message_stop": AnthropicStreamReader._message_stop,
    "content_block_start": AnthropicStreamReader._block_start,
    "content_block_delta": AnthropicStreamReader._block_delta,
    "content_block_stop": AnthropicStreamReader._block_stop,
    "error": AnthropicStreamReader._error,
}



async def run(model: Model, context: Context, options: StreamOptions, builder: MessageBuilder) -> None:
    """Stream one Claude answer into ``builder``; every failure ends as an error event."""
    try:
        payload = build_payload(model, context, options)
    except Exception as exc:  # bad history or options: say so instead of raising
        builder.fail(f"Could not build the Anthropic request: {type(exc).__name__}: {exc}")
        return
    payload = await apply_payload_hook(payload, model, options)
    headers = build_headers(model, options, payload)
    streaming = False
    try:
        async with open_stream(messages_url(model), headers, payload, options) as response:
            streaming = True
            builder.start()
            reader = AnthropicStreamReader(builder)
            async for event in sse_events(response, options):
                if not reader.feed(event.event, event.data):
                    break
            reader.finish()
    except ProviderHTTPError as exc:
        builder.fail_from(exc)
    except ProviderConnectionError as exc:
        if streaming:
            builder.fail(f"Anthropic stream ended before completion: {exc}", kind="stream_cut")
        else:
            builder.fail_from(exc)
