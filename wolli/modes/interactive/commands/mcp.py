"""``/mcp``: the MCP servers, their state and tools, and what the user can do about them.

``/mcp`` picks a server and then an action; the same actions are typed directly:
``/mcp list``, ``/mcp reconnect NAME``, ``/mcp enable|disable NAME`` (or ``NAME/TOOL`` for
one tool), ``/mcp log NAME``, ``/mcp login NAME``, ``/mcp approve`` (the project's file).
The logic is the manager's (:mod:`wolli.mcp.manager`); this only asks and shows.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

from ..open_url import open_in_browser
from .definition import BuiltinCommand, CommandContext
from .front import Front

if TYPE_CHECKING:
    from ....runtime.host.mcp_link import McpLink

ACTIONS = ("list", "reconnect", "enable", "disable", "log", "login", "approve")
NONE_CONFIGURED = ("No MCP servers are configured. Add them to mcp.json in the agent home or .mcp.json in the "
                   "project (docs/mcp.md).")


class McpControl(Protocol):
    """The MCP servers as ``/mcp`` drives them: this process's (:class:`LinkControl`) or a
    server's, for an attached app (``modes/server/remote_commands.py``)."""

    async def statuses(self) -> list[dict[str, Any]]: ...

    async def report(self) -> str: ...

    async def project_pending(self) -> bool: ...

    async def approve(self) -> str: ...

    async def set_enabled(self, server: str, tool: str | None, enabled: bool) -> None: ...

    async def reconnect(self, server: str) -> None: ...

    async def log(self, server: str) -> str: ...

    async def login(self, server: str, show: Callable[[str], None]) -> tuple[str, bool]:
        """(the outcome to say, whether the server is ready)."""


class LinkControl:
    def __init__(self, link: McpLink) -> None:
        self.link = link

    async def statuses(self) -> list[dict[str, Any]]:
        return self.link.manager.snapshot()

    async def report(self) -> str:
        return self.link.report()

    async def project_pending(self) -> bool:
        return bool(self.link.sources.project_pending)

    async def approve(self) -> str:
        return await self.link.approve_project_now()

    async def set_enabled(self, server: str, tool: str | None, enabled: bool) -> None:
        if tool:
            self.link.manager.set_tool_enabled(server, tool, enabled)
        else:
            await self.link.manager.set_server_enabled(server, enabled)

    async def reconnect(self, server: str) -> None:
        await self.link.manager.reconnect(server)

    async def log(self, server: str) -> str:
        return self.link.manager.log_text(server)

    async def login(self, server: str, show: Callable[[str], None]) -> tuple[str, bool]:
        found = await self.link.manager.login(server, show)
        return found.summary(), found.state == "ready"


def _link(ctx: CommandContext) -> McpLink | None:
    return ctx.host_or_none.mcp if ctx.host_or_none is not None else None


async def mcp(ctx: CommandContext, args: str) -> None:
    link = _link(ctx)
    await mcp_command(ctx.front, LinkControl(link) if link is not None else None, args)


async def mcp_command(front: Front, control: McpControl | None, args: str) -> None:
    """``/mcp [ACTION [server[/tool]]]`` on ``control`` (None: no MCP server is configured)."""
    if control is None:
        front.show_text("MCP servers", NONE_CONFIGURED)
        return
    action, _, target = args.strip().partition(" ")
    target = target.strip()
    if not action:
        await _menu(front, control)
        return
    if action not in ACTIONS:
        front.notify(f"/mcp {action}: unknown; use one of {', '.join(ACTIONS)}", "warning")
        return
    await run_action(front, control, action, target)


async def run_action(front: Front, control: McpControl, action: str, target: str) -> None:
    if action == "list":
        front.show_text("MCP servers", await control.report())
        return
    if action == "approve":
        front.notify(await control.approve())
        return
    if not target:
        front.notify(f"/mcp {action} needs a server name", "warning")
        return
    server, _, tool = target.partition("/")
    if action in ("enable", "disable"):
        await control.set_enabled(server, tool or None, action == "enable")
        front.notify(f"{target}: {action}d for this agent")
    elif action == "reconnect":
        await control.reconnect(server)
        front.notify(f"{server}: reconnecting")
    elif action == "log":
        front.show_text(f"MCP server {server}: log", await control.log(server))
    elif action == "login":
        def show(url: str) -> None:
            opened = open_in_browser(url)
            front.show_text(f"Log in to {server}", ("Your browser was asked to open this URL; if it did not, "
                                                    "open it yourself:" if opened else
                                                    "Open this URL in a browser to log in:") + f"\n\n{url}")

        front.notify(f"{server}: waiting for the login in the browser")
        summary, ready = await control.login(server, show)
        front.notify(f"{server}: {summary}", "info" if ready else "warning")


async def _menu(front: Front, control: McpControl) -> None:
    statuses = await control.statuses()
    if not statuses:
        front.show_text("MCP servers", await control.report())
        return
    labels = {f"{s['name']} — {s['summary']}"[:160]: s for s in statuses}
    extra = ["show all (text)"] + (["approve the project's .mcp.json"] if await control.project_pending() else [])
    chosen = await front.select("MCP servers", [*labels, *extra])
    if chosen is None:
        return
    if chosen == "show all (text)":
        await run_action(front, control, "list", "")
        return
    if chosen.startswith("approve"):
        await run_action(front, control, "approve", "")
        return
    status = labels[chosen]
    name = status["name"]
    actions = ["reconnect", "disable" if status["state"] != "disabled" else "enable", "tools…", "log"]
    if status["transport"] != "stdio":
        actions.append("login")
    action = await front.select(f"{name}", actions)
    if action == "tools…":
        tools = {f"{'on ' if t['enabled'] else 'off'} {t['name']}": t for t in status["tools"]}
        if not tools:
            front.notify(f"{name} has no tools (it is {status['state']})", "warning")
            return
        picked = await front.select(f"{name}: switch a tool on or off", list(tools))
        if picked is not None:
            tool = tools[picked]
            await run_action(front, control, "disable" if tool["enabled"] else "enable", f"{name}/{tool['name']}")
    elif action is not None:
        await run_action(front, control, action, name)


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
