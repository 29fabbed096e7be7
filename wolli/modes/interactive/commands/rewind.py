"""``/rewind``: back to before one of your messages, for the code, the conversation, or both.

The points are your messages on the current branch, newest first, each with the files a
rewind there would restore, and earlier rewinds (choosing one undoes it). Then what to
restore; then, if some of those files changed outside Wolli since, whether to overwrite
them, keep them (restoring the rest) or stop. The message goes back into the editor.
In the TUI, Esc twice on an empty editor opens it.
"""

from __future__ import annotations

import datetime as _dt
from typing import TYPE_CHECKING

from .definition import BuiltinCommand, CommandContext

if TYPE_CHECKING:
    from ....runtime.safety.rewind import RewindPoint

SCOPE_CHOICES = {
    "Code and conversation": "both",
    "Conversation only (files stay as they are)": "conversation",
    "Code only (the conversation stays)": "code",
}
CONFLICT_CHOICES = {
    "Keep them as they are, restore the other files": "skip",
    "Overwrite them with the checkpoint": "overwrite",
    "Cancel the rewind": "cancel",
}


def point_label(point: RewindPoint, cwd: str) -> str:
    from ..tool_text import short_path

    when = _clock(point.timestamp)
    text = " ".join(point.text.split())
    text = text if len(text) <= 70 else text[:69] + "…"
    if point.kind == "rewind":
        text = f"↶ {text}"
    files = [short_path(p, cwd) for p in point.files]
    tail = ""
    if files:
        shown = ", ".join(files[:3]) + (f" +{len(files) - 3}" if len(files) > 3 else "")
        tail = f"  [{shown}]"
    return f"{when}  {text}{tail}"


def _clock(timestamp: str) -> str:
    try:
        moment = _dt.datetime.fromisoformat(timestamp.replace("Z", "+00:00")).astimezone()
    except ValueError:
        return "     "
    return moment.strftime("%H:%M")


async def rewind(ctx: CommandContext, args: str) -> None:
    from ....runtime.safety.rewind import RewindError, points

    session = ctx.session
    available = points(session)
    if not available:
        ctx.front.notify("Nothing to rewind to yet: this session has no messages of yours.", "warning")
        return
    labels = [point_label(p, session.cwd) for p in available]
    chosen = await ctx.front.select("Rewind to before which message? (the newest first)", labels)
    if chosen is None:
        return
    point = available[labels.index(chosen)]
    scopes = dict(SCOPE_CHOICES)
    if not point.files:
        scopes = {"Conversation (no file was changed since)": "conversation"}
    picked = await ctx.front.select("Restore what?", list(scopes))
    if picked is None:
        return

    async def on_conflicts(paths: list[str]) -> str | None:
        from ..tool_text import short_path

        listed = ", ".join(short_path(p, session.cwd) for p in paths[:6]) + (" …" if len(paths) > 6 else "")
        answer = await ctx.front.select(f"Changed outside Wolli since the checkpoint: {listed}", list(CONFLICT_CHOICES))
        return CONFLICT_CHOICES.get(answer or "", "cancel")

    try:
        result = await session.rewind(point.entry_id, scope=scopes[picked], on_conflict="ask", ask=on_conflicts)
    except RewindError as exc:
        ctx.front.notify(f"Rewind cancelled: {exc}", "warning")
        return
    ctx.front.notify(result.summary(), "warning" if result.lost or result.failed else "info")
    if result.editor_text:
        ctx.front.set_editor_text(result.editor_text)


COMMANDS = [
    BuiltinCommand("rewind", "restore code and/or conversation to before one of your messages", rewind,
                   category="Safety", needs_idle=True),
]
