"""The host's MCP side: which servers this run uses, when they start, how their tools reach
the sessions. The protocol work is in :mod:`wolli.mcp`; this only wires it to the host.

Nothing here runs for a Wolli with no server configured: :func:`configure` reads a few small
JSON files and creates the link only when there is something to start, and the SDK itself is
imported by the servers' own tasks, after the first frame.

Tool search state is per session (:class:`~wolli.mcp.tool_search.SearchState`): made on a
session's first tool set from its own history, so two sessions never share what they
loaded and a resumed session offers what it had loaded before.
"""

from __future__ import annotations

import asyncio
import logging
import os
import weakref
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from ...mcp.cache import FILE as CACHE_FILE
from ...mcp.cache import OfferCache
from ...mcp.config import parse_server
from ...mcp.manager import McpManager, report
from ...mcp.offers import PromptCommand, expand_references, prompt_commands, resource_refs
from ...mcp.sources import Sources, approve_project
from ...mcp.tool_search import SearchState
from ..events import NoticeEvent
from ..live.services import ToolOwner

if TYPE_CHECKING:
    from ...agent.tool import ToolDefinition
    from ...config.settings import Settings
    from ...extensions.context import ExtensionUI
    from ..live.live_session import LiveSession

log = logging.getLogger("wolli.runtime")
# Print/json mode with every server's list cached: the servers start once the first answer
# has been coming for this long (or at its first tool call).
START_AFTER_ANSWER_S = 0.2


class McpHost(Protocol):
    """What the link needs of :class:`~wolli.runtime.host.agent_host.AgentHost` (which imports this
    module, so it is named by this protocol rather than imported)."""

    settings: Settings
    home: Path
    cwd: str
    ui: ExtensionUI
    active: LiveSession | None
    resident: dict[str, LiveSession]


