"""Built-in commands about sessions: /new, /resume, /fork, /tree, /name, /session,
/export, /compact, /copy."""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from .definition import BuiltinCommand, CommandContext
from .front import Front, SessionSource

if TYPE_CHECKING:
    from ....runtime.live.live_session import LiveSession
    from ....session.entries import SessionEntry
    from ..tree_source import TreeSource


async def new_session(ctx: CommandContext, args: str) -> None:
    await ctx.host.new_session()
    ctx.front.notify("New session started.")


def session_source(ctx: CommandContext) -> SessionSource:
    host, cwd = ctx.host, ctx.session.cwd
    return SessionSource(cwd=cwd, list_here=lambda: host.list_sessions(cwd), list_all=lambda: host.list_sessions(None),
                         rename=host.rename_session, delete=host.delete_session, current_file=ctx.session.session_file)


async def resume(ctx: CommandContext, args: str) -> None:
    path = await ctx.front.pick_session(session_source(ctx))
    if path is None:
        return
    await ctx.host.resume_session(path)


def _user_entries(session: LiveSession) -> list[tuple[Any, str]]:
    from ..tree_rows import content_text

    out = []
    for entry in session.session_manager.get_branch():
        message: Any = getattr(entry, "message", None)
        if getattr(entry, "type", None) == "message" and getattr(message, "role", None) == "user":
            out.append((entry, content_text(message.content)))
    return out


async def _open_subagent(ctx: CommandContext, entry: SessionEntry) -> bool:
    """A subagent's ``task`` result chosen in /tree: open the child's session (its whole
    conversation), or go on to move there. True when the choice was handled here."""
    from ....session.subagent_links import link_of

    link = link_of(entry)
    if link is None:
        return False
    choices = [f"Open the session of subagent {link.name}", "Move the conversation to this point"]
    answer = await ctx.front.select(f"Subagent {link.name}: {link.description or link.tool_call_id}", choices)
    if answer is None:
        return True
    if answer != choices[0]:
        return False
    parent = ctx.session.session_id
    await ctx.host.resume_session(link.session_file or link.session_id)
    ctx.front.notify(f"This is the session of subagent {link.name}; /resume (or --session {parent[:8]}) "
                     "goes back to the one that started it.")
    return True


async def fork(ctx: CommandContext, args: str) -> None:
    """A new session holding the conversation before a chosen message of yours; that
    message goes into the editor to be sent again, changed or not."""
    candidates = _user_entries(ctx.session)
    if not candidates:
        ctx.front.notify("Nothing to fork yet: this session has no messages of yours.", "warning")
        return
    labels = [f"{i}. {' '.join(text.split())[:100] or '(image)'}" for i, (_, text) in enumerate(candidates, 1)]
    chosen = await ctx.front.select("Fork from which message? (it goes back into the editor)", labels[::-1])
    if chosen is None:
        return
    entry, text = candidates[labels.index(chosen)]
    await ctx.host.fork_session(entry.parent_id)
    ctx.front.set_editor_text(text)
    ctx.front.notify("Forked into a new session.")


SUMMARY_CHOICES = ("No summary", "Summarize the branch I leave", "Summarize with my instructions…")


async def tree(ctx: CommandContext, args: str) -> None:
    """Move to another point of this session's tree. Choosing one of your messages goes to
    just before it and puts it in the editor (to send it differently)."""
    from ..tree_source import ManagerTree

    session = ctx.session
    manager = session.session_manager

    async def open_subagent(entry_id: str) -> bool:
        entry = manager.get_entry(entry_id)
        return entry is not None and await _open_subagent(ctx, entry)

    await tree_flow(ctx.front, ManagerTree(manager), session.navigate_tree, open_subagent)


Navigate = Callable[..., Awaitable[bool]]  # (target, summarize=, custom_instructions=) -> moved


async def tree_flow(front: Front, source: TreeSource, navigate: Navigate,
                    before: Callable[[str], Awaitable[bool]] | None = None) -> None:
    """``/tree``'s questions and the move, over any tree (``before``: handles a choice
    itself when it answers True, as a subagent's result does)."""
    choice = await front.pick_tree_entry(source)
    if choice is None:
        return
    if before is not None and await before(choice.entry_id):
        return
    try:
        point = source.point(choice.entry_id)
    except KeyError:
        raise RuntimeError(f"no entry {choice.entry_id} in this session") from None
    if point.target == source.leaf_id():
        if point.editor_text is not None:
            front.set_editor_text(point.editor_text)
        front.notify("That is where the session is already.")
        return
    summarize, instructions = False, None
    if source.leaves_messages(point.target):
        answer = await front.select("Leave a summary of the branch you are leaving?", list(SUMMARY_CHOICES))
        if answer is None:
            return
        summarize = answer != SUMMARY_CHOICES[0]
        if answer == SUMMARY_CHOICES[2]:
            instructions = await front.input("What should the summary focus on?")
            if instructions is None:
                return
    if summarize:
        front.notify("Summarizing the branch…")
    moved = await navigate(point.target, summarize=summarize, custom_instructions=instructions)
    if not moved:
        front.notify("An extension kept the session where it was.", "warning")
        return
    if point.editor_text is not None:
        front.set_editor_text(point.editor_text)


