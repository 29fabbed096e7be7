"""Events only handlers see: the points where extension code can change what happens.

Each is a mutable dataclass with snake_case attributes (``event.tool_name``,
``event.input``); the folding rules in :mod:`wolli.runtime.handlers.channel` say how the results of
several handlers combine. None of these reach observers: what they decide shows up in the
session event stream instead (a blocked tool call as an error tool result, a transformed
prompt as the user message...).
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

from ...ai.abort import AbortSignal
from ...base.records import record

if TYPE_CHECKING:
    from ...ai.types import Model
    from ..resources.system_prompt import BuildSystemPromptOptions

InputSource = Literal["interactive", "rpc", "extension"]
# How a message sent while the agent works is delivered: ``steer`` before its next step,
# ``follow_up`` when it would stop. One spelling in every mode (RPC's "followUp" and the TypeScript API's
# camelCase are taken at the edges and turned into this).
StreamingBehavior = Literal["steer", "follow_up"]
DeliverAs = Literal["steer", "follow_up", "next_turn"]
_SPELLINGS: dict[str, StreamingBehavior] = {"steer": "steer", "follow_up": "follow_up", "followUp": "follow_up"}


def streaming_behavior(value: object) -> StreamingBehavior | None:
    """``value`` as a :data:`StreamingBehavior` (None stays None); anything else is a
    ValueError naming the two choices."""
    if value is None:
        return None
    found = _SPELLINGS.get(value) if isinstance(value, str) else None
    if found is None:
        raise ValueError(f"streaming behavior must be 'steer' or 'follow_up', not {value!r}")
    return found


@record(slots=True)
class InputEvent:
    text: str
    images: list[Any]
    source: InputSource = "interactive"
    streaming_behavior: StreamingBehavior | None = None
    type: Literal["input"] = field(default="input", init=False)


@record(slots=True)
class BeforeAgentStartEvent:
    prompt: str
    images: list[Any]
    system_prompt: str
    system_prompt_options: BuildSystemPromptOptions
    type: Literal["before_agent_start"] = field(default="before_agent_start", init=False)


@record(slots=True)
class ContextEvent:
    """``messages`` is a deep copy: handlers may change it freely."""

    messages: list[Any]
    type: Literal["context"] = field(default="context", init=False)


@record(slots=True)
class BeforeProviderRequestEvent:
    payload: object
    model: Model | None = None
    type: Literal["before_provider_request"] = field(default="before_provider_request", init=False)


@record(slots=True)
class ToolCallEvent:
    """``input`` is the validated arguments as a dict; mutate it in place to patch them."""

    tool_name: str
    tool_call_id: str
    input: dict[str, Any]
    type: Literal["tool_call"] = field(default="tool_call", init=False)


@record(slots=True)
class ToolResultEvent:
    tool_name: str
    tool_call_id: str
    input: dict[str, Any]
    content: list[Any]
    details: Any
    is_error: bool
    type: Literal["tool_result"] = field(default="tool_result", init=False)


@record(slots=True)
class UserBashEvent:
    command: str
    exclude_from_context: bool
    cwd: str
    type: Literal["user_bash"] = field(default="user_bash", init=False)


@record(slots=True)
class SessionBeforeCompactEvent:
    preparation: object
    branch_entries: list[Any]
    custom_instructions: str | None
    signal: AbortSignal | None
    type: Literal["session_before_compact"] = field(default="session_before_compact", init=False)


def is_tool_call_event_type(tool_name: str, event: object) -> bool:
    """True when ``event`` is a ``tool_call`` event for ``tool_name`` (narrows in checkers)."""
    return getattr(event, "type", None) == "tool_call" and getattr(event, "tool_name", None) == tool_name


def is_bash_tool_result(event: object) -> bool:
    """True when ``event`` is a ``tool_result`` event of the built-in bash tool."""
    return getattr(event, "type", None) == "tool_result" and getattr(event, "tool_name", None) == "bash"
