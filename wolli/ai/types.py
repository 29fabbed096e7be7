"""Messages, content blocks, usage, models and provider stream events.

These are the JSON shapes of docs/sessions.md ("The file format") and docs/events.md. Python code uses snake_case attributes; JSON on
disk and on the wire uses camelCase (``to_json`` / ``model_dump(by_alias=True)``), following
the pi coding agent's format so existing tooling can read Wolli's sessions and streams.
They are plain slotted dataclasses (:mod:`wolli.base.wire`): cheap to import and to build once
per streamed token; ``Cls.model_validate(data)`` checks untrusted JSON.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from ..base.records import record
from ..base.wire import WireModel

if TYPE_CHECKING:
    from .abort import AbortSignal

StopReason = Literal["stop", "length", "toolUse", "error", "aborted"]
ThinkingLevel = Literal["off", "minimal", "low", "medium", "high", "xhigh"]
THINKING_LEVELS: tuple[ThinkingLevel, ...] = ("off", "minimal", "low", "medium", "high", "xhigh")
KnownApi = Literal[
    "anthropic-messages", "openai-completions", "openai-responses", "google-generative-ai", "faux"
]


def now_ms() -> int:
    return int(time.time() * 1000)


# ---------------------------------------------------------------------------- content


@record(slots=True, kw_only=True)
class TextContent(WireModel):
    type: Literal["text"] = "text"
    text: str
    # Provider-specific id for replay (OpenAI Responses message item id).
    text_signature: str | None = None


@record(slots=True, kw_only=True)
class ThinkingContent(WireModel):
    type: Literal["thinking"] = "thinking"
    thinking: str
    # Anthropic signature, OpenAI Responses reasoning item (JSON), Gemini thought signature.
    thinking_signature: str | None = None
    # Redacted thinking: ``thinking_signature`` carries the opaque payload to send back.
    redacted: bool | None = None


@record(slots=True, kw_only=True)
class ImageContent(WireModel):
    type: Literal["image"] = "image"
    data: str  # base64
    mime_type: str


@record(slots=True, kw_only=True)
class ToolCall(WireModel):
    type: Literal["toolCall"] = "toolCall"
    id: str
    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    # Gemini: the signature that must be echoed back on the same functionCall part.
    thought_signature: str | None = None


UserContentBlock = TextContent | ImageContent
AssistantContentBlock = TextContent | ThinkingContent | ToolCall
ToolResultContentBlock = TextContent | ImageContent


# ---------------------------------------------------------------------------- usage


@record(slots=True, kw_only=True)
class Cost(WireModel):
    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0
    total: float = 0.0


@record(slots=True, kw_only=True)
class Usage(WireModel):
    """Token counts of one response. ``input`` excludes cached tokens (read or written)."""

    input: int = 0
    output: int = 0
    cache_read: int = 0
    cache_write: int = 0
    total_tokens: int = 0
    cost: Cost = field(default_factory=Cost)


# ---------------------------------------------------------------------------- messages


@record(slots=True, kw_only=True)
class UserMessage(WireModel):
    role: Literal["user"] = "user"
    content: str | list[UserContentBlock]
    timestamp: int = field(default_factory=now_ms)


@record(slots=True, kw_only=True)
class AssistantMessage(WireModel):
    role: Literal["assistant"] = "assistant"
    content: list[AssistantContentBlock] = field(default_factory=list)
    api: str = ""
    provider: str = ""
    model: str = ""
    response_id: str | None = None
    usage: Usage = field(default_factory=Usage)
    stop_reason: StopReason = "stop"
    error_message: str | None = None
    # Why it failed (wolli.ai.failures.ErrorKind) and how long the server asked to wait.
    error_kind: str | None = None
    retry_after_ms: int | None = None
    timestamp: int = field(default_factory=now_ms)

    def text(self) -> str:
        """All text blocks joined: what print mode shows."""
        return "".join(b.text for b in self.content if isinstance(b, TextContent))

    def tool_calls(self) -> list[ToolCall]:
        return [b for b in self.content if isinstance(b, ToolCall)]


@record(slots=True, kw_only=True)
class ToolResultMessage(WireModel):
    role: Literal["toolResult"] = "toolResult"
    tool_call_id: str
    tool_name: str
    content: list[ToolResultContentBlock] = field(default_factory=list)
    details: Any = None
    is_error: bool = False
    timestamp: int = field(default_factory=now_ms)


Message = UserMessage | AssistantMessage | ToolResultMessage


def content_text(content: str | list[Any]) -> str:
    """The text of a user/tool-result content value (string or block list)."""
    if isinstance(content, str):
        return content
    return "\n".join(b.text for b in content if getattr(b, "type", None) == "text")


# ---------------------------------------------------------------------------- models


@record(slots=True, kw_only=True)
class ModelCost(WireModel):
    """Prices in dollars per million tokens."""

    input: float = 0.0
    output: float = 0.0
    cache_read: float = 0.0
    cache_write: float = 0.0


@record(slots=True, kw_only=True)
class Model(WireModel):
    id: str
    name: str = ""
    api: str
    provider: str
    base_url: str = ""
    reasoning: bool = False
    input: list[Literal["text", "image"]] = field(default_factory=lambda: list[Literal["text", "image"]](["text"]))
    cost: ModelCost = field(default_factory=ModelCost)
    context_window: int = 128_000
    max_tokens: int = 16_384
    headers: dict[str, str] | None = None
    # Provider quirks (see each provider module): e.g. {"maxTokensField": "max_tokens"}.
    compat: dict[str, Any] | None = None

    # "max_tokens" in model_fields_set: a limit written into models.json (see openai_completions)
    wire_track_fields_set = True

    def __post_init__(self) -> None:
        if not self.name:
            self.name = self.id

    @property
    def key(self) -> str:
        return f"{self.provider}/{self.id}"


@record(slots=True, kw_only=True)
class Tool(WireModel):
    """A tool as the model sees it: name, description and a JSON schema."""

    name: str
    description: str = ""
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})


@record(slots=True, kw_only=True)
class Context(WireModel):
    system_prompt: str | None = None
    messages: list[Message] = field(default_factory=list)
    tools: list[Tool] | None = None


PayloadHook = Callable[[dict[str, Any], Model], "dict[str, Any] | None | Awaitable[dict[str, Any] | None]"]


@record
class StreamOptions:
    """Per-call options. ``signal`` is a :class:`wolli.ai.abort.AbortSignal`."""

    api_key: str | None = None
    max_tokens: int | None = None
    temperature: float | None = None
    reasoning: ThinkingLevel | None = None
    signal: AbortSignal | None = None
    headers: dict[str, str] | None = None
    session_id: str | None = None
    # Called with the provider payload just before sending; a returned dict replaces it.
    on_payload: PayloadHook | None = None
    # Longest server-requested retry wait (seconds) we are willing to honour.
    max_retry_delay: float = 60.0
    max_retries: int = 3
    # First backoff step (seconds) when the server gives no retry hint; doubles each time.
    retry_base_delay: float = 1.0
    # Longest silence (seconds) between two pieces of a streamed answer before it counts as
    # stalled (a transient failure); None: the default of wolli.ai.http.
    idle_timeout: float | None = None
    # Shortest time (seconds) between two waits for more of a streamed answer; 0: read each
    # piece as it arrives. A front end drawing N frames a second sets 1/N, so a paced answer
    # is read and handled a frame's worth at a time (docs/performance.md).
    read_interval: float = 0.0
    # Per-API extra knobs (thinking budgets, tool_choice, ...).
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def coerce(cls, value: StreamOptions | dict[str, Any] | None) -> StreamOptions:
        if value is None:
            return cls()
        if isinstance(value, StreamOptions):
            return value
        known = {f for f in cls.__dataclass_fields__}
        unknown = set(value) - known
        if unknown:
            raise TypeError(f"unknown stream option(s): {', '.join(sorted(unknown))}")
        return cls(**value)


# ---------------------------------------------------------------------------- stream events


@record(slots=True, kw_only=True)
class _Event(WireModel):
    """Base of the provider stream events (built once per streamed token)."""


@record(slots=True, kw_only=True)
class StartEvent(_Event):
    type: Literal["start"] = "start"
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class TextStartEvent(_Event):
    type: Literal["text_start"] = "text_start"
    content_index: int
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class TextDeltaEvent(_Event):
    type: Literal["text_delta"] = "text_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class TextEndEvent(_Event):
    type: Literal["text_end"] = "text_end"
    content_index: int
    content: str
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class ThinkingStartEvent(_Event):
    type: Literal["thinking_start"] = "thinking_start"
    content_index: int
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class ThinkingDeltaEvent(_Event):
    type: Literal["thinking_delta"] = "thinking_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class ThinkingEndEvent(_Event):
    type: Literal["thinking_end"] = "thinking_end"
    content_index: int
    content: str
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class ToolCallStartEvent(_Event):
    type: Literal["toolcall_start"] = "toolcall_start"
    content_index: int
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class ToolCallDeltaEvent(_Event):
    type: Literal["toolcall_delta"] = "toolcall_delta"
    content_index: int
    delta: str
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class ToolCallEndEvent(_Event):
    type: Literal["toolcall_end"] = "toolcall_end"
    content_index: int
    tool_call: ToolCall
    partial: AssistantMessage


@record(slots=True, kw_only=True)
class DoneEvent(_Event):
    type: Literal["done"] = "done"
    reason: Literal["stop", "length", "toolUse"]
    message: AssistantMessage


@record(slots=True, kw_only=True)
class ErrorEvent(_Event):
    type: Literal["error"] = "error"
    reason: Literal["aborted", "error"]
    error: AssistantMessage


AssistantMessageEvent = (
    StartEvent
    | TextStartEvent
    | TextDeltaEvent
    | TextEndEvent
    | ThinkingStartEvent
    | ThinkingDeltaEvent
    | ThinkingEndEvent
    | ToolCallStartEvent
    | ToolCallDeltaEvent
    | ToolCallEndEvent
    | DoneEvent
    | ErrorEvent
)
