"""The MCP manager: every configured server of one host, its tools, and what the user switched off.

The runtime owns one manager per host (created only when a server is configured, so a
Wolli without MCP never imports any of this). Servers start in the background, in
parallel; each state change is published to listeners (the front ends, RPC events) and
the session's tools follow. What the user switches off for this agent (a server, or one
tool of a server) is kept in the agent's ``settings.json`` under ``mcp``.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ..agent.tool import ToolDefinition
from .oauth import LoginHandler, ShowUrl, TokenStore
from .server import McpServer
from .tool_search import NAME as SEARCH_NAME
from .tool_search import estimate_tokens, make_search_tool, should_defer
from .tools import make_tool, one_line, tool_name
from .types import ServerConfig

log = logging.getLogger("wolli.mcp")
Listener = Callable[[dict[str, Any]], None]


class McpManager:
    def __init__(self, *, settings: Any, log_dir: Path | None, tokens: TokenStore | None = None,
                 on_tools_changed: Callable[[], None] = lambda: None,
                 context_window: Callable[[], int | None] = lambda: None) -> None:
        self.settings = settings
        self.log_dir = log_dir
        self.tokens = tokens or TokenStore()
        self.servers: dict[str, McpServer] = {}
        self.on_tools_changed = on_tools_changed
        self.context_window = context_window
        self.listeners: list[Listener] = []
        self.started = False
        self.loaded: list[str] = []  # deferred tools loaded by tool_search, in load order
        self._tool_cache: dict[tuple[str, int], list[ToolDefinition]] = {}
        self.deferred_tools: list[ToolDefinition] = []
        self.search_active = False

    # ------------------------------------------------------------------ configuration

    def _prefs(self) -> dict[str, Any]:
        value = self.settings.get("mcp") if self.settings is not None else None
        return value if isinstance(value, dict) else {}

    def server_enabled(self, name: str) -> bool:
        return name not in (self._prefs().get("disabledServers") or [])

    def tool_enabled(self, server: str, tool: str) -> bool:
        return f"{server}/{tool}" not in (self._prefs().get("disabledTools") or [])

    def add(self, config: ServerConfig) -> McpServer:
        """Add (or replace) a server; started at once when the manager already runs."""
        old = self.servers.get(config.name)
        if old is not None and old.config == config:
            return old
        if old is not None:
            asyncio.get_running_loop().create_task(old.stop())
        server = McpServer(config, log_dir=self.log_dir, tokens=self.tokens, on_change=self._changed,
                           enabled=self.server_enabled(config.name))
        self.servers[config.name] = server
        if self.started and server.state != "disabled":
            server.start()
        return server

    def discard(self, name: str) -> bool:
        """Remove a server now (its tools go at once); it is stopped in the background."""
        server = self.servers.pop(name, None)
        if server is None:
            return False
        asyncio.get_running_loop().create_task(server.stop())
        self._changed(server, removed=True)
        return True

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Start every enabled server in the background (call after the first frame)."""
        self.started = True
        for server in self.servers.values():
            if server.state != "disabled":
                server.start()

    async def wait_settled(self, timeout: float) -> None:
        """Until each started server is ready or failed, at most ``timeout`` seconds."""
        waits = [s.wait_settled() for s in self.servers.values() if not s.settled]
        if waits:
            try:
                await asyncio.wait_for(asyncio.gather(*waits), timeout)
            except TimeoutError:
                pass

    async def shutdown(self) -> None:
        self.started = False
        await asyncio.gather(*(s.stop() for s in self.servers.values()), return_exceptions=True)

    # ------------------------------------------------------------------ changes

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None

    def _changed(self, server: McpServer, removed: bool = False) -> None:
        self._tool_cache.clear()
        status = self.status(server)
        if removed:
            status["state"] = "removed"
        for listener in list(self.listeners):
            try:
                listener(status)
            except Exception:
                log.exception("mcp listener failed")
        try:
            self.on_tools_changed()
        except Exception:
            log.exception("refreshing tools after an MCP change failed")

    # ------------------------------------------------------------------ user controls

    def _save_pref(self, key: str, item: str, present: bool) -> None:
        values = [v for v in (self._prefs().get(key) or []) if v != item]
        if present:
            values.append(item)
        self.settings.update({"mcp": {key: values}})

    async def set_server_enabled(self, name: str, enabled: bool) -> None:
        server = self._server(name)
        self._save_pref("disabledServers", name, not enabled)
        if enabled and server.state == "disabled":
            server.start()
        elif not enabled:
            await server.stop("disabled")

    def set_tool_enabled(self, server: str, tool: str, enabled: bool) -> None:
        self._server(server)
        self._save_pref("disabledTools", f"{server}/{tool}", not enabled)
        self._changed(self.servers[server])

    async def reconnect(self, name: str) -> None:
        server = self._server(name)
        if server.state == "disabled":
            raise ValueError(f"{name} is disabled; enable it first")
        await server.restart()

    async def login(self, name: str, show_url: ShowUrl) -> McpServer:
        """Interactive OAuth: show the URL, wait for the browser's redirect, connect."""
        server = self._server(name)
        if server.config.transport == "stdio":
            raise ValueError(f"{name} is a stdio server; only remote (http, sse) servers log in")
        async with LoginHandler(show_url) as handler:
            await server.restart(login=handler)
            await server.wait_settled()
        if server.state == "ready":  # later reconnects refresh the token without a browser
            server._login = None
        return server

    def _server(self, name: str) -> McpServer:
        server = self.servers.get(name)
        if server is None:
            known = ", ".join(self.servers) or "none configured"
            raise ValueError(f"no MCP server named {name!r} (servers: {known})")
        return server

    # ------------------------------------------------------------------ tools

    def all_tools(self) -> list[ToolDefinition]:
        """Every enabled tool of every ready server, in server order."""
        out: list[ToolDefinition] = []
        for server in self.servers.values():
            if server.state != "ready":
                continue
            key = (server.name, id(server.offer))
            cached = self._tool_cache.get(key)
            if cached is None:
                cached = [make_tool(server, info) for info in server.offer.tools
                          if self.tool_enabled(server.name, info.name)]
                self._tool_cache[key] = cached
            out.extend(cached)
        return out

    def tools(self) -> list[ToolDefinition]:
        """What the session offers the model: all tools, or (tool search) the loaded ones
        after a ``tool_search`` tool listing the rest."""
        tools = self.all_tools()
        prefs = self._prefs()
        self.search_active = should_defer(tools, prefs.get("toolSearch", "auto"),
                                          prefs.get("toolSearchThreshold"), self.context_window())
        if not self.search_active:
            self.deferred_tools = []
            return tools
        by_name = {t.name: t for t in tools}
        self.deferred_tools = [t for t in tools if t.name not in self.loaded]
        listing = "\n".join(f"- {t.name}: {self._one_line(t)}" for t in self.deferred_tools)
        search = make_search_tool(lambda: self.deferred_tools, listing, self._load)
        return [search, *(by_name[n] for n in self.loaded if n in by_name)]

    def _one_line(self, tool: ToolDefinition) -> str:
        for server in self.servers.values():
            for info in server.offer.tools:
                if tool_name(server.name, info.name) == tool.name:
                    return one_line(info)
        return tool.description[:120]

    def _load(self, names: list[str]) -> None:
        added = [n for n in names if n not in self.loaded]
        if added:
            self.loaded.extend(added)
            self.on_tools_changed()

    def token_estimate(self) -> dict[str, int]:
        """Tokens the MCP tools cost each request, all of them and as offered now."""
        return {"all": estimate_tokens(self.all_tools()), "offered": estimate_tokens(self.tools())}

    # ------------------------------------------------------------------ views

    def status(self, server: McpServer) -> dict[str, Any]:
        config = server.config
        offer = server.offer if server.state == "ready" else None
        return {
            "name": server.name, "state": server.state, "error": server.error, "transport": config.transport,
            "target": config.target, "scope": config.scope, "source": config.source,
            "tools": [{"name": info.name, "toolName": tool_name(server.name, info.name),
                       "enabled": self.tool_enabled(server.name, info.name), "readOnly": info.read_only,
                       "destructive": info.destructive, "description": one_line(info)}
                      for info in (offer.tools if offer else [])],
            "prompts": [p.name for p in offer.prompts] if offer else [],
            "resources": len(offer.resources) if offer else 0,
            "summary": server.summary(),
            "logPath": str(server.log.path) if server.log.path else None,
            "pid": server.process.pid if server.process is not None else None,
        }

    def snapshot(self) -> list[dict[str, Any]]:
        return [self.status(s) for s in self.servers.values()]

    def log_text(self, name: str, limit: int = 64 * 1024) -> str:
        server = self._server(name)
        path = server.log.path
        if path is None or not path.exists():
            return "\n".join(server.log.tail) or "(nothing logged)"
        with open(path, "rb") as fh:
            fh.seek(0, 2)
            size = fh.tell()
            fh.seek(max(0, size - limit))
            return fh.read().decode("utf-8", "replace")


