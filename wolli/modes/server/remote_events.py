"""Records of a server's event stream back into the session events a screen draws.

The server sends each event as its JSON record (``runtime/event_records.py``); a client that
draws with the in-process widgets needs the event objects again. Streamed updates carry only
their delta (not the whole partial message), so the partial answer is rebuilt here from its
deltas, in place, as the agent loop builds it in-process: one append per token.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping
from typing import TypeAlias, cast

from ...agent import events as agent_events
from ...agent.messages import AgentMessage, parse_agent_message
from ...agent.tool import ToolResult
from ...ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    TextDeltaEvent,
    ThinkingContent,
    ThinkingDeltaEvent,
    ToolCall,
)
from ...runtime import events as session_events
from ...runtime.events import SessionEvent
from ...session.compaction import CompactionResult

JsonRecord: TypeAlias = Mapping[str, object]

# Events whose fields are plain values: built straight from the record's camelCase fields.
_PLAIN: dict[str, type] = {
    str(next(f.default for f in dataclasses.fields(cls) if f.name == "type")): cls
    for cls in (
        agent_events.AgentStartEvent, agent_events.TurnStartEvent, session_events.SessionStartEvent,
        session_events.SessionShutdownEvent, session_events.SessionTreeEvent, session_events.RunStateEvent,
        session_events.QueueUpdateEvent, session_events.CompactionStartEvent, session_events.AutoRetryStartEvent,
        session_events.AutoRetryEndEvent, session_events.ThinkingLevelSelectEvent, session_events.ModelSelectEvent,
        session_events.PermissionModeChangeEvent, session_events.ExtensionErrorEvent, session_events.NoticeEvent,
        session_events.SubagentStartEvent, session_events.SubagentEndEvent,
    )
}


_CAMEL_HUMP = re.compile(r"(?<=[a-z0-9])([A-Z])")


def to_snake(name: str) -> str:
    """A record's camelCase field name as the event's attribute (``toolCallId`` → ``tool_call_id``)."""
    return _CAMEL_HUMP.sub(r"_\1", name).lower()


def tool_result(value: object) -> ToolResult:
    """A tool result record (``{content, details, isError}``) as a :class:`ToolResult`."""
    if not isinstance(value, Mapping):
        return ToolResult(content=[TextContent(text=str(value))] if value is not None else [])
    blocks: list[TextContent | ImageContent] = []
    for block in value.get("content") or []:
        if isinstance(block, Mapping) and block.get("type") == "image":
            blocks.append(ImageContent.model_validate(block))
        elif isinstance(block, Mapping):
            blocks.append(TextContent(text=str(block.get("text", ""))))
    return ToolResult(content=blocks, details=value.get("details"), is_error=bool(value.get("isError")))


def _plain(cls: type, record: JsonRecord) -> SessionEvent:
    names = {f.name for f in dataclasses.fields(cls) if f.init}
    fields = {to_snake(key): value for key, value in record.items() if key != "type"}
    return cast("SessionEvent", cls(**{name: value for name, value in fields.items() if name in names}))


def parse_messages(raw: object) -> list[AgentMessage]:
    """A session's messages from their records (the wire codec's decoders, as a session file
    is read; a record that is not a message is skipped)."""
    if not isinstance(raw, list):
        return []
    return [parse_agent_message(dict(m)) for m in raw if isinstance(m, Mapping)]


class EventDecoder:
    """One per attached session: records in order in, event objects out."""

    def __init__(self) -> None:
        self.partial: AssistantMessage | None = None  # the answer being streamed

    def decode(self, record: JsonRecord) -> SessionEvent | None:
        """The event for ``record``; None for a record that is not a session event."""
        kind = record.get("type")
        if not isinstance(kind, str):
            return None
        if kind == "message_update":
            return self._update(record)
        if kind in ("message_start", "message_end"):
            message = record.get("message")
            if not isinstance(message, Mapping):
                return None
            parsed = parse_agent_message(dict(message))
            if kind == "message_start":
                self.partial = parsed if isinstance(parsed, AssistantMessage) else None
                return agent_events.MessageStartEvent(parsed)
            self.partial = None
            return agent_events.MessageEndEvent(parsed)
        if kind == "tool_execution_start":
            return agent_events.ToolExecutionStartEvent(str(record.get("toolCallId")), str(record.get("toolName")),
                                                        record.get("args"))
        if kind == "tool_execution_update":
            return agent_events.ToolExecutionUpdateEvent(str(record.get("toolCallId")), str(record.get("toolName")),
                                                         record.get("args"), tool_result(record.get("partialResult")))
        if kind == "tool_execution_end":
            return agent_events.ToolExecutionEndEvent(str(record.get("toolCallId")), str(record.get("toolName")),
                                                      tool_result(record.get("result")), bool(record.get("isError")))
        if kind == "agent_end":
            return agent_events.AgentEndEvent([])
        if kind == "compaction_end":
            result = record.get("result")
            summary = (CompactionResult(summary=str(result.get("summary", "")), first_kept_entry_id="",
                                        tokens_before=int(cast("int", result.get("tokensBefore") or 0)))
                       if isinstance(result, Mapping) else None)
            return session_events.CompactionEndEvent(
                cast("session_events.CompactionReason", record.get("reason", "manual")), summary,
                bool(record.get("aborted")), bool(record.get("willRetry")),
                cast("str | None", record.get("errorMessage")))
        if kind == "subagent_event":
            inner = record.get("event")
            child = EventDecoder().decode(inner) if isinstance(inner, Mapping) else None
            return session_events.SubagentEvent(str(record.get("subagentId")), str(record.get("name")),
                                                str(record.get("toolCallId")), child)
        cls = _PLAIN.get(kind)
        return _plain(cls, record) if cls is not None else None

    def _update(self, record: JsonRecord) -> SessionEvent | None:
        partial = self.partial
        delta = record.get("assistantMessageEvent")
        if partial is None or not isinstance(delta, Mapping):
            return None
        kind, index = delta.get("type"), delta.get("contentIndex")
        content = partial.content
        if kind == "text_start":
            content.append(TextContent(text=""))
        elif kind == "thinking_start":
            content.append(ThinkingContent(thinking=""))
        elif kind == "toolcall_start":
            content.append(ToolCall(id="", name=""))
        elif kind == "toolcall_end" and isinstance(index, int) and isinstance(delta.get("toolCall"), Mapping):
            if 0 <= index < len(content):
                content[index] = ToolCall.model_validate(delta["toolCall"])
        elif kind in ("text_delta", "thinking_delta") and isinstance(index, int) and 0 <= index < len(content):
            block, text = content[index], str(delta.get("delta", ""))
            if isinstance(block, TextContent):
                block.text += text
                return agent_events.MessageUpdateEvent(
                    partial, TextDeltaEvent(content_index=index, delta=text, partial=partial))
            if isinstance(block, ThinkingContent):
                block.thinking += text
                return agent_events.MessageUpdateEvent(
                    partial, ThinkingDeltaEvent(content_index=index, delta=text, partial=partial))
            return None
        else:
            return None
        return agent_events.MessageUpdateEvent(
            partial, TextDeltaEvent(content_index=index if isinstance(index, int) else 0, delta="",
                                                    partial=partial))
