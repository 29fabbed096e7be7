"""A background reviewer: /review-bg asks a second, read-only session to review the diff.

Shows: ``wolli.create_session()`` (additive: the active session stays live), restricting the
new session with ``set_active_tools`` to read-only tools, ``prompt`` on it, reading its
answer from its ``session_manager``, ``wolli.get_session``/``list_sessions``, and
``ctx.session.send_message`` bringing the result back as a custom message.
"""


def last_answer(session):
    for entry in reversed(session.session_manager.get_entries()):
        message = getattr(entry, "message", None)
        if getattr(message, "role", None) == "assistant":
            return "".join(getattr(b, "text", "") for b in message.content)
    return ""


def extension(wolli):
    async def review(args, ctx):
        reviewer = await wolli.create_session()
        reviewer.set_active_tools(["read", "grep", "find", "ls"])
        await reviewer.prompt(args.strip() or "Review the uncommitted changes in this repository. Be brief.")
        await reviewer.wait_for_idle()
        verdict = last_answer(reviewer)
        assert wolli.get_session(reviewer.id) is not None
        await ctx.session.send_message({"custom_type": "review", "content": f"Background review:\n{verdict}",
                                        "display": True, "details": {"session": reviewer.id}})

    wolli.register_command("review-bg", handler=review, description="Review the changes in a background session")
    wolli.register_command("sessions", handler=lambda a, ctx: ctx.ui.notify(f"{len(wolli.list_sessions())} sessions"),
                           description="Count the stored sessions")
