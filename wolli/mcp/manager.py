"""The MCP manager: every configured server of one host, its tools, and what the user switched off.

The runtime owns one manager per host (created only when a server is configured, so a
Wolli without MCP never imports any of this). Servers start in the background, in
parallel; each state change is published to listeners (the front ends, RPC events) and
the sessions' tools follow. What the user switches off for this agent (a server, or one
tool of a server) is kept in the agent's ``settings.json`` under ``mcp``.

Start-up does not wait for servers it already knows: each server's last list is cached
(:mod:`.cache`), its tools are offered from that list while it connects, and a call to it
waits until it is ready. Only servers seen for the first time are waited for (print mode).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Coroutine, Mapping
from pathlib import Path
from typing import Any, Protocol

from ..agent.tool import ToolDefinition
from ..base.safe_files import read_tail
from .cache import OfferCache, config_key
from .oauth import LoginHandler, ShowUrl, TokenStore
from .sdk_log import route_sdk_logs
from .server import DEFAULT_CALL_WAIT, McpServer
from .tool_search import NAME as SEARCH_NAME
from .tool_search import SearchState, estimate_tokens, make_search_tool, should_defer
from .tools import checked_offer, make_tool, one_line, tool_name
from .types import ServerConfig, ServerOffer

log = logging.getLogger("wolli.mcp")
Listener = Callable[[dict[str, Any]], None]


class McpSettings(Protocol):
    """What the manager reads and writes of the agent's settings (``mcp.*``):
    :class:`wolli.config.settings.Settings` is one."""

    def get(self, key: str, default: Any = None) -> Any: ...

    def update(self, partial: dict[str, Any]) -> None: ...


class McpManager:
    def __init__(self, *, settings: McpSettings | None, log_dir: Path | None, tokens: TokenStore | None = None,
                 cache: OfferCache | None = None, cwd: str | None = None,
                 on_tools_changed: Callable[[], None] = lambda: None) -> None:
        self.settings = settings
        self.log_dir = log_dir
        self.tokens = tokens or TokenStore()
        self.cache = cache or OfferCache(None)
        self.cwd = cwd
        self.servers: dict[str, McpServer] = {}
        self.on_tools_changed = on_tools_changed
        self.listeners: list[Listener] = []
        self.started = False
        self._keys: dict[str, str] = {}
        self._tool_cache: dict[tuple[str, int, int], list[ToolDefinition]] = {}
        self._background: set[asyncio.Task[None]] = set()
        route_sdk_logs(log_dir / "mcp-sdk.log" if log_dir else None)

    # ------------------------------------------------------------------ configuration

    def _prefs(self) -> Mapping[str, Any]:
        value = self.settings.get("mcp") if self.settings is not None else None
        return value if isinstance(value, dict) else {}

    def server_enabled(self, name: str) -> bool:
        return name not in (self._prefs().get("disabledServers") or [])

    def tool_enabled(self, server: str, tool: str) -> bool:
        return f"{server}/{tool}" not in (self._prefs().get("disabledTools") or [])

    def startup_timeout(self) -> float:
        """``mcp.startupTimeoutMs`` in seconds: how long start-up and a call wait for a server."""
        value = self._prefs().get("startupTimeoutMs")
        return value / 1000 if isinstance(value, int | float) and not isinstance(value, bool) and value > 0 \
            else DEFAULT_CALL_WAIT

    def add(self, config: ServerConfig) -> McpServer:
        """Add (or replace) a server; started at once when the manager already runs."""
        old = self.servers.get(config.name)
        if old is not None and old.config == config:
            return old
        if old is not None:
            self._in_background(old.stop())
        key = config_key(config, self.cwd)
        self._keys[config.name] = key
        enabled = self.server_enabled(config.name)
        server = McpServer(config, log_dir=self.log_dir, tokens=self.tokens, on_change=self._changed,
                           enabled=enabled, cached=self.cache.get(key) if enabled else None,
                           call_wait=self.startup_timeout)
        self.servers[config.name] = server
        if self.started and server.state != "disabled":
            server.start()
        return server

    def discard(self, name: str) -> bool:
        """Remove a server now (its tools go at once); it is stopped in the background."""
        server = self.servers.pop(name, None)
        if server is None:
            return False
        self._in_background(server.stop())
        self._changed(server, removed=True)
        return True

    def _in_background(self, work: Coroutine[object, object, None]) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    # ------------------------------------------------------------------ life cycle

    def start(self) -> None:
        """Start every enabled server in the background (call after the first frame)."""
        self.started = True
        for server in self.servers.values():
            if server.state != "disabled":
                server.start()

    def all_known(self) -> bool:
        """Whether every enabled server has a known (cached) list, so nothing need be waited for."""
        return all(s.known is not None for s in self.servers.values() if s.state != "disabled")

    async def wait_settled(self, timeout: float, *, known_too: bool = True) -> None:
        """Until each started server is ready or failed, at most ``timeout`` seconds.
        ``known_too=False``: only the servers with no known (cached) list, i.e. those whose
        tools the first request would otherwise miss."""
        waits = [s.wait_settled() for s in self.servers.values()
                 if not s.settled and (known_too or s.known is None)]
        if waits:
            try:
                await asyncio.wait_for(asyncio.gather(*waits), timeout)
            except TimeoutError:
                pass

    async def shutdown(self, *, exiting: bool = True) -> None:
        """Stop every server, all at once. ``exiting`` (Wolli is about to exit): each gets a
        short grace after its stdin closes, the watchdog ends what is left (see stdio.py)."""
        self.started = False
        await asyncio.gather(*(s.stop(exiting=exiting) for s in self.servers.values()), return_exceptions=True)
        for task in list(self._background):
            task.cancel()

    # ------------------------------------------------------------------ changes

    def add_listener(self, listener: Listener) -> Callable[[], None]:
        self.listeners.append(listener)
        return lambda: self.listeners.remove(listener) if listener in self.listeners else None

    def _changed(self, server: McpServer, removed: bool = False) -> None:
        self._tool_cache = {k: v for k, v in self._tool_cache.items() if k[0] != server.name}
        if server.state == "ready" and not removed:
            self._remember(server)
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

    def _remember(self, server: McpServer) -> None:
        """A fresh list: keep it for the next start (written only when it changed)."""
        key = self._keys.get(server.name)
        if key is not None and self.servers.get(server.name) is server:
            try:
                self.cache.put(key, server.name, checked_offer(server.offer))
            except Exception:  # never let the cache break a connection
                log.exception("could not cache the MCP offer of %s", server.name)

    # ------------------------------------------------------------------ user controls

    def _save_pref(self, key: str, item: str, present: bool) -> None:
        if self.settings is None:
            raise ValueError("no settings to save the choice in")
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
        if server.state == "disabled":
            raise ValueError(f"{name} is disabled; enable it first")
        if server.config.own_authorization:
            raise ValueError(f"{name} sends its own Authorization header ({server.config.source}); "
                             "there is no OAuth login for it")
        async with LoginHandler(show_url, port=self.tokens.callback_port(name, server.config)) as handler:
            self.tokens.prepare_login(name, server.config, handler.redirect_uri)
            await server.restart(login=handler)
            await server.wait_settled()
        server.forget_login()
        return server

    def _server(self, name: str) -> McpServer:
        server = self.servers.get(name)
        if server is None:
            known = ", ".join(self.servers) or "none configured"
            raise ValueError(f"no MCP server named {name!r} (servers: {known})")
        return server

    # ------------------------------------------------------------------ tools

    def all_tools(self) -> list[ToolDefinition]:
        """Every enabled tool of every server with a list to offer (ready, or connecting with a
        known list), in server order."""
        out: list[ToolDefinition] = []
        for server in self.servers.values():
            offer = server.offered()
            if offer is None:
                continue
            key = (server.name, id(server), id(offer))
            cached = self._tool_cache.get(key)
            if cached is None:
                cached = [make_tool(server, info, checked=offer.schemas_checked) for info in offer.tools
                          if self.tool_enabled(server.name, info.name)]
                self._tool_cache[key] = cached
            out.extend(cached)
        return out

    def tools(self, search: SearchState, context_window: int | None, on_loaded: Callable[[], None]) -> list[ToolDefinition]:
        """What one session offers the model: all tools, or (tool search) a ``tool_search``
        tool listing the deferred ones, then the ones ``search`` has loaded, in load order.
        ``on_loaded`` runs when the model loads more (the session re-reads its tools)."""
        tools = self.all_tools()
        prefs = self._prefs()
        search.active = should_defer(tools, prefs.get("toolSearch", "auto"), prefs.get("toolSearchThreshold"),
                                     context_window)
        if not search.active:
            return tools
        by_name = {t.name: t for t in tools}
        lines = self._one_lines()
        # Every tool, loaded or not: the listing (the search tool's description) stays the
        # same as tools load, so the prefix a provider caches does too.
        listing = "\n".join(f"- {t.name}: {lines.get(t.name) or t.description[:120]}" for t in tools)

        def load(names: list[str]) -> None:
            if search.load(names):
                on_loaded()

        tool = make_search_tool(self.all_tools, listing, load)
        return [tool, *(by_name[n] for n in search.loaded if n in by_name)]

    def _one_lines(self) -> dict[str, str]:
        out: dict[str, str] = {}
        for server in self.servers.values():
            offer = server.offered()
            for info in offer.tools if offer is not None else []:
                out[tool_name(server.name, info.name)] = one_line(info)
        return out

    def token_estimate(self, search: SearchState | None = None, context_window: int | None = None) -> dict[str, int]:
        """Tokens the MCP tools cost each request: all of them, and as offered to a session
        with ``search`` (a fresh session when None)."""
        offered = self.tools(search or SearchState(), context_window, lambda: None)
        return {"all": estimate_tokens(self.all_tools()), "offered": estimate_tokens(offered)}

    # ------------------------------------------------------------------ views

    def status(self, server: McpServer) -> dict[str, Any]:
        config = server.config
        offer: ServerOffer | None = server.offer if server.state == "ready" else None
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
        try:
            data, _ = read_tail(path, limit) if path is not None else (b"", False)
        except OSError:
            data = b""
        return data.decode("utf-8", "replace") if data else "\n".join(server.log.tail) or "(nothing logged)"


def report(servers: list[dict[str, Any]], *, search: Mapping[str, Any] | None = None) -> str:
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
