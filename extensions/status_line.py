"""A status line: model, thinking level, turns, streamed tokens and tool calls of the run.

Shows: the notification-only events: ``model_select``, ``thinking_level_select``,
``agent_start``/``agent_end``, ``turn_start``/``turn_end``, ``message_start``/
``message_update``/``message_end`` (kept cheap: one counter per token),
``tool_execution_start``/``_update``/``_end``, and ``ctx.ui.set_status``.
"""


def extension(wolli):
    stats = {"turns": 0, "deltas": 0, "tools": 0, "tool_updates": 0, "errors": 0, "model": None, "level": None,
             "messages": 0, "runs": 0}

    def show(ctx):
        ctx.ui.set_status("stats", f"{stats['model'] or '?'} {stats['level'] or ''} | turns {stats['turns']} "
                                   f"| tokens~{stats['deltas']} | tools {stats['tools']}")

    def on_model(event, ctx):
        stats["model"] = f"{event.model.provider}/{event.model.id}"
        show(ctx)

    def on_level(event, ctx):
        stats["level"] = event.level
        show(ctx)

    def on_update(event, ctx):
        stats["deltas"] += 1

    def on_tool_end(event, ctx):
        stats["tools"] += 1
        stats["errors"] += 1 if event.is_error else 0
        show(ctx)

    wolli.on("model_select", on_model)
    wolli.on("thinking_level_select", on_level)
    wolli.on("agent_start", lambda event, ctx: stats.update(runs=stats["runs"] + 1))
    wolli.on("agent_end", lambda event, ctx: show(ctx))
    wolli.on("turn_start", lambda event, ctx: stats.update(turns=stats["turns"] + 1))
    wolli.on("turn_end", lambda event, ctx: show(ctx))
    wolli.on("message_start", lambda event, ctx: None)
    wolli.on("message_update", on_update)
    wolli.on("message_end", lambda event, ctx: stats.update(messages=stats["messages"] + 1))
    wolli.on("tool_execution_start", lambda event, ctx: None)
    wolli.on("tool_execution_update", lambda event, ctx: stats.update(tool_updates=stats["tool_updates"] + 1))
    wolli.on("tool_execution_end", on_tool_end)
    wolli.register_command("stats", handler=lambda args, ctx: ctx.ui.notify(str(stats)), description="Run statistics")
