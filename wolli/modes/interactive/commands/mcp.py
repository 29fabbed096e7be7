"""``/mcp``: the MCP servers, their state and tools, and what the user can do about them.

``/mcp`` picks a server and then an action; the same actions are typed directly:
``/mcp list``, ``/mcp reconnect NAME``, ``/mcp enable|disable NAME`` (or ``NAME/TOOL`` for
one tool), ``/mcp log NAME``, ``/mcp login NAME``, ``/mcp approve`` (the project's file).
The logic is the manager's (:mod:`wolli.mcp.manager`); this only asks and shows.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..open_url import open_in_browser
from .definition import BuiltinCommand, CommandContext

if TYPE_CHECKING:
    from ....runtime.host.mcp_link import McpLink

ACTIONS = ("list", "reconnect", "enable", "disable", "log", "login", "approve")


def _link(ctx: CommandContext) -> McpLink | None:
    return ctx.host_or_none.mcp if ctx.host_or_none is not None else None


async def mcp(ctx: CommandContext, args: str) -> None:
    link = _link(ctx)
    if link is None:
        ctx.front.show_text("MCP servers", "No MCP servers are configured. Add them to mcp.json in the agent "
                                           "home or .mcp.json in the project (docs/mcp.md).")
        return
    action, _, target = args.strip().partition(" ")
    target = target.strip()
    if not action:
        await _menu(ctx, link)
        return
    if action not in ACTIONS:
        ctx.front.notify(f"/mcp {action}: unknown; use one of {', '.join(ACTIONS)}", "warning")
        return
    await run_action(ctx, link, action, target)


async def run_action(ctx: CommandContext, link: McpLink, action: str, target: str) -> None:
    manager = link.manager
    if action == "list":
        ctx.front.show_text("MCP servers", link.report())
        return
    if action == "approve":
        ctx.front.notify(await link.approve_project_now())
        return
    if not target:
        ctx.front.notify(f"/mcp {action} needs a server name", "warning")
        return
    server, _, tool = target.partition("/")
    if action in ("enable", "disable"):
        if tool:
            manager.set_tool_enabled(server, tool, action == "enable")
        else:
            await manager.set_server_enabled(server, action == "enable")
        ctx.front.notify(f"{target}: {action}d for this agent")
    elif action == "reconnect":
        await manager.reconnect(server)
        ctx.front.notify(f"{server}: reconnecting")
    elif action == "log":
        ctx.front.show_text(f"MCP server {server}: log", manager.log_text(server))
    elif action == "login":
        def show(url: str) -> None:
            opened = open_in_browser(url)
            ctx.front.show_text(f"Log in to {server}", ("Your browser was asked to open this URL; if it did not, "
                                                        "open it yourself:" if opened else
                                                        "Open this URL in a browser to log in:") + f"\n\n{url}")

        ctx.front.notify(f"{server}: waiting for the login in the browser")
        found = await manager.login(server, show)
        ctx.front.notify(f"{server}: {found.summary()}", "info" if found.state == "ready" else "warning")


async def _menu(ctx: CommandContext, link: McpLink) -> None:
    statuses = link.manager.snapshot()
    if not statuses:
        ctx.front.show_text("MCP servers", link.report())
        return
    labels = {f"{s['name']} — {s['summary']}"[:160]: s for s in statuses}
    extra = ["show all (text)"] + (["approve the project's .mcp.json"] if link.sources.project_pending else [])
    chosen = await ctx.front.select("MCP servers", [*labels, *extra])
    if chosen is None:
        return
    if chosen == "show all (text)":
        await run_action(ctx, link, "list", "")
        return
    if chosen.startswith("approve"):
        await run_action(ctx, link, "approve", "")
        return
    status = labels[chosen]
    name = status["name"]
    actions = ["reconnect", "disable" if status["state"] != "disabled" else "enable", "tools…", "log"]
    if status["transport"] != "stdio":
        actions.append("login")
    action = await ctx.front.select(f"{name}", actions)
    if action == "tools…":
        tools = {f"{'on ' if t['enabled'] else 'off'} {t['name']}": t for t in status["tools"]}
        if not tools:
            ctx.front.notify(f"{name} has no tools (it is {status['state']})", "warning")
            return
        picked = await ctx.front.select(f"{name}: switch a tool on or off", list(tools))
        if picked is not None:
            tool = tools[picked]
            await run_action(ctx, link, "disable" if tool["enabled"] else "enable", f"{name}/{tool['name']}")
    elif action is not None:
        await run_action(ctx, link, action, name)


def _complete(ctx: CommandContext, prefix: str) -> list[dict[str, Any]]:
    action, space, rest = prefix.partition(" ")
    if not space:
        return [{"value": a, "label": a} for a in ACTIONS if a.startswith(action)]
    link = _link(ctx)
    names = list(link.manager.servers) if link is not None else []
    return [{"value": f"{action} {n}", "label": n} for n in names if n.startswith(rest)]


COMMANDS = [
    BuiltinCommand("mcp", "MCP servers: state, tools, enable/disable, reconnect, log, login", mcp,
                   category="Wolli", usage="[list|reconnect|enable|disable|log|login|approve] [server[/tool]]",
                   complete=_complete),
]
