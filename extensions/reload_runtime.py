"""Reload from inside: a /reload-runtime command and a reload_runtime tool the model can call.

Shows: a command calling ``ctx.session.reload()`` (the same ``ctx.session`` keeps working
after it), and a tool that cannot reload at once (a reload is refused while the agent works)
so it starts a task that waits with ``ctx.session.wait_for_idle()`` and then calls
``wolli.reload()``. ``session_start``/``session_shutdown`` record the reasons they see.
"""

import asyncio

reasons: list[tuple[str, str]] = []  # module state: a fresh import after each reload
pending: set[asyncio.Task] = set()


def extension(wolli):
    async def command(args, ctx):
        await ctx.session.reload()
        ctx.ui.notify(f"reloaded; session {ctx.session.id} is still live")

    async def reload_when_idle(session):
        await session.wait_for_idle()
        await wolli.reload()

    async def tool(tool_call_id, params, signal, on_update, ctx):
        # async: a sync execute runs in a worker thread, where there is no event loop.
        task = asyncio.get_running_loop().create_task(reload_when_idle(ctx.session))
        pending.add(task)
        task.add_done_callback(pending.discard)
        return "Wolli's extensions will be reloaded as soon as this run ends."

    wolli.on("session_start", lambda event, ctx: reasons.append(("start", event.reason)))
    wolli.on("session_shutdown", lambda event, ctx: reasons.append(("shutdown", event.reason)))
    wolli.register_command("reload-runtime", handler=command, description="Reload extensions, hooks and tools")
    wolli.register_tool({
        "name": "reload_runtime",
        "description": "Reload Wolli's extensions, hooks and tools once this run ends (after editing them).",
        "execute": tool,
    })
