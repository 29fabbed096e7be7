"""The end of a session's context, found from the leaf without building the rest.

A resumed session is shown from its last messages, so the screen needs only the end of the
branch; the full context (every message since the latest compaction) is built afterwards,
off the UI thread. Walking back from the leaf over the index (``EntryStore.path_ids``)
builds only the entries taken, and keeps them: they are part of the context either way.
"""

from __future__ import annotations

from typing import Any

from .entry_store import EntryStore

# Entry types whose entries become messages of the context (besides compactions).
_MESSAGE_KINDS = frozenset({"message", "custom_message", "branch_summary"})


def context_tail(store: EntryStore, leaf_id: str | None, messages: int) -> tuple[list[Any], list[str]] | None:
    """(the last entries of the context, root first; the ids above them, leaf first), or
    None when the branch up to the root or to a compaction holds no more than that.

    The walk stops once ``messages`` messages are in hand and the oldest is not a tool
    result (its call, in the assistant message before it, would be missing from the tail).
    """
    ids = store.path_ids(leaf_id)
    taken: list[Any] = []
    count = 0
    oldest_is_result = False
    for index, entry_id in enumerate(ids):
        kind = store.kind(entry_id)
        if kind == "compaction":
            return None  # the context starts at its summary: short, built whole
        if count >= messages and not oldest_is_result:
            taken.reverse()
            return taken, ids[index:]
        entry = store.get(entry_id, keep=True)
        if entry is None:  # damaged: reported, and left out of the context as it would be
            continue
        taken.append(entry)
        if kind in _MESSAGE_KINDS:
            count += 1
            oldest_is_result = _is_tool_result(entry)
    return None


def _is_tool_result(entry: Any) -> bool:
    return getattr(getattr(entry, "message", None), "role", None) == "toolResult"