def report(servers: list[dict[str, Any]], *, search: dict[str, Any] | None = None) -> str:
    """The text ``/mcp`` and ``wolli mcp list`` show: one block a server."""
    if not servers:
        return ("No MCP servers are configured. Add them to mcp.json in the agent home or .mcp.json in the "
                "project (docs/mcp.md).")
    lines = []
    for s in servers:
        lines.append(f"{s['name']}  {s['summary']}")
        lines.append(f"  {s['transport']}  {s['target']}  ({s['scope']}: {s['source']})")
        off = [t["name"] for t in s["tools"] if not t["enabled"]]
        if s["tools"]:
            names = ", ".join(t["name"] for t in s["tools"] if t["enabled"])
            lines.append(f"  tools: {names}" + (f"  (off: {', '.join(off)})" if off else ""))
        if s["prompts"]:
            lines.append(f"  prompts: {', '.join('/' + tool_name(s['name'], p) for p in s['prompts'])}")
        if s["resources"]:
            lines.append(f"  resources: {s['resources']} (attach with @{s['name']}:<uri>)")
    if search:
        lines.append("")
        lines.append(f"tool search: {search['state']}, MCP tools ~{search['all']} tokens, "
                     f"offered ~{search['offered']} tokens per request")
    return "\n".join(lines)


def is_tool_search(name: str) -> bool:
    return name == SEARCH_NAME
