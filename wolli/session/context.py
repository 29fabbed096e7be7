"""What the model sees for a leaf: the messages of the root..leaf path, after compaction.

The latest compaction on the path stands in for everything before its first kept entry:
its summary goes first, then the kept entries up to the compaction, then everything after
it. Branch summaries and custom messages become agent messages (``convert_to_llm`` turns
them into user messages at request time); ``custom`` state, labels, names and tags are
bookkeeping and never reach the model. Model and thinking-level changes on the path give
the model and level to restore when the session is resumed.
"""

from __future__ import annotations

import datetime as _dt
from dataclasses import field
from typing import TYPE_CHECKING, Any

from ..agent.messages import BranchSummaryMessage, CompactionSummaryMessage, CustomMessage
from ..ai.types import TextContent, ToolResultMessage
from ..base.records import record
from .entries import (
    BranchSummaryEntry,
    CompactionEntry,
    CustomMessageEntry,
    MessageEntry,
    ModelChangeEntry,
    ThinkingLevelChangeEntry,
)

if TYPE_CHECKING:
    from .entries import SessionEntry


@record
class SessionContext:
    messages: list[Any] = field(default_factory=list)
    thinking_level: str | None = None
    # (provider, model_id) to restore, or None when the path never named a model.
    model: tuple[str, str] | None = None
    # Built from the end only (``SessionManager.context_tail``): how many messages of the
    # whole context come before ``messages``, counted from the file's index.
    older_messages: int = 0


def iso_to_ms(timestamp: str | None) -> int:
    """Entry timestamps are ISO strings; message timestamps are epoch milliseconds."""
    if not timestamp:
        return 0
    try:
        parsed = _dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return 0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=_dt.UTC)
    return int(parsed.timestamp() * 1000)


def entry_to_message(entry: SessionEntry) -> object:
    """The agent message an entry contributes to the context, or None."""
    if isinstance(entry, MessageEntry):
        return entry.message
    if isinstance(entry, CustomMessageEntry):
        return CustomMessage(
            custom_type=entry.custom_type,
            content=entry.content,
            display=entry.display,
            details=entry.details,
            timestamp=iso_to_ms(entry.timestamp),
        )
    if isinstance(entry, BranchSummaryEntry):
        return BranchSummaryMessage(summary=entry.summary, from_id=entry.from_id, timestamp=iso_to_ms(entry.timestamp))
    if isinstance(entry, CompactionEntry):
        return CompactionSummaryMessage(
            summary=entry.summary, tokens_before=entry.tokens_before, timestamp=iso_to_ms(entry.timestamp)
        )
    return None


# Entries besides messages that put something into the context.
_CONTRIBUTING = frozenset({CustomMessageEntry, BranchSummaryEntry})


def build_context(branch: list[Any]) -> SessionContext:
    """Build the context from a root..leaf list of entries (``SessionManager.get_branch``)."""
    context = SessionContext()
    compaction_index: int | None = None
    # Messages first: they are nearly all of a long branch.
    for index, entry in enumerate(branch):
        kind = type(entry)  # entry classes are final: an identity test per entry is enough
        if kind is MessageEntry:
            message = entry.message
            if getattr(message, "role", None) == "assistant":
                # Sessions written without model_change entries still resume on the right model.
                provider, model_id = message.provider, message.model
                if provider and model_id:
                    context.model = (provider, model_id)
        elif kind is ThinkingLevelChangeEntry:
            context.thinking_level = entry.thinking_level
        elif kind is ModelChangeEntry:
            context.model = (entry.provider, entry.model_id)
        elif kind is CompactionEntry:
            compaction_index = index

    if compaction_index is None:
        selected = branch
    else:
        compaction = branch[compaction_index]
        context.messages.append(
            CompactionSummaryMessage(
                summary=compaction.summary,
                tokens_before=compaction.tokens_before,
                timestamp=iso_to_ms(compaction.timestamp),
            )
        )
        before = branch[:compaction_index]
        kept_from = next((i for i, e in enumerate(before) if e.id == compaction.first_kept_entry_id), None)
        kept = before[kept_from:] if kept_from is not None else []
        selected = kept + branch[compaction_index + 1 :]

    messages = context.messages
    for entry in selected:
        kind = type(entry)
        if kind is MessageEntry:
            messages.append(entry.message)
        elif kind in _CONTRIBUTING:  # a compaction: only the latest summary counts (above)
            message = entry_to_message(entry)
            if message is not None:
                messages.append(message)
    context.messages = close_dangling_tool_calls(messages)
    return context


# The tool may have run in part or in full (a file written, a command started): say so, so
# the model checks before repeating it.
INTERRUPTED_TEXT = (
    "The tool did not finish: Wolli stopped before it returned a result. "
    "It may have run in part or in full; check its effects before running it again."
)


def interrupted_result(call_id: str, tool_name: str) -> ToolResultMessage:
    """The error result that stands in for a tool call that never got one."""
    return ToolResultMessage(
        tool_call_id=call_id, tool_name=tool_name, content=[TextContent(text=INTERRUPTED_TEXT)], is_error=True
    )


def close_dangling_tool_calls(messages: list[Any]) -> list[Any]:
    """``messages`` where every tool call is followed by its result.

    A run killed mid-tool (or a hand-edited file) leaves calls without results, and every
    provider rejects that. The missing results are filled in right after the run of results
    that follows the call. Returns ``messages`` itself when nothing is missing (the usual case).
    """
    out: list[Any] | None = None
    open_calls: list[Any] = []
    for index, message in enumerate(messages):
        role = getattr(message, "role", None)
        if role == "toolResult":
            open_calls = [c for c in open_calls if c.id != message.tool_call_id]
        elif open_calls:
            out = out if out is not None else list(messages[:index])
            out.extend(interrupted_result(c.id, c.name) for c in open_calls)
            open_calls = []
        if out is not None:
            out.append(message)
        if role == "assistant":
            open_calls = list(message.tool_calls())
    if open_calls:
        out = out if out is not None else list(messages)
        out.extend(interrupted_result(c.id, c.name) for c in open_calls)
    return out if out is not None else messages
