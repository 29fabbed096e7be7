"""The object every ``extension(wolli)`` factory receives: :class:`ExtensionAPI`.

One instance per loaded extension, all sharing one :class:`~.registry.ExtensionRegistry`
(what was registered, by whom) and the host (sessions, settings, models). Registration works
during load and later: a tool registered from a handler is usable in the same session at
once. Agent-global capabilities live here; per-session actions live on ``ctx.session``.

The host is used through a narrow duck-typed surface (``handlers``, ``resident``, ``active``,
``handle()``, ``settings``, ``model_registry``, session discovery, ``reload()``), because
``extensions/`` sits below ``runtime/`` in the layers and never imports it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from ..agent.tool import ToolDefinition
from ..ai.abort import AbortSignal
from .api_services import EventBus, Helpers, SettingsHandle, make_logger
from .host import ExtensionHost, PermissionsView, SessionView

if TYPE_CHECKING:
    from ..ai.models import ModelRegistry
    from ..config.subagent_files import SubagentDefinition
    from ..tools.environment import Environment
    from ..tools.process import CommandResult
    from .ask import AskService
from .registry import (
    FLAG_TYPES,
    CommandHandle,
    ExtensionRecord,
    ExtensionRegistry,
    Flag,
    RegisteredCommand,
    Shortcut,
    parse_availability,
)

# Events an extension may subscribe to (docs/events.md); ``on`` warns about any other name.
KNOWN_EVENTS = frozenset({
    "session_start", "session_before_compact", "session_compact", "session_shutdown",
    "session_before_switch", "session_before_fork", "session_before_tree", "session_tree",
    "before_agent_start", "agent_start", "agent_end", "turn_start", "turn_end",
    "message_start", "message_update", "message_end",
    "tool_execution_start", "tool_execution_update", "tool_execution_end", "tool_call", "tool_result",
    "context", "before_provider_request", "model_select", "thinking_level_select", "user_bash", "input",
    "auto_retry_start", "auto_retry_end", "run_state", "permission_mode_change", "rewind",
    "subagent_start", "subagent_end",
})
TOOL_FIELDS = frozenset({
    "name", "label", "description", "parameters", "execute", "prompt_snippet", "prompt_guidelines",
    "prepare_arguments", "render_call", "render_result", "render_shell", "execution", "read_only",
})


class ExtensionAPI:
    """``wolli`` inside an extension. Every member is documented in docs/extensions.md."""

    def __init__(self, registry: ExtensionRegistry, record: ExtensionRecord, host: ExtensionHost) -> None:
        self._registry = registry
        self._record = record
        self._host = host
        self.logger = make_logger(record.name, host.home)
        self.helpers = Helpers()
        self.settings = SettingsHandle(host.settings)

    # ------------------------------------------------------------------ events

    def on(self, event: str, handler: Callable[..., Any], *, priority: int = 0) -> Callable[[], None]:
        """Subscribe ``handler(event, ctx)`` (sync or async); returns an unsubscribe function."""
        if not callable(handler):
            raise TypeError(f"wolli.on({event!r}, ...): the handler must be callable")
        if event not in KNOWN_EVENTS:
            import difflib

            near = difflib.get_close_matches(event, KNOWN_EVENTS, n=1)
            self._registry.warn(self._record, f"wolli.on({event!r}): no such event" + (f"; did you mean {near[0]!r}?" if near else ""))
        remove = self._host.handlers.add(
            event, handler, owner=self._record.owner, rank=self._record.rank, priority=priority
        )
        self._record.handlers.append(event)
        return remove

    @property
    def events(self) -> EventBus:
        """The bus extensions talk to each other on (``events.on(name, fn)``, ``events.emit``)."""
        return self._registry.bus

    # ------------------------------------------------------------------ tools

    def register_tool(self, definition: ToolDefinition | dict[str, Any]) -> ToolDefinition:
        """Add a tool (or replace one of the same name, built-ins included) for every session."""
        tool = as_tool(definition, self._record.name)
        self._registry.add_tool(self._record, tool)
        for session in list(self._host.resident.values()):
            session.refresh_tools()
        return tool

    # ------------------------------------------------------------------ commands, shortcuts, flags

    def register_command(
        self,
        name: str,
        *,
        handler: Callable[..., Any],
        description: str = "",
        get_argument_completions: Callable[[str], Any] | None = None,
        title: str | None = None,
        category: str | None = None,
        availability: str | dict[str, str] = "enabled",
        disabled_reason: str | None = None,
    ) -> CommandHandle:
        """``/name args`` runs ``handler(args, ctx)``; the same name from two extensions
        becomes ``/name:1`` and ``/name:2`` in load order. ``availability`` (``"enabled"``,
        ``"disabled"`` with ``disabled_reason``, ``"hidden"``) is how the command palette and
        the completion menu show it; the returned handle changes it later."""
        name = str(name).lstrip("/").strip()
        if not name or any(c.isspace() for c in name):
            raise ValueError(f"register_command: {name!r} is not a command name (no spaces, not empty)")
        if not callable(handler):
            raise TypeError(f"register_command({name!r}): handler must be callable")
        command = RegisteredCommand(
            name=name, handler=handler, description=description, owner=self._record.name,
            get_argument_completions=get_argument_completions, title=title, category=category,
            rank=self._record.rank,
        )
        command.availability, command.disabled_reason = parse_availability(availability, disabled_reason)
        return self._registry.add_command(self._record, command)

    def register_shortcut(self, key: str, *, handler: Callable[..., Any], description: str = "") -> None:
        """A key for the TUI and the line mode: ``handler(ctx)`` runs when ``key`` is pressed.

        ``key`` is parsed by :mod:`wolli.config.keys` (``ctrl+alt+p``, ``Alt+P``, ``f6``...); a
        key that is not one, or that would type text in the editor, is reported and not added."""
        from ..config.keys import KeySpecError, parse_key

        if not callable(handler):
            raise TypeError(f"register_shortcut({key!r}): handler must be callable")
        try:
            parsed = parse_key(str(key))
        except KeySpecError as exc:
            self._registry.warn(self._record, f"register_shortcut({key!r}): {exc}; the shortcut was not added")
            return
        if parsed.types_text:
            self._registry.warn(self._record, f"register_shortcut({key!r}): {parsed.shown()} types text in the "
                                              f"editor; add Ctrl or Alt (e.g. 'alt+{parsed.name}'); the shortcut "
                                              "was not added")
            return
        self._registry.add_shortcut(self._record, Shortcut(str(parsed), handler, description, self._record.name,
                                                           spec=str(key)))

    def register_flag(self, name: str, *, description: str = "", type: str = "boolean", default: bool | str | None = None) -> None:
        """A command-line option ``--name`` (``type`` boolean or string); read it with ``get_flag``."""
        name = str(name).lstrip("-")
        if type not in FLAG_TYPES:
            raise ValueError(f"register_flag({name!r}): type must be one of {', '.join(FLAG_TYPES)}, not {type!r}")
        self._registry.add_flag(self._record, Flag(name, description, type, default, self._record.name))

    def get_flag(self, name: str) -> bool | str | None:
        """The value given on the command line, else the flag's default (None if unknown)."""
        return cast("bool | str | None", self._registry.flag_value(str(name).lstrip("-")))

    def register_message_renderer(self, custom_type: str, renderer: Callable[..., Any]) -> None:
        self._registry.add_renderer(self._record, custom_type, renderer)

    def register_prompt_section(self, title: str, content: str | Callable[[], str], *, order: int = 0) -> None:
        """A titled section at the end of the system prompt; lower ``order`` comes first."""
        self._registry.add_prompt_section(self._record, title, content, order)
        for session in list(self._host.resident.values()):
            session.refresh_tools()  # rebuilds the system prompt too

    # ------------------------------------------------------------------ providers

    def register_provider(self, name: str, config: dict[str, Any]) -> None:
        """Add or override a provider (a models.json entry, plus an optional ``stream``:
        ``fn(model, context, options, builder)`` or ``fn(model, context, options)`` giving
        event dicts; see :mod:`.provider_stream`)."""
        if isinstance(config, dict) and callable(config.get("stream")):
            from .provider_stream import adapt_stream

            config = {**config, "stream": adapt_stream(config["stream"])}
        self._host.model_registry.register_provider(name, config)
        self._record.providers.append(name)

    def unregister_provider(self, name: str) -> bool:
        removed = self._host.model_registry.unregister_provider(name)
        if name in self._record.providers:
            self._record.providers.remove(name)
        return bool(removed)

    def register_mcp_server(self, name: str, config: dict[str, Any]) -> None:
        """Add an MCP server (the ``.mcp.json`` entry shape: ``{"command", "args", "env",
        "cwd"}`` or ``{"type": "http"|"sse", "url", "headers"}``); it starts at once when
        servers already run, else with the others. Raises ValueError on a bad config."""
        self._host.register_mcp_server(name, config, self._record.owner)
        if name not in self._record.mcp_servers:
            self._record.mcp_servers.append(name)

    def unregister_mcp_server(self, name: str) -> bool:
        """Stop and remove a server this or another extension registered."""
        removed = bool(self._host.unregister_mcp_server(name))
        if name in self._record.mcp_servers:
            self._record.mcp_servers.remove(name)
        return removed

    # ------------------------------------------------------------------ subagents

    def register_subagent(self, definition: dict[str, Any] | str | os.PathLike[str]) -> SubagentDefinition:
        """A subagent the ``task`` tool offers in every session (docs/subagents.md): the path
        of an agent file, or a dict of its front-matter fields (Claude Code's names or
        snake_case) with ``prompt`` as the system prompt. Replaces one of the same name;
        raises ValueError on a bad definition."""
        from .subagents import as_subagent

        found = as_subagent(definition, self._record.name)
        self._registry.subagents[found.name] = found
        if found.name not in self._record.subagents:
            self._record.subagents.append(found.name)
        self._subagents_changed()
        return found

    def unregister_subagent(self, name: str) -> bool:
        removed = self._registry.subagents.pop(name, None) is not None
        if name in self._record.subagents:
            self._record.subagents.remove(name)
        self._subagents_changed()
        return removed

    def _subagents_changed(self) -> None:
        catalog = getattr(self._host, "subagents", None)
        if catalog is not None:
            catalog.clear()
        for session in list(self._host.resident.values()):
            session.refresh_tools()  # the task tool lists the subagents there are

    # ------------------------------------------------------------------ agent-global

    @property
    def cwd(self) -> str:
        active = self._host.active
        return active.cwd if active is not None else str(getattr(self._host, "cwd", os.getcwd()))

    @property
    def environments(self) -> Environment:
        return self._host.environment(self.cwd)

    @property
    def model_registry(self) -> ModelRegistry:
        return self._host.model_registry

    @property
    def mode(self) -> str:
        return str(self._host.mode)

    @property
    def active_session(self) -> SessionView | None:
        active = self._host.active
        return self._host.handle(active) if active is not None else None

    async def exec(
        self, command: str, args: list[str] | None = None, *, cwd: str | None = None,
        timeout: float | None = None, signal: AbortSignal | None = None,
    ) -> CommandResult:
        """Run a program (no shell when ``args`` is given) and collect its output."""
        from ..tools.process import run_command  # only when used: it loads the supervisor

        return await run_command(command, args, cwd=cwd or self.cwd, timeout=timeout, signal=signal)

    @property
    def permissions(self) -> PermissionsView:
        """Permission modes and rules of the active session (``mode``, ``set_mode``,
        ``rules``, ``add_rule``, ``remove_rule``, ``check``; docs/permissions.md)."""
        return self._host.permissions.handle()

    @property
    def ai(self) -> AskService:
        """``await wolli.ai.ask(question)`` -> ``result`` (yes/no/uncertain), ``probability``, ``reason``."""
        from .ask import AskService

        return AskService(self._host)

    # ------------------------------------------------------------------ sessions

    def get_session(self, session_id: str) -> SessionView | None:
        found = self._host.get_session(session_id)
        return self._host.handle(found) if found is not None else None

    async def open_session(self, session_id: str) -> SessionView:
        return self._host.handle(await self._host.open_session(session_id))

    async def create_session(self, options: object = None) -> SessionView:
        return self._host.handle(await self._host.create_session(options))

    def list_sessions(self) -> list[Any]:
        return list(self._host.list_sessions())

    def find_sessions(self, filter: dict[str, str]) -> list[Any]:
        return list(self._host.find_sessions(filter))

    async def reload(self) -> None:
        await self._host.reload()

    def shutdown(self) -> None:
        """Ask Wolli to quit once the agent is idle (print/json modes end anyway)."""
        self._host.request_shutdown()

    def extension_infos(self) -> list[dict[str, Any]]:
        """What ``/extensions`` shows: one dict per loaded extension, hook and tool factory
        (name, kind, path, status, tools, commands, shortcuts, flags, renderers, providers,
        handlers, switched_off, errors, warnings)."""
        return self._host.extensions.infos()

    # ------------------------------------------------------------------ integrations

    def register_integration(self, name: str, factory: Callable[..., Any]) -> None:
        self._registry.add_integration(self._record, name, factory)

    # What another extension's integration factory made: its type is that extension's.
    def get_integration(self, name: str, account: str | None = None) -> Any:
        return self._registry.integration(name, account)


