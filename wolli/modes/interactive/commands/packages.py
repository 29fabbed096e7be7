"""/packages: install, update, remove, enable and disable packages from inside Wolli.

``/packages`` alone lists what is installed and offers enabling or disabling a package;
``/packages install SOURCE`` (asks first: it runs third-party code), ``remove NAME``,
``update [NAME]``, ``enable NAME`` and ``disable NAME`` change it. Every change is followed
by a reload, so it takes effect at once. ``/extensions enable|disable NAME`` switches one
extension (of a package or a loose file) on or off. The work is docs/packages.md's
``PackageManager``; the installer runs in a worker thread so the screen stays live.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from .definition import BuiltinCommand, CommandContext

if TYPE_CHECKING:
    from ....packages.manager import PackageManager

USAGE = "/packages [install SOURCE | remove NAME | update [NAME] | enable NAME | disable NAME]"


def _manager(ctx: CommandContext) -> PackageManager:
    from ....packages.manager import PackageManager

    return PackageManager(ctx.host.home, ctx.host.settings)


def packages_report(records: list[Any], infos: list[dict[str, Any]], plugins: list[Any]) -> str:
    if not records:
        return "No packages are installed. /packages install SOURCE adds one (a name, a git URL or a path; docs/packages.md)."
    blocks = []
    agents = {p.name: p.agents() for p in plugins}
    for record in records:
        kind = "Claude Code plugin" if record.kind == "claude-plugin" else "package"
        state = "enabled" if record.enabled else "disabled"
        lines = [f"{record.name} {record.version or ''}  ({kind}, {state})  from {record.source}"]
        for info in infos:
            if info.get("package") and _same(info["package"], record.name):
                lines.append(f"  {info['kind']:<12} {info['name']} ({info['status']})")
        if agents.get(record.name):
            lines.append(f"  agents       {', '.join(agents[record.name])} (kept for subagents)")
        blocks.append("\n".join(lines))
    return "\n\n".join(blocks)


def _same(a: str, b: str) -> bool:
    from ....packages.sources import canonical_name

    return canonical_name(a) == canonical_name(b)


async def _apply(ctx: CommandContext, done: str) -> None:
    await ctx.host.reload(ctx.session)
    problems = [f"{i['name']}: {e}" for i in ctx.host.extensions.infos() for e in i.get("errors", [])]
    for problem in problems:
        ctx.front.notify(problem, "error")
    ctx.front.notify(done + (" (problems above)" if problems else ""))


async def packages(ctx: CommandContext, args: str) -> None:
    from ....packages.manager import PackageError

    manager = _manager(ctx)
    words = args.split()
    action = words[0] if words else ""
    try:
        if not action or action == "list":
            await _list_and_offer(ctx, manager)
        elif action == "install" and len(words) == 2:
            source = words[1]
            from ....packages.sources import parse_source

            plan = manager.plan(parse_source(source, ctx.session.cwd))
            if not await ctx.front.confirm("Install a package?", plan):
                ctx.front.notify("Not installed.")
                return
            result = await asyncio.to_thread(manager.install, source, cwd=ctx.session.cwd)
            for warning in result.warnings:
                ctx.front.notify(warning, "warning")
            await _apply(ctx, f"Installed {result.record.name} {result.record.version or ''}".rstrip() + ".")
        elif action == "remove" and len(words) == 2:
            record = await asyncio.to_thread(manager.remove, words[1])
            await _apply(ctx, f"Removed {record.name}.")
        elif action == "update" and len(words) <= 2:
            name = words[1] if len(words) == 2 else None
            if not await ctx.front.confirm("Update packages?", f"Update {name or 'every package'} from where it came "
                                           "from? This runs third-party code with your permissions."):
                return
            results = await asyncio.to_thread(manager.update, name)
            await _apply(ctx, "Updated " + (", ".join(f"{r.record.name} {r.record.version or ''}".rstrip()
                                                      for r in results) or "nothing") + ".")
        elif action in ("enable", "disable") and len(words) == 2:
            if not _is_package(manager, words[1]) and words[1] in {i["name"] for i in ctx.host.extensions.infos()}:
                await switch_extension(ctx, words[1], action == "enable")  # one extension of a package
                return
            record = manager.set_enabled(words[1], action == "enable")
            await _apply(ctx, f"{record.name} is {action}d.")
        else:
            ctx.front.notify(f"usage: {USAGE}", "warning")
    except (PackageError, ValueError) as exc:
        ctx.front.notify(str(exc), "error")


async def _list_and_offer(ctx: CommandContext, manager: PackageManager) -> None:
    records = manager.records()
    ctx.front.show_text("Packages", packages_report(records, ctx.host.extensions.infos(),
                                                    ctx.host.extensions.installed.plugins))
    if not records:
        return
    options = [f"{'Disable' if r.enabled else 'Enable'} {r.name}" for r in records]
    extensions = [i for i in ctx.host.extensions.infos()
                  if i.get("package") and any(_same(i["package"], r.name) for r in records)]
    options += [f"{'Enable' if i['status'] == 'disabled' else 'Disable'} extension {i['name']}" for i in extensions]
    chosen = await ctx.front.select("Switch a package or one of its extensions on or off (Esc: leave it)", options)
    if chosen is None:
        return
    verb, _, name = chosen.partition(" ")
    if name.startswith("extension "):
        await switch_extension(ctx, name.removeprefix("extension "), verb == "Enable")
        return
    record = manager.set_enabled(name, verb == "Enable")
    await _apply(ctx, f"{record.name} is {'enabled' if record.enabled else 'disabled'}.")


def _is_package(manager: PackageManager, name: str) -> bool:
    from ....packages.sources import canonical_name

    return any(r.key == canonical_name(name) for r in manager.records())


async def switch_extension(ctx: CommandContext, name: str, enabled: bool) -> None:
    """``/extensions enable|disable NAME``: settings ``disabledExtensions``, then a reload."""
    known = {i["name"] for i in ctx.host.extensions.infos()}
    if name not in known:
        ctx.front.notify(f"no extension named {name!r} (see /extensions)", "error")
        return

    ctx.host.settings.modify(extension_switch(name, enabled))
    await _apply(ctx, f"{name} is {'enabled' if enabled else 'disabled'}.")


def extension_switch(name: str, enabled: bool) -> Callable[[dict[str, Any]], None]:
    """The settings change that switches the extension ``name`` on or off
    (``disabledExtensions``; a reload applies it)."""
    def change(data: dict[str, Any]) -> None:
        current = [str(v) for v in data.get("disabledExtensions") or [] if str(v) != name]
        if not enabled:
            current.append(name)
        if current:
            data["disabledExtensions"] = current
        else:
            data.pop("disabledExtensions", None)

    return change


def _complete(ctx: CommandContext, prefix: str) -> list[dict[str, Any]]:
    words = ["install", "remove", "update", "enable", "disable", "list"]
    return [{"value": w, "label": w} for w in words if w.startswith(prefix)]


COMMANDS = [
    BuiltinCommand("packages", "installed packages and plugins: install, update, remove, enable, disable",
                   packages, category="Wolli", usage="[install SOURCE|remove NAME|update [NAME]|enable NAME|disable NAME]",
                   complete=_complete, needs_idle=True),
]
