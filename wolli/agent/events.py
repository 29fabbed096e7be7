"""Agent events: the names extensions, json mode and rpc mode all see (docs/events.md).

Plain dataclasses (cheap to build once per streamed token); :func:`to_jsonable` renders any
event, message or tool result as camelCase JSON for the json and rpc modes.
"""

from __future__ import annotations

import dataclasses
from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from ..ai.types import AssistantMessage, AssistantMessageEvent, ToolResultMessage, now_ms
from ..base.records import record
from ..base.wire import WireModel, to_camel
from .tool import ToolResult

if TYPE_CHECKING:
    from .messages import AgentMessage


@record(slots=True)
class AgentStartEvent:
    type: Literal["agent_start"] = field(default="agent_start", init=False)


@record(slots=True)
class AgentEndEvent:
    messages: list[Any]
    type: Literal["agent_end"] = field(default="agent_end", init=False)


@record(slots=True)
class TurnStartEvent:
    turn_index: int
    timestamp: int = field(default_factory=now_ms)
    type: Literal["turn_start"] = field(default="turn_start", init=False)


@record(slots=True)
class TurnEndEvent:
    turn_index: int
    message: AssistantMessage
    tool_results: list[ToolResultMessage]
    type: Literal["turn_end"] = field(default="turn_end", init=False)


@record(slots=True)
class MessageStartEvent:
    message: AgentMessage
    type: Literal["message_start"] = field(default="message_start", init=False)


@record(slots=True)
class MessageUpdateEvent:
    message: AgentMessage
    assistant_message_event: AssistantMessageEvent
    type: Literal["message_update"] = field(default="message_update", init=False)


@record(slots=True)
class MessageEndEvent:
    message: AgentMessage
    type: Literal["message_end"] = field(default="message_end", init=False)


@record(slots=True)
class ToolExecutionStartEvent:
    tool_call_id: str
    tool_name: str
    args: object
    type: Literal["tool_execution_start"] = field(default="tool_execution_start", init=False)


@record(slots=True)
class ToolExecutionUpdateEvent:
    tool_call_id: str
    tool_name: str
    args: object
    partial_result: ToolResult
    type: Literal["tool_execution_update"] = field(default="tool_execution_update", init=False)


@record(slots=True)
class ToolExecutionEndEvent:
    tool_call_id: str
    tool_name: str
    result: ToolResult
    is_error: bool
    type: Literal["tool_execution_end"] = field(default="tool_execution_end", init=False)


AgentEvent = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
)


def to_jsonable(value: object) -> Any:
    """camelCase JSON-ready data for events, messages, tool results and plain values."""
    if isinstance(value, WireModel):
        return value.to_json_dict()
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        out: dict[str, Any] = {}
        for f in dataclasses.fields(value):
            item = getattr(value, f.name)
            if item is None:
                continue
            out[to_camel(f.name)] = to_jsonable(item)
        if "type" in out:  # the discriminator first reads better in a JSON line
            out = {"type": out.pop("type"), **out}
        return out
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    if hasattr(value, "model_dump"):  # a pydantic model (tool parameters, an extension's own)
        return value.model_dump(mode="json", by_alias=True, exclude_none=True)
    return str(value)
