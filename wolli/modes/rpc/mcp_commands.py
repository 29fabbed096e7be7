"""RPC commands about MCP servers: ``get_mcp_servers``, ``mcp_set_enabled``, ``mcp_reconnect``,
``mcp_approve_project``, ``mcp_log``. State changes arrive as ``mcp_server_state`` events (docs/rpc.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .commands import CommandError, NoData, Reply, RpcServer, command

if TYPE_CHECKING:
    from ...runtime.host.mcp_link import McpLink


def _link(server: RpcServer) -> McpLink:
    link = server.host.mcp
    if link is None:
        raise CommandError("no MCP servers are configured (docs/mcp.md)")
    return link


def _name(cmd: dict[str, Any], key: str = "server") -> str:
    value = cmd.get(key)
    if not isinstance(value, str) or not value:
        raise CommandError(f"{key}: a server name (string) is required")
    return value


@command("get_mcp_servers", "query")
def get_mcp_servers(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    link = server.host.mcp
    if link is None:
        return {"servers": [], "projectPending": False, "toolSearch": None}
    search = link.search_summary()
    if search is not None:
        search.pop("state", None)
    return {"servers": link.manager.snapshot(), "projectPending": link.sources.project_pending, "toolSearch": search}


@command("mcp_set_enabled")
async def mcp_set_enabled(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    link, name = _link(server), _name(cmd)
    enabled = cmd.get("enabled")
    if not isinstance(enabled, bool):
        raise CommandError("enabled: true or false is required")
    tool = cmd.get("tool")
    try:
        if isinstance(tool, str) and tool:
            link.manager.set_tool_enabled(name, tool, enabled)
        else:
            await link.manager.set_server_enabled(name, enabled)
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return NoData


@command("mcp_reconnect")
async def mcp_reconnect(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    try:
        await _link(server).manager.reconnect(_name(cmd))
    except ValueError as exc:
        raise CommandError(str(exc)) from None
    return NoData


@command("mcp_approve_project")
async def mcp_approve_project(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    return {"message": await _link(server).approve_project_now()}


@command("get_mcp_resources", "query")
def get_mcp_resources(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """``@server:uri`` items for every resource the MCP servers offer (completion)."""
    link = server.host.mcp
    return {"resources": link.resource_items() if link is not None else []}


@command("mcp_log", "query")
def mcp_log(server: RpcServer, cmd: dict[str, Any]) -> Reply:
    """The tail of a server's log (its stderr, 64 KB at most)."""
    try:
        return {"text": _link(server).manager.log_text(_name(cmd))}
    except ValueError as exc:
        raise CommandError(str(exc)) from None