class McpLink:
    def __init__(self, host: McpHost) -> None:
        self.host = host
        self.sources = Sources()
        self.manager = McpManager(settings=host.settings, log_dir=host.home / "logs",
                                  cache=OfferCache(host.home / CACHE_FILE), cwd=host.cwd,
                                  on_tools_changed=self._tools_changed)
        self.manager.add_listener(self._on_state)
        self.started = False
        self._said: dict[str, str] = {}
        self._search: weakref.WeakKeyDictionary[ToolOwner, SearchState] = weakref.WeakKeyDictionary()
        self._notices: set[asyncio.Task[None]] = set()
        self._waited: set[str] = set()  # servers a prompt already waited for
        # Set once start() has launched the servers (or decided not to yet): a prompt typed
        # before the front end's background start got there waits for it (see before_prompt).
        self._launched = asyncio.Event()
        self.start_requested = False  # AgentHost.start_mcp was called (its coroutine may not run yet)

    # ------------------------------------------------------------------ configuration

    def apply(self, sources: Sources) -> None:
        self.sources = sources
        for server in sources.servers:
            self.manager.add(server)

    def register(self, name: str, raw: object, owner: str) -> None:
        """``wolli.register_mcp_server(name, config)`` (raises ValueError on a bad config)."""
        self.manager.add(parse_server(name, raw, "extension", owner, os.environ))

    def unregister(self, name: str) -> bool:
        server = self.manager.servers.get(name)
        if server is None or server.config.scope != "extension":
            return False
        return self.manager.discard(name)

    # ------------------------------------------------------------------ start

    async def start(self, *, interactive: bool, wait: bool = False, wait_known: bool = False) -> None:
        """Ask about an unapproved project file (interactive front ends), then start every
        server in the background.

        ``wait`` (print and json mode): the first request needs the servers' tools, so
        return once the servers whose tools are not known yet are up (at most the start-up
        timeout). When every server's list is known from the cache, nothing is waited for
        and the servers start only once the first answer is under way (see
        :meth:`_start_after_first_request`), so their start-up does not compete with sending
        the request. ``wait_known``: wait for every server (``wolli mcp list``)."""
        if self.started:
            return
        self.started = True
        try:
            await self._ask_about_project(interactive)
            manager = self.manager
            if wait and not wait_known and self.host.active is not None and manager.all_known():
                self._start_after_first_request(self.host.active)
                return
            manager.start()
        finally:
            self._launched.set()
        if wait or wait_known:
            self._waited.update(manager.servers)
            await manager.wait_settled(manager.startup_timeout(), known_too=wait_known)
            await self._say_not_ready(list(manager.servers))

    def _start_after_first_request(self, session: LiveSession) -> None:
        """Start the servers once the first answer has been coming for
        :data:`START_AFTER_ANSWER_S`, or at its first tool call, whichever is first. A short
        answer with no tool call (the whole run) starts nothing: no server, no SDK import for
        the exit to wait for. A server needed before then starts when it is called."""
        loop = asyncio.get_running_loop()
        timer: asyncio.TimerHandle | None = None

        def start() -> None:
            stop()
            if timer is not None:
                timer.cancel()
            if not self.manager.started:
                self.manager.start()

        def watch(event: object) -> None:
            nonlocal timer
            kind = getattr(event, "type", None)
            if kind == "message_start" and getattr(getattr(event, "message", None), "role", None) == "assistant":
                if timer is None:
                    timer = loop.call_later(START_AFTER_ANSWER_S, start)
            elif kind == "tool_execution_start":
                start()
            elif kind == "agent_end":
                stop()
                if timer is not None:
                    timer.cancel()

        stop = session.observe(watch)

    async def _ask_about_project(self, interactive: bool) -> None:
        sources = self.sources
        if not sources.project_pending or sources.project is None:
            return
        names = ", ".join(s.name for s in sources.project.servers)
        ui = self.host.ui
        if interactive and ui.has_ui:
            approved = bool(await ui.confirm(
                "Project MCP servers",
                f"{sources.project.path} wants to start these MCP servers: {names}.\n"
                "Start them? (asked again if the file changes)"))
            approve_project(self.host.home, self.host.cwd, sources.project, approved)
            sources.project_verdict = "approved" if approved else "denied"
            if approved:
                for server in sources.project.servers:
                    if server.name not in self.manager.servers:
                        self.manager.add(server)
            else:
                await self._notice("info", f"project MCP servers not started ({names}); "
                                           "run /mcp approve to change your mind")
        else:
            await self._notice("warning", f"{sources.project.path}: its MCP servers ({names}) were not "
                                          "started: approve them in the app, or pass --approve-project-mcp")

    async def approve_project_now(self) -> str:
        """``/mcp approve``: approve the project file after all."""
        project = self.sources.project
        if project is None:
            return "This folder has no .mcp.json with servers."
        approve_project(self.host.home, self.host.cwd, project, True)
        self.sources.project_verdict = "approved"
        for server in project.servers:
            self.manager.add(server)
        self.manager.start()
        return f"Approved {project.path}; starting {', '.join(s.name for s in project.servers)}."

    async def shutdown(self) -> None:
        await self.manager.shutdown(exiting=True)

    # ------------------------------------------------------------------ tools, commands, text

    def search_state(self, session: ToolOwner) -> SearchState:
        """``session``'s tool search state, read from its history the first time."""
        state = self._search.get(session)
        if state is None:
            entries = session.session_manager.iter_entries("message")  # built one at a time, as read
            state = SearchState.from_history(entry.message for entry in entries)
            self._search[session] = state
        return state

    def tools(self, session: ToolOwner | None = None) -> list[ToolDefinition]:
        """The MCP tools ``session`` offers (all, or under tool search its own loaded set)."""
        if session is None:
            return self.manager.all_tools()
        model = session.model
        return self.manager.tools(self.search_state(session), model.context_window if model is not None else None,
                                  session.refresh_tools)

    def search_summary(self) -> dict[str, Any] | None:
        """Tool search as the active session sees it (``/mcp``, RPC); None without MCP tools."""
        if not self.manager.all_tools():
            return None
        session = self.host.active
        search = self.search_state(session) if session is not None else SearchState()
        model = session.model if session is not None else None
        tokens = self.manager.token_estimate(search, model.context_window if model is not None else None)
        return {"active": search.active, "state": "on" if search.active else "off", **tokens}

    def prompt_commands(self) -> dict[str, PromptCommand]:
        return prompt_commands(self.manager)

    def resource_items(self) -> list[dict[str, str]]:
        return resource_refs(self.manager)

    async def before_prompt(self, text: str) -> str:
        """Every prompt passes here before it is sent: servers seen for the first time are
        waited for (their tools are not known yet, and the request should have them; at most
        the start-up timeout), then ``@server:uri`` references are replaced by the resources."""
        manager = self.manager
        if (self.start_requested and not self._launched.is_set()
                and any(s.known is None for s in manager.servers.values())):
            # Typed before the background start reached the servers (a busy machine, a fast
            # typist): let it launch them, then wait for them as below.
            try:
                await asyncio.wait_for(self._launched.wait(), manager.startup_timeout())
            except TimeoutError:
                pass
        pending = [s.name for s in manager.servers.values() if manager.started and s.state == "connecting"
                   and s.known is None and s.name not in self._waited]
        if pending:
            self._waited.update(pending)  # once: a server that keeps hanging does not hold every prompt
            await self._notice("info", f"waiting for MCP servers to start: {', '.join(pending)}")
            await manager.wait_settled(manager.startup_timeout(), known_too=False)
            await self._say_not_ready(pending)
        return await expand_references(manager, text) if "@" in text else text

    async def _say_not_ready(self, names: list[str]) -> None:
        """The servers among ``names`` that the start-up wait gave up on: one line each, or the
        request goes out without their tools in silence (a server that never answers the
        handshake, e.g. one writing only non-protocol text to stdout)."""
        manager = self.manager
        for name in names:
            server = manager.servers.get(name)
            if server is not None and server.state == "connecting" and server.known is None:
                await self._notice("warning", f"MCP server {name}: no answer to the MCP handshake within "
                                              f"{manager.startup_timeout():g} s; going on without its tools for now")

    def report(self) -> str:
        text = report(self.manager.snapshot(), search=self.search_summary())
        if self.sources.project_pending:
            text += "\n\nThe project's .mcp.json is not approved: /mcp approve starts its servers."
        return text

    # ------------------------------------------------------------------ changes

    def _tools_changed(self) -> None:
        for session in list(self.host.resident.values()):
            if not session.closed:
                session.refresh_tools()

    def _on_state(self, status: dict[str, Any]) -> None:
        """A failed server or one that needs a login: one line for the user (once per reason)."""
        name, state = status["name"], status["state"]
        if state in ("failed", "needs-login"):
            line = f"MCP server {name}: {status['summary']}"
            if self._said.get(name) != line:
                self._said[name] = line
                task = asyncio.get_running_loop().create_task(self._notice("warning", line))
                self._notices.add(task)
                task.add_done_callback(self._notices.discard)
        elif state == "ready":
            self._said.pop(name, None)

    async def _notice(self, level: str, message: str) -> None:
        session = self.host.active
        if session is not None and not session.closed:
            try:
                await session.emit(NoticeEvent(level, message))  # type: ignore[arg-type]
            except Exception:
                log.exception("could not report an MCP notice")