async def name(ctx: CommandContext, args: str) -> None:
    manager = ctx.session.session_manager
    new = args.strip()
    if not new:
        current = manager.get_session_name()
        new = await ctx.front.input("Name this session", current or "") or ""
        if not new.strip():
            return
    manager.append_session_info(new)
    ctx.front.notify(f"Session named {new.strip()!r}.")


def session_report(session: LiveSession) -> str:
    from ....runtime.live.stats import session_stats

    stats = session_stats(session)
    manager = session.session_manager
    model = session.model
    lines = [
        f"File      {stats.session_file or '(not saved: --no-session)'}",
        f"Id        {stats.session_id}",
        f"Name      {manager.get_session_name() or '-'}",
        f"Folder    {session.cwd}",
        f"Model     {f'{model.provider}/{model.id}' if model else '-'}  thinking {session.thinking_level}",
        f"Entries   {manager.entry_count()} in the file, {stats.total_messages} messages in context",
        f"Messages  {stats.user_messages} yours, {stats.assistant_messages} answers, "
        f"{stats.tool_calls} tool calls, {stats.tool_results} tool results",
        f"Tokens    {stats.input_tokens:,} in, {stats.output_tokens:,} out, {stats.cache_read_tokens:,} cache read, "
        f"{stats.cache_write_tokens:,} cache write ({stats.total_tokens:,} in all)",
        f"Cost      ${stats.cost:.4f}",
    ]
    usage = session.context_usage()
    if usage.get("percent") is not None:
        lines.append(f"Context   {usage.get('tokens', 0):,} of {usage.get('context_window', 0):,} tokens "
                     f"({usage['percent']:.0f}%)")
    return "\n".join(lines)


async def info(ctx: CommandContext, args: str) -> None:
    ctx.front.show_text("Session", session_report(ctx.session))


async def export(ctx: CommandContext, args: str) -> None:
    from ....session.export_html import export_session_html

    source = ctx.session.session_file
    if not source:
        raise RuntimeError("this session is not saved (--no-session), so there is no file to export")
    if not os.path.exists(source):  # written with the first message
        ctx.front.notify("Nothing to export yet: this session has no messages.", "warning")
        return
    out = export_session_html(source, args.strip() or None)
    ctx.front.notify(f"Exported to {out}")


async def compact(ctx: CommandContext, args: str) -> None:
    result = await ctx.session.compact(args.strip() or None)
    if result is None:
        return  # the compaction events said why
    ctx.front.notify(f"Compacted: {result.tokens_before:,} tokens summarised.")


def last_answer(session: LiveSession) -> str | None:
    for message in reversed(session.messages):
        if getattr(message, "role", None) == "assistant":
            text = "\n".join(b.text for b in message.content if getattr(b, "type", None) == "text" and b.text)
            if text.strip():
                return text
    return None


async def copy(ctx: CommandContext, args: str) -> None:
    text = last_answer(ctx.session)
    if text is None:
        ctx.front.notify("There is no answer to copy yet.", "warning")
        return
    how = ctx.front.copy_to_clipboard(text)
    ctx.front.notify(f"Copied the last answer ({len(text):,} characters) with {how}.")


COMMANDS = [
    BuiltinCommand("new", "start a new session", new_session, needs_idle=True),
    BuiltinCommand("resume", "open another session (search, rename, delete)", resume, needs_idle=True),
    BuiltinCommand("fork", "new session from before one of your messages", fork, needs_idle=True),
    BuiltinCommand("tree", "move to another point of this session's tree", tree, needs_idle=True),
    BuiltinCommand("name", "name this session", name, usage="<name>"),
    BuiltinCommand("session", "this session's file, ids, messages, tokens and cost", info),
    BuiltinCommand("export", "write this session as an HTML page", export, usage="[file]"),
    BuiltinCommand("compact", "summarise older context now", compact, usage="[instructions]", needs_idle=True),
    BuiltinCommand("copy", "copy the last answer to the clipboard", copy),
]
