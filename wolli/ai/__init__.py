"""``wolli.ai``: talk to LLM providers through one streaming interface.

Importing this package loads only the pydantic types; provider modules (and httpx) load on
the first request, the model catalog on first lookup.
"""

from __future__ import annotations

from typing import Any

from .abort import AbortController, AbortError, AbortSignal
from .cost import calculate_cost
from .event_stream import AssistantMessageEventStream
from .overflow import is_context_overflow, is_context_overflow_text
from .stream import complete, get_api, known_apis, register_api, stream, unregister_api
from .transform import transform_messages
from .types import (
    THINKING_LEVELS,
    AssistantMessage,
    AssistantMessageEvent,
    Context,
    Cost,
    DoneEvent,
    ErrorEvent,
    ImageContent,
    Message,
    Model,
    ModelCost,
    StartEvent,
    StopReason,
    StreamOptions,
    TextContent,
    TextDeltaEvent,
    TextEndEvent,
    TextStartEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ThinkingEndEvent,
    ThinkingLevel,
    ThinkingStartEvent,
    Tool,
    ToolCall,
    ToolCallDeltaEvent,
    ToolCallEndEvent,
    ToolCallStartEvent,
    ToolResultMessage,
    Usage,
    UserMessage,
)

_LAZY = {
    "FauxProvider": "wolli.ai.providers.faux",
    "FauxResponse": "wolli.ai.providers.faux",
    "faux_text": "wolli.ai.providers.faux",
    "faux_thinking": "wolli.ai.providers.faux",
    "faux_tool_call": "wolli.ai.providers.faux",
    "faux_error": "wolli.ai.providers.faux",
    "faux_hang": "wolli.ai.providers.faux",
    "ModelRegistry": "wolli.ai.models",
    "AuthStorage": "wolli.ai.auth",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'wolli.ai' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)


__all__ = [
    "THINKING_LEVELS",
    "AbortController",
    "AbortError",
    "AbortSignal",
    "AssistantMessage",
    "AssistantMessageEvent",
    "AssistantMessageEventStream",
    "Context",
    "Cost",
    "DoneEvent",
    "ErrorEvent",
    "ImageContent",
    "Message",
    "Model",
    "ModelCost",
    "StartEvent",
    "StopReason",
    "StreamOptions",
    "TextContent",
    "TextDeltaEvent",
    "TextEndEvent",
    "TextStartEvent",
    "ThinkingContent",
    "ThinkingDeltaEvent",
    "ThinkingEndEvent",
    "ThinkingLevel",
    "ThinkingStartEvent",
    "Tool",
    "ToolCall",
    "ToolCallDeltaEvent",
    "ToolCallEndEvent",
    "ToolCallStartEvent",
    "ToolResultMessage",
    "Usage",
    "UserMessage",
    "calculate_cost",
    "complete",
    "get_api",
    "is_context_overflow",
    "is_context_overflow_text",
    "known_apis",
    "register_api",
    "stream",
    "transform_messages",
    "unregister_api",
    *_LAZY,
]
