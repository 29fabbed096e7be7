"""Tree navigation: move a live session's leaf to another entry (the TUI's /tree).

``session_before_tree`` handlers may cancel (the first answer wins); then the leaf moves,
the agent's messages become the new branch's context, and ``session_tree`` tells handlers
and observers, so extension state kept in the branch (tool-result ``details``, custom
entries) can be rebuilt. Navigation waits until the session is idle.

Leaving a branch may leave a **branch summary** behind: the entries of the abandoned branch
(from where it parts from the target up to the old leaf) are summarised by the session's
model and appended as a ``branch_summary`` entry at the target, so the model keeps what was
learned there without the whole detour in its context.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..events import SessionBeforeTreeEvent, SessionTreeEvent

if TYPE_CHECKING:
    from ...session.manager import SessionManager
    from .services import SessionCore

BRANCH_SUMMARY_PROMPT = (
    "The user went back to an earlier point of the conversation below and will continue from "
    "there. Summarise the part they are leaving so nothing learned in it is lost: what was "
    "tried and why, decisions, files read or changed, results, and what was still open. Write "
    "for the assistant that continues; be concise and concrete."
)


def abandoned_entries(manager: SessionManager, old_leaf: str | None, target: str | None) -> list[Any]:
    """The entries on the path to ``old_leaf`` that are not on the path to ``target``."""
    if old_leaf is None:
        return []
    kept = {e.id for e in manager.get_branch(target)} if target is not None else set()
    return [e for e in manager.get_branch(old_leaf) if e.id not in kept]


async def summarize_branch(session: SessionCore, entries: list[Any], custom_instructions: str | None = None) -> tuple[str, Any]:
    """(summary, details) of ``entries`` by the session's model; raises CompactionError."""
    from ...session.compaction import summary_output_tokens
    from ...session.summarize import (
        CompactionError,
        FileOperations,
        add_file_operations,
        ask_summary,
        serialize_pieces,
    )
    from ...session.summarize_pieces import input_budget_chars, summarize_in_pieces
    from .settings_view import compaction_settings, stream_idle_timeout

    model = session.model
    if model is None:
        raise CompactionError("No model to summarise with.")
    messages = [e.message for e in entries if getattr(e, "type", None) == "message"]
    pieces = serialize_pieces(messages)
    if not pieces:
        raise CompactionError("The branch you are leaving has no conversation to summarise.")
    instructions = BRANCH_SUMMARY_PROMPT
    if custom_instructions:
        instructions += f"\n\nAlso: {custom_instructions.strip()}"
    reserve = compaction_settings(session.settings).reserve_tokens
    out = summary_output_tokens(model, max(1024, int(reserve * 0.5)))

    async def ask(prompt: str) -> str:
        return await ask_summary(model, prompt, max_tokens=out, api_key=session.services.get_api_key(model),
                                 stream_options={"idle_timeout": stream_idle_timeout(session.settings)})

    # A branch larger than the model's window is summarised in pieces that fit, then merged.
    result = await summarize_in_pieces(
        pieces, input_budget_chars(model.context_window, out) or (1 << 62), ask,
        first_prompt=lambda text: f"{instructions}\n\n<conversation>\n{text}\n</conversation>",
        final_format=instructions,
    )
    summary = result.text
    read, modified = add_file_operations(messages, FileOperations()).file_lists()
    return summary, {"readFiles": read, "modifiedFiles": modified}


async def navigate_tree(session: SessionCore, entry_id: str | None, *, summarize: bool = False,
                        custom_instructions: str | None = None) -> bool:
    """Move ``session``'s leaf to ``entry_id`` (None: before the first entry); False if a
    handler cancelled. With ``summarize`` the abandoned branch is summarised first (a failed
    summary raises CompactionError and the leaf stays). Raises ``KeyError`` for an unknown entry."""
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
    abandoned = abandoned_entries(manager, old_leaf, entry_id) if summarize else []
    if abandoned:
        summary, details = await summarize_branch(session, abandoned, custom_instructions)
        manager.branch_with_summary(entry_id, summary, details)
    elif entry_id is None:
        manager.reset_leaf()
    else:
        manager.branch(entry_id)
    session.agent.replace_messages(manager.build_session_context().messages)
    await session.emit(SessionTreeEvent(manager.get_leaf_id(), old_leaf))
    return True
