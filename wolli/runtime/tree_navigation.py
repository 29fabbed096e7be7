"""Tree navigation: move a live session's leaf to another entry (the TUI's /tree).

``session_before_tree`` handlers may cancel (the first answer wins); then the leaf moves,
the agent's messages become the new branch's context, and ``session_tree`` tells handlers
and observers, so extension state kept in the branch (tool-result ``details``, custom
entries) can be rebuilt. Navigation waits until the session is idle.
"""

from __future__ import annotations

from typing import Any

from .events import SessionBeforeTreeEvent, SessionTreeEvent


async def navigate_tree(session: Any, entry_id: str | None) -> bool:
    """Move ``session``'s leaf to ``entry_id`` (None: before the first entry); False if a
    handler cancelled. Raises ``KeyError`` for an unknown entry."""
    manager = session.session_manager
    if entry_id is not None and manager.get_entry(entry_id) is None:
        raise KeyError(f"no entry {entry_id!r} in this session")
    await session.wait_for_idle()
    old_leaf = manager.get_leaf_id()
    dispatch = session.dispatcher
    if dispatch.has("session_before_tree"):
        answer = await dispatch.first_answer(SessionBeforeTreeEvent(entry_id, old_leaf), session.handler_context())
        if answer and answer.get("cancel"):
            return False
    if entry_id is None:
        manager.reset_leaf()
    else:
        manager.branch(entry_id)
    session.agent.replace_messages(manager.build_session_context().messages)
    await session.emit(SessionTreeEvent(manager.get_leaf_id(), old_leaf))
    return True
