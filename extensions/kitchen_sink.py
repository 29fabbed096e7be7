"""Kitchen sink of the Amp-style capabilities in one extension.

Shows: a ``tool_call`` answered with a supplied result without running the tool
(``{"result": ...}``), tool arguments rewritten in place (and re-validated by Wolli), an
``agent_end`` continuation (``{"follow_up": ...}``), ``wolli.ai.ask`` for a yes/no judgement,
the ``wolli.settings`` handle (get/update/subscribe), ``wolli.helpers``, ``wolli.logger``,
``wolli.exec``, ``ctx.ui.set_status`` and a prompt section with an order.
"""


def extension(wolli):
    state = {"follow_ups": 0, "last_judgement": None, "settings_seen": []}

    def on_tool_call(event, ctx):
        if event.tool_name == "read" and str(event.input.get("path", "")).endswith(".secret"):
            return {"result": {"content": [{"type": "text", "text": "(hidden by kitchen_sink)"}], "is_error": False}}
        if event.tool_name == "bash":
            command = wolli.helpers.shell_command_from_tool_call({"name": "bash", "arguments": event.input}) or ""
            if command.startswith("python "):
                event.input["command"] = "python3 " + command[len("python "):]  # rewritten in place
        return None

    def on_agent_end(event, ctx):
        wanted = wolli.settings.get("kitchenSink.followUps", 0)
        if state["follow_ups"] < wanted:
            state["follow_ups"] += 1
            return {"follow_up": "Please double-check your last answer."}
        return None

    async def judge(args, ctx):
        answer = await wolli.ai.ask(args or "Did the last answer finish the task?")
        state["last_judgement"] = answer
        ctx.ui.set_status("judge", f"{answer.result} ({answer.probability:.0%}): {answer.reason}")
        wolli.logger.info("judgement %s %.2f %s", answer.result, answer.probability, answer.reason)

    async def sh(args, ctx):
        done = await wolli.exec(args or "pwd", timeout=10)
        ctx.ui.notify(done.stdout.strip() or done.stderr.strip(), "info" if done.code == 0 else "error")

    wolli.on("tool_call", on_tool_call)
    wolli.on("agent_end", on_agent_end)
    wolli.register_command("judge", handler=judge, description="Ask the model a yes/no question about the session")
    wolli.register_command("sh", handler=sh, description="Run a shell command and show its output")
    wolli.settings.subscribe(lambda merged: state["settings_seen"].append(merged.get("kitchenSink")))
    wolli.register_prompt_section("House style", "Prefer small, focused changes.", order=-1)
    wolli.events.on("kitchen:state", lambda reply: reply(state))
