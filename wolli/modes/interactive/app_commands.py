"""Built-in commands about Wolli itself: /settings, /reload, /extensions, /hotkeys, /quit."""

from __future__ import annotations

from typing import Any

from .command import BuiltinCommand, CommandContext
from .settings_form import as_update, read_values, setting_fields

# What each key id does, for /hotkeys (ids as in keybindings.json; docs/tui.md lists them too).
KEY_HELP: dict[str, str] = {
    "tui.input.submit": "send (steer while the agent works)",
    "tui.input.newLine": "new line",
    "app.message.followUp": "queue a follow-up while the agent works",
    "app.interrupt": "stop the agent (queued messages return to the editor)",
    "app.clear": "clear the editor; twice: quit",
    "app.exit": "quit (empty editor)",
    "app.thinking.cycle": "next thinking level",
    "app.model.cycleForward": "next model in scope (enabledModels)",
    "app.model.cycleBackward": "previous model in scope",
    "app.model.select": "choose the model",
    "app.tools.expand": "expand or collapse tool output",
    "app.thinking.toggle": "show or hide thinking",
    "app.editor.external": "edit the message in $VISUAL / $EDITOR",
    "app.transcript.earlier": "show earlier messages",
    "app.commandPalette": "command palette",
    "app.permissions.cycle": "next permission mode (default, accept-edits, plan)",
    "app.session.new": "new session",
    "app.session.tree": "session tree",
    "app.session.fork": "fork",
    "app.session.resume": "resume a session",
}


def hotkeys_report() -> str:
    from ...config.keybindings import key_text

    lines = []
    for action, what in KEY_HELP.items():
        bound = key_text(action)
        if bound:
            lines.append(f"{bound.replace('/', ' / '):<24} {what}")
    lines.append(f"{'Esc Esc':<24} rewind (empty editor, agent idle)")
    lines += ["", "/ commands · @ files · Tab paths · !cmd runs a shell command (!!cmd keeps it out of context)",
              "Change keys in keybindings.json (docs/tui.md)."]
    return "\n".join(lines)


async def hotkeys(ctx: CommandContext, args: str) -> None:
    ctx.front.show_text("Keys", hotkeys_report())


def extensions_report(infos: list[dict[str, Any]]) -> str:
    if not infos:
        return "No extensions, hooks or tool factories are loaded (docs/extensions.md says where they go)."
    blocks = []
    for info in infos:
        head = f"{info['name']} ({info['kind']}, {info['status']})  {info['path']}"
        lines = [head]
        for key in ("tools", "commands", "shortcuts", "flags", "renderers", "providers", "handlers"):
            if info.get(key):
                lines.append(f"  {key:<10} {', '.join(map(str, info[key]))}")
        if info.get("switched_off"):
            lines.append(f"  switched off (failed too often): {', '.join(map(str, info['switched_off']))}")
        lines += [f"  warning: {w}" for w in info.get("warnings", [])]
        lines += [f"  error: {e}" for e in info.get("errors", [])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


async def extensions(ctx: CommandContext, args: str) -> None:
    ctx.front.show_text("Extensions", extensions_report(ctx.host.extensions.infos()))


async def reload(ctx: CommandContext, args: str) -> None:
    """Settings, models, skills, templates and every extension again from disk."""
    await ctx.host.reload(ctx.session)
    infos = ctx.host.extensions.infos()
    failed = 0
    for info in infos:
        for error in info.get("errors", []):
            failed += 1
            ctx.front.notify(f"{info['name']}: {error}", "error")
        for warning in info.get("warnings", []):
            if "previous version" in warning:
                failed += 1
                ctx.front.notify(f"{info['name']}: {warning}", "warning")
    if ctx.session.model is None:  # a models.json written since start-up: use it now
        model = ctx.host.default_model()
        if model is not None and await ctx.session.set_model(model):
            ctx.front.notify(f"Model: {model.provider}/{model.id}")
    loaded = sum(1 for i in infos if i["status"] == "loaded")
    ctx.front.notify(f"Reloaded: {loaded} extension{'s' if loaded != 1 else ''} loaded"
                     + (f", {failed} problem{'s' if failed != 1 else ''} (above)." if failed else "."))


async def settings(ctx: CommandContext, args: str) -> None:
    from ...config.themes import discover_themes, theme_folders

    themes, _ = discover_themes(theme_folders(ctx.host.home))
    fields = setting_fields(sorted(themes))
    changes = await ctx.front.edit_settings(fields, read_values(ctx.host.settings, fields))
    if not changes:
        return
    ctx.host.settings.update(as_update(changes))
    ctx.front.settings_changed(changes)
    ctx.front.notify(f"Saved {', '.join(sorted(changes))} in {ctx.host.settings.agent_path}.")


async def quit_(ctx: CommandContext, args: str) -> None:
    ctx.front.request_quit()


COMMANDS = [
    BuiltinCommand("settings", "change settings in a form", settings, category="Wolli"),
    BuiltinCommand("reload", "reload settings, models, skills and extensions", reload, category="Wolli",
                   needs_idle=True),
    BuiltinCommand("extensions", "what each extension registered, and its errors", extensions, category="Wolli"),
    BuiltinCommand("hotkeys", "the keys and what they do", hotkeys, category="Wolli"),
    BuiltinCommand("quit", "quit Wolli", quit_, category="Wolli", aliases=("exit",)),
]
