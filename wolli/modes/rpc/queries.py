"""Answers to the read-only RPC commands, in pi's field names.

Each function reads the live session and returns JSON-ready data; none of them awaits, so
they are answered at once even while a run streams (``get_state`` is on the hot path of
clients that poll it: it dumps the model once per model, not once per call).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ...agent.events import to_jsonable
from ...ai.cost import UsageTotals
from ...ai.types import Model, content_text

if TYPE_CHECKING:
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession

_model_cache: dict[int, tuple[Model, dict[str, Any]]] = {}


def model_record(model: Model | None) -> dict[str, Any] | None:
    """A model as pi's ``Model`` object; ``headers`` are left out (they may hold keys)."""
    if model is None:
        return None
    cached = _model_cache.get(id(model))
    if cached is not None and cached[0] is model:
        return dict(cached[1])
    record = model.model_dump(mode="json", by_alias=True, exclude_none=True, exclude={"headers"})
    _model_cache[id(model)] = (model, record)
    return dict(record)


def session_state(session: LiveSession) -> dict[str, Any]:
    settings = session.settings
    state: dict[str, Any] = {
        "model": model_record(session.model),
        "thinkingLevel": session.thinking_level,
        "isStreaming": session.is_streaming,
        "isCompacting": session.run_state == "compacting",
        "steeringMode": settings.get("steeringMode"),
        "followUpMode": settings.get("followUpMode"),
        "sessionFile": session.session_file,
        "sessionId": session.session_id,
        "autoCompactionEnabled": bool(settings.get("compaction.enabled")),
        "autoRetryEnabled": bool(settings.get("retry.enabled")),
        "messageCount": session.older_messages + len(session.messages),  # a tail-first open's too
        "pendingMessageCount": session.pending_message_count,
        "runState": session.run_state,
        "permissionMode": session.permissions.mode,
    }
    name = session.session_manager.get_session_name()
    if name:
        state["sessionName"] = name
    return state


def session_stats(session: LiveSession) -> dict[str, Any]:
    """Counts and token/cost totals over every message of the session file (compacted ones too)."""
    counts = {"user": 0, "assistant": 0, "toolResult": 0}
    tool_calls = total = 0
    totals = UsageTotals()
    for entry in session.session_manager.iter_entries("message"):  # built one at a time, as counted
        message = entry.message
        role = getattr(message, "role", None)
        total += 1
        if role in counts:
            counts[role] += 1
        if role == "assistant":
            tool_calls += sum(1 for block in message.content if getattr(block, "type", None) == "toolCall")
            totals.add(message.usage)
    usage_now = session.context_usage()
    stats: dict[str, Any] = {
        "sessionFile": session.session_file,
        "sessionId": session.session_id,
        "userMessages": counts["user"],
        "assistantMessages": counts["assistant"],
        "toolCalls": tool_calls,
        "toolResults": counts["toolResult"],
        "totalMessages": total,
        "tokens": {"input": totals.input, "output": totals.output, "cacheRead": totals.cache_read,
                   "cacheWrite": totals.cache_write, "total": totals.tokens},
        "cost": totals.cost,
    }
    if usage_now["context_window"]:
        stats["contextUsage"] = {"tokens": usage_now["tokens"], "contextWindow": usage_now["context_window"],
                                 "percent": usage_now["percent"]}
    return stats


def fork_messages(session: LiveSession) -> list[dict[str, Any]]:
    """The user messages of the current branch a fork can start from."""
    out = []
    for entry in session.session_manager.get_branch():
        if getattr(entry, "type", None) == "message" and getattr(entry.message, "role", None) == "user":
            out.append({"entryId": entry.id, "text": content_text(entry.message.content)})
    return out


def last_assistant_text(session: LiveSession) -> str | None:
    for message in reversed(session.messages):
        if getattr(message, "role", None) == "assistant":
            text = message.text()
            return text if text else None
    return None


def messages(session: LiveSession, start: int = 0, end: int | None = None) -> list[Any]:
    """The context's messages ``[start:end]`` as JSON (a client pages a long history)."""
    return [to_jsonable(m) for m in session.messages[start:end]]


def history_tail_start(session: LiveSession, limit: int) -> int:
    """Where the last ``limit`` messages begin, moved back past tool results so the tail never
    opens with a result whose call is in the part the client has not been sent yet."""
    found = session.messages
    start = max(0, len(found) - limit)
    while 0 < start < len(found) and getattr(found[start], "role", None) == "toolResult":
        start -= 1
    return start


def commands(host: AgentHost, session: LiveSession) -> list[dict[str, Any]]:
    """Extension commands, prompt templates, skills: what ``prompt`` accepts as ``/name``."""
    out = []
    for info in host.slash_commands(session):
        record: dict[str, Any] = {"name": info.name, "source": info.source}
        if info.description:
            record["description"] = info.description
        where = info.source_info or {}
        if where.get("path"):
            record["path"] = str(where["path"])
        if info.source != "extension" and where.get("scope"):
            record["location"] = where["scope"]
        out.append(record)
    return out
