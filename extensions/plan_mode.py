"""Plan mode: --plan (or ctrl+alt+p, or /plan) restricts the agent to read-only tools.

Shows: ``register_flag`` + ``get_flag``, ``register_shortcut``, ``before_agent_start``
returning ``{"system_prompt": ...}`` for the run, ``ctx.session.set_active_tools`` and
``get_active_tools``, and ``session_start`` applying the flag.
"""

READ_ONLY = ["read", "grep", "find", "ls"]


def extension(wolli):
    state = {"on": False, "saved": None}

    def apply(ctx, on):
        if on and not state["on"]:
            state["saved"] = ctx.session.get_active_tools()
            ctx.session.set_active_tools([t for t in READ_ONLY if t in state["saved"]])
        elif not on and state["on"]:
            ctx.session.set_active_tools(state["saved"] or [])
        state["on"] = on
        ctx.ui.set_status("plan", "PLAN MODE" if on else None)

    def start(event, ctx):
        if wolli.get_flag("plan"):
            apply(ctx, True)

    def toggle(ctx):
        apply(ctx, not state["on"])

    def prompt(event, ctx):
        if state["on"]:
            return {"system_prompt": event.system_prompt + "\n\nPLAN MODE: read and plan only; do not change files."}
        return None

    wolli.register_flag("plan", description="start in read-only plan mode", type="boolean", default=False)
    wolli.register_shortcut("ctrl+alt+p", handler=toggle, description="Toggle plan mode")
    wolli.register_command("plan", handler=lambda args, ctx: toggle(ctx), description="Toggle plan mode")
    wolli.on("session_start", start)
    wolli.on("before_agent_start", prompt)
