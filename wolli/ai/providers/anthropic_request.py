"""Building the Anthropic Messages request: URL, headers and JSON body from a Context.

Kept apart from the stream reader because the two change for different reasons: the body
follows what the API accepts (block shapes, thinking settings, cache breakpoints), the
reader follows what it sends back. See fixtures/wire/wire.md §1.2.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from ..http import merge_headers
from ..transform import transform_messages
from ..types import (
    AssistantMessage,
    Context,
    ImageContent,
    Message,
    Model,
    StreamOptions,
    TextContent,
    ThinkingContent,
    Tool,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)

DEFAULT_BASE_URL = "https://api.anthropic.com"
API_VERSION = "2023-06-01"
BETA_FINE_GRAINED_TOOLS = "fine-grained-tool-streaming-2025-05-14"
BETA_INTERLEAVED_THINKING = "interleaved-thinking-2025-05-14"
# Sensible output cap when the caller gives none: large enough for real work, small enough
# that the API does not reserve a model's whole 64k/128k output window for every request.
DEFAULT_MAX_TOKENS = 32_000
MIN_THINKING_BUDGET = 1024
THINKING_BUDGETS: dict[str, int] = {
    "minimal": 1024,
    "low": 2048,
    "medium": 8192,
    "high": 16384,
    "xhigh": 32768,
}
# Adaptive-thinking models take an effort instead of a budget.
ADAPTIVE_EFFORT: dict[str, str] = {
    "minimal": "low",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "max",
}
# Room left for the visible answer when max_tokens has to grow past the thinking budget.
_ANSWER_ROOM = 4096
_IMAGE_OMITTED = "(image omitted: this model does not accept image input)"
_VALID_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
_INVALID_ID_CHARS = re.compile(r"[^a-zA-Z0-9_-]")
# claude-opus-4-6, claude-sonnet-4-6-20260101, claude-sonnet-5, anthropic.claude-opus-4-7-v1:0
_FAMILY_VERSION = re.compile(r"claude-(opus|sonnet)-(\d{1,2})(?:[-.](\d{1,2}))?(?!\d)")


# ---------------------------------------------------------------------------- model facts


def messages_url(model: Model) -> str:
    base = (model.base_url or DEFAULT_BASE_URL).rstrip("/")
    if base.endswith("/v1/messages"):
        return base
    if base.endswith("/v1"):
        return base + "/messages"
    return base + "/v1/messages"


def supports_adaptive_thinking(model: Model) -> bool:
    """Opus/Sonnet 4.6 and later think adaptively; ``compat["adaptiveThinking"]`` overrides."""
    compat = model.compat or {}
    if "adaptiveThinking" in compat:
        return bool(compat["adaptiveThinking"])
    match = _FAMILY_VERSION.search(model.id.lower())
    if not match:
        return False
    version = (int(match.group(2)), int(match.group(3) or 0))
    return version >= (4, 6)


def accepts_images(model: Model) -> bool:
    return "image" in model.input


def normalize_tool_id(tool_id: str, model: Model | None = None, message: AssistantMessage | None = None) -> str:
    """Make a foreign tool-call id match ``^[a-zA-Z0-9_-]{1,64}$`` (deterministically).

    Other APIs use ids such as ``call_abc|fc_123`` (OpenAI Responses) or base64 with ``+/=``;
    Anthropic rejects them. A hash suffix keeps truncated ids distinct.
    """
    if _VALID_ID.match(tool_id):
        return tool_id
    # Always add the hash: "a|b" and "a+b" must not both become "a_b".
    clean = _INVALID_ID_CHARS.sub("_", tool_id)[: 64 - 13]
    digest = hashlib.sha256(tool_id.encode("utf-8")).hexdigest()[:12]
    return f"{clean}_{digest}" if clean else f"toolu_{digest}"


# ---------------------------------------------------------------------------- content blocks


def _text_block(text: str) -> dict[str, Any] | None:
    # The API rejects empty and whitespace-only text blocks.
    return {"type": "text", "text": text} if text.strip() else None


def _image_block(image: ImageContent, model: Model) -> dict[str, Any]:
    if not accepts_images(model):
        return {"type": "text", "text": _IMAGE_OMITTED}
    return {
        "type": "image",
        "source": {"type": "base64", "media_type": image.mime_type, "data": image.data},
    }


def _user_blocks(content: str | list[Any], model: Model) -> list[dict[str, Any]]:
    if isinstance(content, str):
        block = _text_block(content)
        return [block] if block else []
    blocks: list[dict[str, Any]] = []
    for item in content:
        if isinstance(item, TextContent):
            block = _text_block(item.text)
            if block:
                blocks.append(block)
        elif isinstance(item, ImageContent):
            blocks.append(_image_block(item, model))
    return blocks


def _assistant_blocks(message: AssistantMessage) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for item in message.content:
        if isinstance(item, TextContent):
            block = _text_block(item.text)
            if block:
                blocks.append(block)
        elif isinstance(item, ThinkingContent):
            if item.redacted:
                if item.thinking_signature:
                    blocks.append({"type": "redacted_thinking", "data": item.thinking_signature})
            elif item.thinking_signature:
                # Sent back unchanged with its signature (thinking may be "" with display=omitted).
                blocks.append(
                    {"type": "thinking", "thinking": item.thinking, "signature": item.thinking_signature}
                )
            else:
                # Unsigned thinking (an interrupted stream) is not accepted as thinking: keep it as text.
                block = _text_block(item.thinking)
                if block:
                    blocks.append(block)
        elif isinstance(item, ToolCall):
            blocks.append({"type": "tool_use", "id": item.id, "name": item.name, "input": item.arguments})
    return blocks


def _tool_result_block(message: ToolResultMessage, model: Model) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    for item in message.content:
        if isinstance(item, TextContent):
            text = _text_block(item.text)
            if text:
                content.append(text)
        elif isinstance(item, ImageContent):
            content.append(_image_block(item, model))
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": message.tool_call_id}
    if content:
        block["content"] = content
    block["is_error"] = bool(message.is_error)
    return block


def convert_messages(messages: list[Message], model: Model) -> list[dict[str, Any]]:
    """Wire messages; consecutive same-role turns merge (tool results share one user turn)."""
    out: list[dict[str, Any]] = []

    def add(role: str, blocks: list[dict[str, Any]]) -> None:
        if not blocks:
            return
        if out and out[-1]["role"] == role:
            out[-1]["content"].extend(blocks)
        else:
            out.append({"role": role, "content": blocks})

    for message in messages:
        if isinstance(message, UserMessage):
            add("user", _user_blocks(message.content, model))
        elif isinstance(message, AssistantMessage):
            add("assistant", _assistant_blocks(message))
        elif isinstance(message, ToolResultMessage):
            add("user", [_tool_result_block(message, model)])
    return out


def _add_cache_breakpoint(messages: list[dict[str, Any]]) -> None:
    """Mark the last block of the last user turn so the whole prefix is cached next time."""
    for message in reversed(messages):
        if message["role"] == "user" and message["content"]:
            last = dict(message["content"][-1])
            last["cache_control"] = {"type": "ephemeral"}
            message["content"][-1] = last
            return


# ---------------------------------------------------------------------------- payload


def thinking_level(model: Model, options: StreamOptions) -> str | None:
    level = options.reasoning
    if not model.reasoning or level in (None, "off"):
        return None
    return level


def _budget(level: str, options: StreamOptions) -> int:
    custom = options.extra.get("thinking_budgets") if options.extra else None
    if isinstance(custom, dict) and isinstance(custom.get(level), int):
        return max(MIN_THINKING_BUDGET, int(custom[level]))
    return THINKING_BUDGETS.get(level, THINKING_BUDGETS["medium"])


def _tool_choice(value: Any) -> dict[str, Any] | None:
    if isinstance(value, dict):
        return value
    if value in ("auto", "any", "none"):
        return {"type": value}
    if isinstance(value, str) and value:
        return {"type": "tool", "name": value}
    return None


def _tool(tool: Tool) -> dict[str, Any]:
    out: dict[str, Any] = {"name": tool.name}
    if tool.description:
        out["description"] = tool.description
    out["input_schema"] = tool.parameters or {"type": "object", "properties": {}}
    return out


def build_payload(model: Model, context: Context, options: StreamOptions) -> dict[str, Any]:
    messages = convert_messages(transform_messages(context.messages, model, normalize_tool_id), model)
    _add_cache_breakpoint(messages)
    max_tokens = options.max_tokens or min(model.max_tokens or DEFAULT_MAX_TOKENS, DEFAULT_MAX_TOKENS)
    payload: dict[str, Any] = {"model": model.id, "max_tokens": max_tokens, "stream": True}
    if context.system_prompt and context.system_prompt.strip():
        payload["system"] = [
            {"type": "text", "text": context.system_prompt, "cache_control": {"type": "ephemeral"}}
        ]
    payload["messages"] = messages
    if context.tools:
        payload["tools"] = [_tool(tool) for tool in context.tools]
        choice = _tool_choice(options.extra.get("tool_choice")) if options.extra else None
        if choice:
            payload["tool_choice"] = choice

    level = thinking_level(model, options)
    if level is None:
        if options.temperature is not None:
            payload["temperature"] = options.temperature
    elif supports_adaptive_thinking(model):
        payload["thinking"] = {"type": "adaptive"}
        payload["output_config"] = {"effort": ADAPTIVE_EFFORT.get(level, "medium")}
    else:
        budget = _budget(level, options)
        if max_tokens <= budget:
            max_tokens = budget + _ANSWER_ROOM
            if model.max_tokens and model.max_tokens > MIN_THINKING_BUDGET:
                max_tokens = min(max_tokens, model.max_tokens)
        if max_tokens <= budget:  # the model's own output cap is below the budget: shrink it
            budget = max(MIN_THINKING_BUDGET, max_tokens - min(_ANSWER_ROOM, max_tokens // 2))
            max_tokens = max(max_tokens, budget + 1)
        payload["max_tokens"] = max_tokens
        payload["thinking"] = {"type": "enabled", "budget_tokens": budget}
    display = options.extra.get("thinking_display") if options.extra else None
    if display and "thinking" in payload:  # "summarized" | "omitted"
        payload["thinking"]["display"] = display
    return payload


def build_headers(model: Model, options: StreamOptions, payload: dict[str, Any]) -> dict[str, str]:
    """Defaults + ``model.headers`` + ``options.headers``; betas only where they do something."""
    betas: list[str] = []
    if payload.get("tools"):
        betas.append(BETA_FINE_GRAINED_TOOLS)
        thinking = payload.get("thinking")
        # Adaptive thinking interleaves by itself; the beta is for budget-style thinking.
        if isinstance(thinking, dict) and thinking.get("type") == "enabled":
            betas.append(BETA_INTERLEAVED_THINKING)
    defaults = {"anthropic-version": API_VERSION}
    if options.api_key:
        defaults["x-api-key"] = options.api_key
    headers = merge_headers(defaults, model.headers, options.headers)
    # Betas asked for by the model entry or the caller join ours instead of replacing them.
    for extra in (model.headers, options.headers):
        for key, value in (extra or {}).items():
            if key.lower() == "anthropic-beta":
                betas.extend(part.strip() for part in value.split(",") if part.strip())
                headers.pop(key, None)
    if betas:
        headers["anthropic-beta"] = ",".join(dict.fromkeys(betas))
    return headers
