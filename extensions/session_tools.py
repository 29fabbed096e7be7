"""Session housekeeping commands: /name, /label, /tag, /commands, with argument completion.

Shows: ``ctx.session.set_session_name``/``get_session_name``, ``set_label`` on the leaf
entry, ``set_tags``/``get_tags``, ``get_commands`` (extension commands, prompt templates and
skills), ``register_command(..., get_argument_completions=...)`` and a command handle's
``set_availability``.
"""


def extension(wolli):
    def name(args, ctx):
        if args.strip():
            ctx.session.set_session_name(args.strip())
        ctx.ui.notify(f"session name: {ctx.session.get_session_name() or '(none)'}")

    def label(args, ctx):
        leaf = ctx.session.session_manager.get_leaf_id()
        if leaf is None:
            ctx.ui.notify("nothing to label yet", "warning")
            return
        ctx.session.set_label(leaf, args.strip() or None)
        ctx.ui.notify(f"label of {leaf}: {ctx.session.session_manager.get_label(leaf)}")

    def tag(args, ctx):
        key, _, value = args.strip().partition("=")
        if key:
            tags = dict(ctx.session.get_tags())
            tags[key.strip()] = value.strip()
            ctx.session.set_tags(tags)
        ctx.ui.notify(", ".join(f"{k}={v}" for k, v in sorted(ctx.session.get_tags().items())) or "no tags")

    def commands(args, ctx):
        ctx.ui.notify(" ".join(f"/{c.name}" for c in ctx.session.get_commands()))

    def complete_tag(prefix):
        keys = ["ticket=", "branch=", "owner="]
        found = [{"value": k, "label": k} for k in keys if k.startswith(prefix)]
        return found or None

    wolli.register_command("name", handler=name, description="Show or set the session name")
    wolli.register_command("label", handler=label, description="Label the latest entry (no text: clear)")
    wolli.register_command("tag", handler=tag, description="Set a session tag: /tag key=value",
                           get_argument_completions=complete_tag)
    handle = wolli.register_command("commands", handler=commands, description="List every command")
    if wolli.mode == "rpc":
        handle.set_availability("hidden")
