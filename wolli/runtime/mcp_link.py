"""The host's MCP side: which servers this run uses, when they start, how their tools reach
the sessions. The protocol work is in :mod:`wolli.mcp`; this only wires it to the host.

Nothing here runs for a Wolli with no server configured: :func:`configure` reads a few small
JSON files and creates the link only when there is something to start, and the SDK itself is
imported by the servers' own tasks, after the first frame.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from ..mcp.config import parse_server
from ..mcp.manager import McpManager, report
from ..mcp.offers import PromptCommand, expand_references, prompt_commands, resource_refs
from ..mcp.sources import Sources, approve_project
from .events import NoticeEvent

if TYPE_CHECKING:
    from ..agent.tool import ToolDefinition

log = logging.getLogger("wolli.runtime")
DEFAULT_STARTUP_WAIT_S = 30.0  # print/json: how long the first prompt waits for servers


class McpLink:
    # ``host`` is the AgentHost (not imported: the host imports this module).
    def __init__(self, host: Any) -> None:
        self.host = host
        self.sources = Sources()
        self.manager = McpManager(settings=host.settings, log_dir=host.home / "logs",
                                  on_tools_changed=self._tools_changed, context_window=self._context_window)
        self.manager.add_listener(self._on_state)
        self.started = False
        self._said: dict[str, str] = {}

    # ------------------------------------------------------------------ configuration

    def apply(self, sources: Sources) -> None:
        self.sources = sources
        for server in sources.servers:
            self.manager.add(server)

    def register(self, name: str, raw: Any, owner: str) -> None:
        """``wolli.register_mcp_server(name, config)`` (raises ValueError on a bad config)."""
        import os

        self.manager.add(parse_server(name, raw, "extension", owner, os.environ))

    def unregister(self, name: str) -> bool:
        server = self.manager.servers.get(name)
        if server is None or server.config.scope != "extension":
            return False
        return self.manager.discard(name)

    # ------------------------------------------------------------------ start

    async def start(self, *, interactive: bool, wait: bool = False) -> None:
        """Ask about an unapproved project file (interactive front ends), then start every
        server in the background; ``wait``: return once they are up (print/json)."""
        if self.started:
            return
        self.started = True
        sources = self.sources
        if sources.project_pending and sources.project is not None:
            names = ", ".join(s.name for s in sources.project.servers)
            if interactive and getattr(self.host.ui, "has_ui", False):
                approved = bool(await self.host.ui.confirm(
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
        self.manager.start()
        if wait:
            setting = self.host.settings.get("mcp.startupTimeoutMs")
            timeout = setting / 1000 if isinstance(setting, int | float) and setting > 0 else DEFAULT_STARTUP_WAIT_S
            await self.manager.wait_settled(timeout)

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
        await self.manager.shutdown()

    # ------------------------------------------------------------------ tools, commands, text

    def tools(self) -> list[ToolDefinition]:
        return self.manager.tools()

    def prompt_commands(self) -> dict[str, PromptCommand]:
        return prompt_commands(self.manager)

    def resource_items(self) -> list[dict[str, str]]:
        return resource_refs(self.manager)

    async def expand(self, text: str) -> str:
        return await expand_references(self.manager, text) if "@" in text else text

    def report(self) -> str:
        search = None
        if self.manager.all_tools():
            tokens = self.manager.token_estimate()
            search = {"state": "on" if self.manager.search_active else "off", **tokens}
        text = report(self.manager.snapshot(), search=search)
        if self.sources.project_pending:
            text += "\n\nThe project's .mcp.json is not approved: /mcp approve starts its servers."
        return text

    # ------------------------------------------------------------------ changes

    def _context_window(self) -> int | None:
        session = self.host.active
        model = session.model if session is not None else None
        return model.context_window if model is not None else None

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
                asyncio.get_running_loop().create_task(self._notice("warning", line))
        elif state == "ready":
            self._said.pop(name, None)

    async def _notice(self, level: str, message: str) -> None:
        session = self.host.active
        if session is not None and not session.closed:
            try:
                await session.emit(NoticeEvent(level, message))  # type: ignore[arg-type]
            except Exception:
                log.exception("could not report an MCP notice")