def as_tool(definition: ToolDefinition | dict[str, Any], owner: str) -> ToolDefinition:
    """A tool definition from a ``ToolDefinition`` or a dict of its fields (snake_case)."""
    if isinstance(definition, ToolDefinition):
        definition.source = definition.source if definition.source != "builtin" else f"extension:{owner}"
        return definition
    if not isinstance(definition, dict):
        raise TypeError("register_tool takes a dict of tool fields or a ToolDefinition")
    unknown = set(definition) - TOOL_FIELDS
    if unknown:
        import difflib

        key = sorted(unknown)[0]
        near = difflib.get_close_matches(key, TOOL_FIELDS, n=1)
        raise ValueError(f"register_tool: unknown field {key!r}" + (f"; did you mean {near[0]!r}?" if near else ""))
    for required in ("name", "description", "execute"):
        if not definition.get(required):
            raise ValueError(f"register_tool: {required!r} is required")
    if not callable(definition["execute"]):
        raise TypeError(f"register_tool({definition['name']!r}): execute must be callable")
    fields = dict(definition)
    fields.setdefault("parameters", {"type": "object", "properties": {}})
    fields["prompt_guidelines"] = list(fields.get("prompt_guidelines") or [])
    return ToolDefinition(**fields, source=f"extension:{owner}")
