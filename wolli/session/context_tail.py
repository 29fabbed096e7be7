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


def count_older(store: EntryStore, older_ids: list[str]) -> int:
    """How many messages of the context the entries ``older_ids`` (leaf first, as
    :func:`context_tail` leaves them) add, counted from the index without building them: every
    message entry up to the latest compaction, then its summary and the entries it kept.

    Exact for a sound file; a line found damaged only when it is built, or a tool call left
    without a result far back, makes the built context differ by that message (a client paging
    the history by index is corrected when the whole context is built: docs/server.md).
    """
    count = 0
    for index, entry_id in enumerate(older_ids):
        kind = store.kind(entry_id)
        if kind == "compaction":
            compaction = store.get(entry_id)
            first_kept = getattr(compaction, "first_kept_entry_id", None)
            above = older_ids[index + 1 :]
            kept = above.index(first_kept) + 1 if first_kept in above else 0
            return count + 1 + sum(1 for kept_id in above[:kept] if store.kind(kept_id) in _MESSAGE_KINDS)
        if kind in _MESSAGE_KINDS:
            count += 1
    return count


def _is_tool_result(entry: Any) -> bool:
    return getattr(getattr(entry, "message", None), "role", None) == "toolResult"
