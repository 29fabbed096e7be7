"""Built-in commands about Wolli itself: /settings, /reload, /extensions, /hotkeys, /quit."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..settings_form import SettingField, as_update, read_values, setting_fields
from .definition import BuiltinCommand, CommandContext
from .front import Front

if TYPE_CHECKING:
    from ....runtime.host.agent_host import AgentHost


async def hotkeys(ctx: CommandContext, args: str) -> None:
    from ..hotkeys import hotkeys_report

    shortcuts = ctx.host_or_none.extensions.registry.shortcuts if ctx.host_or_none is not None else None
    ctx.front.show_text("Keys", hotkeys_report(shortcuts))


def extensions_report(infos: list[dict[str, Any]]) -> str:
    if not infos:
        return "No extensions, hooks or tool factories are loaded (docs/extensions.md says where they go)."
    blocks = []
    for info in infos:
        package = f"  [package {info['package']}]" if info.get("package") else ""
        head = f"{info['name']} ({info['kind']}, {info['status']})  {info['path']}{package}"
        lines = [head]
        for key in ("tools", "commands", "shortcuts", "flags", "renderers", "providers", "mcp_servers", "handlers"):
            if info.get(key):
                lines.append(f"  {key:<10} {', '.join(map(str, info[key]))}")
        if info.get("switched_off"):
            lines.append(f"  switched off (failed too often): {', '.join(map(str, info['switched_off']))}")
        lines += [f"  warning: {w}" for w in info.get("warnings", [])]
        lines += [f"  error: {e}" for e in info.get("errors", [])]
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


async def extensions(ctx: CommandContext, args: str) -> None:
    words = args.split()
    if len(words) == 2 and words[0] in ("enable", "disable"):
        from .packages import switch_extension

        await switch_extension(ctx, words[1], words[0] == "enable")
        return
    ctx.front.show_text("Extensions", extensions_report(ctx.host.extensions.infos()))


async def reload(ctx: CommandContext, args: str) -> None:
    """Settings, models, skills, templates and every extension again from disk."""
    await ctx.host.reload(ctx.session)
    if ctx.session.model is None:  # a models.json written since start-up: use it now
        model = ctx.host.default_model()
        if model is not None and await ctx.session.set_model(model):
            from .model import announce_model

            announce_model(ctx, model)
    report_reload(ctx.front, ctx.host.extensions.infos())


def report_reload(front: Front, infos: list[dict[str, Any]]) -> None:
    """Each extension's errors (and a kept previous version), then how many loaded: what
    /reload says, here or in an app attached to a server."""
    failed = 0
    for info in infos:
        for error in info.get("errors", []):
            failed += 1
            front.notify(f"{info['name']}: {error}", "error")
        for warning in info.get("warnings", []):
            if "previous version" in warning:
                failed += 1
                front.notify(f"{info['name']}: {warning}", "warning")
    loaded = sum(1 for i in infos if i.get("status") == "loaded")
    front.notify(f"Reloaded: {loaded} extension{'s' if loaded != 1 else ''} loaded"
                 + (f", {failed} problem{'s' if failed != 1 else ''} (above)." if failed else "."))


def host_setting_fields(host: AgentHost) -> list[SettingField]:
    """The /settings form's fields, the theme's choices being every theme the host finds."""
    from ....config.themes import discover_themes, theme_folders

    themes, _ = discover_themes([*theme_folders(host.home), *host.extensions.installed.theme_dirs()])
    return setting_fields(sorted(themes))


async def settings(ctx: CommandContext, args: str) -> None:
    fields = host_setting_fields(ctx.host)
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
    BuiltinCommand("extensions", "what each extension registered, and its errors; enable|disable NAME",
                   extensions, category="Wolli", usage="[enable NAME|disable NAME]"),
    BuiltinCommand("hotkeys", "the keys and what they do", hotkeys, category="Wolli"),
    BuiltinCommand("quit", "quit Wolli", quit_, category="Wolli", aliases=("exit",)),
]
