"""Plan approval: the model hands its plan to the user, who decides how to go on.

Plan mode itself is built in (``--permission-mode plan``, ``/plan``, Alt+M): edits, writes and
commands are refused and the model is told it is planning. This extension builds on it:

- ``--plan`` starts the session in plan mode (``ctx.permissions.set_mode``);
- a read-only tool ``present_plan`` (``read_only``: it runs even in plan mode) shows the plan
  and lets the *user* choose: carry it out accepting edits, carry it out asking before each
  change, or keep planning (leaving plan mode stays the user's act);
- ``permission_mode_change`` keeps a status line in step with the mode, however it changed.

Shows: ``ctx.permissions`` (``set_mode``), ``ctx.permission_mode``, the
``permission_mode_change`` event, a read-only tool, ``ctx.ui.select`` and ``register_flag``.
It is also the typed example: ``wolli.ExtensionAPI`` and ``wolli.ExtensionContext``
annotations, checked by mypy in CI.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from wolli import ExtensionAPI, ExtensionContext

CHOICES: dict[str, str | None] = {
    "Carry it out, accepting edits (shell commands still ask)": "accept-edits",
    "Carry it out, asking before each change": "default",
    "Keep planning": None,
}


def extension(wolli: ExtensionAPI) -> None:
    async def start(event: Any, ctx: ExtensionContext) -> None:
        if wolli.get_flag("plan") and event.reason == "startup":
            await ctx.permissions.set_mode("plan")

    def status(event: Any, ctx: ExtensionContext) -> None:
        ctx.ui.set_status("plan", "planning" if event.mode == "plan" else None)

    async def present_plan(tool_call_id: str, params: dict[str, Any], signal: Any, on_update: Any,
                           ctx: ExtensionContext) -> str:
        if ctx.permission_mode != "plan":
            return "Not in plan mode; go ahead with the work."
        question = f"The plan:\n\n{params['plan']}\n\nHow do you want to go on?"
        choice = await ctx.ui.select(question, list(CHOICES), signal=signal)
        mode = CHOICES.get(choice) if choice is not None else None
        if mode is None:
            return "The user wants to keep planning: ask what to change, and refine the plan."
        await ctx.permissions.set_mode(mode)
        return f"The user approved the plan and left plan mode ({mode}). Carry it out now, step by step."

    wolli.register_flag("plan", description="start in plan mode", type="boolean", default=False)
    wolli.on("session_start", start)
    wolli.on("permission_mode_change", status)
    wolli.register_tool({
        "name": "present_plan",
        "label": "Present plan",
        "description": "In plan mode, hand the finished plan to the user, who approves it (leaving plan mode) "
                       "or asks for changes.",
        "parameters": {"type": "object", "required": ["plan"],
                       "properties": {"plan": {"type": "string", "description": "The plan, as numbered steps"}}},
        "prompt_guidelines": ["In plan mode, finish by calling present_plan with the plan instead of asking the "
                              "user to switch modes."],
        "read_only": True,
        "execute": present_plan,
    })
