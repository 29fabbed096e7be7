"""Session events as JSON records: the wire format of ``--mode json`` and ``--mode rpc``.

Names and fields follow pi's event stream (camelCase). One difference keeps the stream
linear in the answer's length: a ``message_update`` carries only its delta event
(``assistantMessageEvent`` without ``partial``), and ``message_end`` carries the whole
message. pi also repeats the whole partial message twice in every update, so an 8,000-token
answer costs hundreds of megabytes; ``full_updates=True`` brings that shape back for clients
written for it (``--full-updates``; ``docs/events.md`` says what it costs).
"""

from __future__ import annotations

from typing import Any

from ..agent.events import to_jsonable

_DELTAS = frozenset({"text_delta", "thinking_delta", "toolcall_delta"})


def assistant_event_record(event: Any, *, with_partial: bool = False) -> dict[str, Any]:
    """A provider stream event (``text_delta``...) as JSON, normally without ``partial``."""
    kind = event.type
    if kind in _DELTAS and not with_partial:  # the per-token path: no pydantic dump
        return {"type": kind, "contentIndex": event.content_index, "delta": event.delta}
    exclude = None if with_partial else {"partial", "message", "error"}
    return event.model_dump(mode="json", by_alias=True, exclude_none=True, exclude=exclude)


def event_record(event: Any, *, full_updates: bool = False) -> dict[str, Any]:
    """Any session event (or other value) as a JSON-ready dict."""
    kind = getattr(event, "type", None)
    if kind == "subagent_event":  # a child's event, tagged with the child (docs/subagents.md)
        return {"type": "subagent_event", "subagentId": event.subagent_id, "name": event.name,
                "toolCallId": event.tool_call_id, "event": event_record(event.event, full_updates=full_updates)}
    if kind == "message_update":
        record: dict[str, Any] = {"type": "message_update"}
        if full_updates:
            record["message"] = to_jsonable(event.message)
        record["assistantMessageEvent"] = assistant_event_record(event.assistant_message_event, with_partial=full_updates)
        return record
    return to_jsonable(event)
