"""Handoff: /handoff <goal> starts a fresh session seeded with a summary of this one.

Shows: ``ctx.session.new_session(setup=..., with_session=...)``: ``setup`` writes into the
new session's manager before it starts, ``with_session`` gets the new live handle (the
old ``ctx.session`` is stale afterwards), and ``send_user_message`` starting the work.
"""


def summary_of(entries) -> str:
    lines = []
    for entry in entries:
        message = getattr(entry, "message", None)
        role = getattr(message, "role", None)
        if role == "user":
            content = message.content if isinstance(message.content, str) else " ".join(
                getattr(b, "text", "") for b in message.content)
            lines.append(f"- asked: {content.strip()[:200]}")
        elif role == "assistant":
            text = " ".join(getattr(b, "text", "") for b in message.content if getattr(b, "type", "") == "text")
            if text.strip():
                lines.append(f"- answered: {text.strip()[:200]}")
    return "\n".join(lines[-20:]) or "- (nothing yet)"


def extension(wolli):
    async def handoff(args, ctx):
        goal = args.strip()
        if not goal:
            ctx.ui.notify("usage: /handoff <what the next session should do>", "warning")
            return
        summary = summary_of(ctx.session.session_manager.get_branch())
        previous = ctx.session.session_manager.get_session_file()

        def setup(manager):
            manager.append_custom_message_entry(
                "handoff", f"Handoff from {previous}:\n{summary}", True, {"from": previous})

        async def start(session):
            await session.send_user_message(goal)

        await ctx.session.new_session(setup=setup, with_session=start)

    wolli.register_command("handoff", handler=handoff, description="Continue in a fresh session with a summary")
