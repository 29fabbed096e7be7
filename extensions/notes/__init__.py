"""Notes: a folder extension with a helper module, custom messages and custom entries.

Shows: a folder extension importing its helper with a relative import (``/reload``
re-imports both), ``ctx.session.send_message`` with a ``custom_type`` (part of the model's
context, shown by the renderer registered with ``register_message_renderer``),
``ctx.session.append_entry`` (state that never reaches the model), and state rebuilt on
``session_start`` from both entry kinds.
"""

from .format import render_note, summarize


def extension(wolli):
    notes: list[str] = []

    def rebuild(event, ctx):
        notes.clear()
        for entry in ctx.session.session_manager.get_branch():
            if entry.type == "custom" and entry.custom_type == "notes-state":
                notes[:] = list((entry.data or {}).get("notes", []))

    async def note(args, ctx):
        text = args.strip()
        if not text:
            ctx.ui.notify(summarize(notes))
            return
        notes.append(text)
        ctx.session.append_entry("notes-state", {"notes": list(notes)})
        await ctx.session.send_message({"custom_type": "note", "content": f"Note from the user: {text}",
                                        "display": True, "details": {"count": len(notes)}})

    wolli.on("session_start", rebuild)
    wolli.register_command("note", handler=note, description="Add a note the model will see (no text: list them)")
    wolli.register_message_renderer("note", render_note)
