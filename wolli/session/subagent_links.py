"""The links from a session to its subagents' sessions, read from its ``task`` results.

A ``task`` tool result's ``details`` hold the child's ``sessionId`` and ``sessionFile``
(docs/subagents.md), and the child's header points back (``subagent``, ``parentSession``),
so either side finds the other from what is on disk, with no index to keep in step.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from .entries import MessageEntry

if TYPE_CHECKING:
    from .manager import SessionManager


@dataclass(frozen=True)
class SubagentLink:
    entry_id: str  # the tool-result entry of the ``task`` call
    tool_call_id: str
    name: str
    session_id: str
    session_file: str | None
    status: str
    description: str = ""

    def __getitem__(self, key: str) -> object:
        return getattr(self, key)


def link_of(entry: object) -> SubagentLink | None:
    """The child a tool-result entry names, if it is a ``task`` result."""
    if not isinstance(entry, MessageEntry):
        return None
    message = entry.message
    if getattr(message, "role", None) != "toolResult":
        return None
    details = getattr(message, "details", None)
    if not isinstance(details, dict) or not isinstance(details.get("sessionId"), str) or "subagent" not in details:
        return None
    return SubagentLink(entry.id, message.tool_call_id, str(details["subagent"]), details["sessionId"],  # type: ignore[union-attr]
                        details.get("sessionFile") if isinstance(details.get("sessionFile"), str) else None,
                        str(details.get("status", "")), str(details.get("description") or ""))


def subagent_links(manager: SessionManager, entry_id: str | None = None) -> list[SubagentLink]:
    """Children of the whole session, or of one entry: the ``task`` result itself, or the
    assistant message whose calls started them."""
    if entry_id is None:
        return [link for link in map(link_of, manager.iter_entries("message")) if link is not None]
    entry = manager.get_entry(entry_id)
    if entry is None:
        return []
    own = link_of(entry)
    if own is not None:
        return [own]
    message = entry.message if isinstance(entry, MessageEntry) else None
    calls = {c.id for c in message.tool_calls()} if getattr(message, "role", None) == "assistant" else set()  # type: ignore[union-attr]
    if not calls:
        return []
    results = manager.iter_entries("message", after=entry_id)  # a call's result comes after it in the file
    return [link for link in map(link_of, results) if link is not None and link.tool_call_id in calls]
