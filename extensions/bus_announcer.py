"""Talk between extensions on the shared event bus: announce files the agent changed.

Shows: ``wolli.events.emit`` from a ``tool_execution_end`` handler and ``wolli.events.on``
(here in the same extension; any other extension can listen to ``files:changed``), with
``wolli.helpers.files_modified_by_tool_call`` deciding what changed.
"""


def extension(wolli):
    changed: list[str] = []
    calls: dict[str, dict] = {}

    def remember(event, ctx):
        calls[event.tool_call_id] = {"name": event.tool_name, "arguments": event.args}

    def announce(event, ctx):
        call = calls.pop(event.tool_call_id, None)
        if call is None or event.is_error:
            return
        files = wolli.helpers.files_modified_by_tool_call(call)
        if files:
            wolli.events.emit("files:changed", {"files": files, "session": ctx.session.id})

    wolli.on("tool_execution_start", remember)
    wolli.on("tool_execution_end", announce)
    wolli.events.on("files:changed", lambda data: changed.extend(data["files"]))
    wolli.register_command("changed", handler=lambda a, ctx: ctx.ui.notify(", ".join(changed) or "nothing"),
                           description="Files changed by tools so far")
