"""RPC commands for the session tree, what ``/tree`` reads and does: ``get_tree``,
``navigate_tree`` and ``set_entry_label`` (docs/rpc.md)."""

from __future__ import annotations

from typing import Any

from ..interactive.tree_source import tree_record
from .commands import CommandError, Later, NoData, Reply, RpcServer, _field, _flag, _text, command


@command("get_tree", "query")
def get_tree(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return tree_record(server.session.session_manager)


@command("navigate_tree")
async def navigate_tree(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """Move the session's leaf to ``targetId`` (null: before the first entry), with a summary
    of the branch left behind when ``summarize``; answered once done: ``{moved}`` (false when
    an extension kept the session where it was)."""
    from ...session.summarize import CompactionError

    if "targetId" not in cmd:
        raise CommandError("navigate_tree needs 'targetId' (an entry id, or null for before the first entry)")
    target = _field(cmd, "targetId", str, "an entry id or null", required=False)
    summarize = _flag(cmd, "summarize") if "summarize" in cmd else False
    instructions = _text(cmd, "customInstructions", required=False)
    session = server.session
    if not session.is_idle():
        raise CommandError("navigate_tree: the agent is working; send abort first")
    if target is not None and session.session_manager.get_entry(target) is None:
        raise CommandError(f"navigate_tree: no entry {target!r} in this session (see get_tree)")

    async def run() -> dict[str, Any]:
        try:
            moved = await session.navigate_tree(target, summarize=summarize, custom_instructions=instructions)
        except CompactionError as exc:
            raise CommandError(f"navigate_tree: the summary failed: {exc}") from None
        return {"moved": moved}

    return Later(server.background(run()))


@command("set_entry_label")
async def set_entry_label(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """Label an entry (``label`` null or blank removes it), as Ctrl+L in ``/tree`` does."""
    entry_id = _text(cmd, "entryId")
    label = _text(cmd, "label", required=False)
    try:
        server.session.session_manager.append_label(entry_id, (label or "").strip() or None)
    except KeyError as exc:
        raise CommandError(f"set_entry_label: {exc.args[0]}") from None
    return NoData
