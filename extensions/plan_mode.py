"""Plan mode: --plan (or Ctrl+Alt+P, or /plan) restricts the agent to read-only tools.

Shows: ``register_flag`` + ``get_flag``, ``register_shortcut``, ``before_agent_start``
returning ``{"system_prompt": ...}`` for the run, ``ctx.session.set_active_tools`` and
``get_active_tools``, and ``session_start`` applying the flag. It is also the typed example:
``wolli.ExtensionAPI`` and ``wolli.ExtensionContext`` annotations, checked by mypy in CI.

Ctrl+Alt+P reaches Wolli in every terminal that sends Alt as Escape (tmux, xterm, most Linux
terminals, iTerm2 with "Option as Meta") and in every terminal with the kitty keyboard
protocol; ``/plan`` works everywhere.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wolli import ExtensionAPI, ExtensionContext

READ_ONLY = ["read", "grep", "find", "ls"]


def extension(wolli: ExtensionAPI) -> None:
    state: dict[str, Any] = {"on": False, "saved": None}

    def apply(ctx: ExtensionContext, on: bool) -> None:
        if on and not state["on"]:
            state["saved"] = ctx.session.get_active_tools()
            ctx.session.set_active_tools([t for t in READ_ONLY if t in state["saved"]])
        elif not on and state["on"]:
            ctx.session.set_active_tools(state["saved"] or [])
        state["on"] = on
        ctx.ui.set_status("plan", "PLAN MODE" if on else None)

    def start(event: Any, ctx: ExtensionContext) -> None:
        if wolli.get_flag("plan"):
            apply(ctx, True)

    def toggle(ctx: ExtensionContext) -> None:
        apply(ctx, not state["on"])

    def prompt(event: Any, ctx: ExtensionContext) -> dict[str, str] | None:
        if state["on"]:
            return {"system_prompt": event.system_prompt + "\n\nPLAN MODE: read and plan only; do not change files."}
        return None

    wolli.register_flag("plan", description="start in read-only plan mode", type="boolean", default=False)
    wolli.register_shortcut("ctrl+alt+p", handler=toggle, description="Toggle plan mode")
    wolli.register_command("plan", handler=lambda args, ctx: toggle(ctx), description="Toggle plan mode")
    wolli.on("session_start", start)
    wolli.on("before_agent_start", prompt)
