"""Answer some ``!command`` lines without a shell: ``!wolli-info`` prints session facts.

Shows: the ``user_bash`` event (the user's own ``!cmd``) answered with ``{"result": ...}``;
the first handler that answers wins, other commands run in the shell as usual.
"""


def extension(wolli):
    def answer(event, ctx):
        if event.command.strip() != "wolli-info":
            return None
        model = ctx.session.model
        name = f"{model.provider}/{model.id}" if model is not None else "-"
        text = f"session {ctx.session.id}\ncwd {event.cwd}\nmodel {name}\n"
        return {"result": {"output": text, "exit_code": 0}}

    wolli.on("user_bash", answer)
