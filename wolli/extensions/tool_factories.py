"""Tool factories: ``tools/<name>/__init__.py`` with ``factory(api)`` returning tools.

Where they come from, later sources winning a name conflict: the agent home's
``tools/*/__init__.py`` (by folder name), then ``customTools`` in settings.json (files or
folders, in order), then ``--tool PATH`` on the command line. A factory returns one tool
(a dict of tool fields or a ``ToolDefinition``) or a list of tools that share state. The
built-in names (read, write, edit, bash, grep, find, ls) are reserved: a factory tool
cannot replace a built-in (an extension's ``register_tool`` can).

``api`` offers ``cwd``, ``exec``, ``ui``, ``has_ui``, ``events`` and ``send_message``. A
tool dict may carry ``on_session(event, ctx)``; it is called with ``event.reason``:
``start`` (start-up and reload), ``switch`` (a new or resumed session), ``branch`` (a fork),
``tree`` (tree navigation) and ``shutdown``. ``execute`` and ``on_session`` receive a
:class:`ToolContext` (``session_manager``, ``model_registry``, ``model``, ``is_idle()``,
``has_queued_messages()``, ``abort()``, plus ``session``/``ui``/``mode`` of every ``ctx``).
"""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..agent.tool import ToolDefinition
from ..ai.abort import AbortSignal
from ..base.records import record
from .api_services import EventBus
from .host import ContextView, ExtensionHost

if TYPE_CHECKING:
    from collections.abc import Awaitable

    from ..agent.messages import CustomMessage
    from ..ai.types import Model
    from ..tools.process import CommandResult
    from .context import ExtensionUI

TOOL_ENTRY_POINT_GROUP = "wolli.tools"  # packages: an entry point naming a module with factory(api), or the factory
RESERVED_NAMES = frozenset({"read", "write", "edit", "bash", "grep", "find", "ls"})
START_REASONS = {"startup": "start", "reload": "start", "new": "switch", "resume": "switch", "fork": "branch"}


@record(frozen=True)
class ToolSessionEvent:
    reason: str  # start | switch | branch | tree | shutdown
    previous_session_file: str | None = None

    def __getitem__(self, key: str) -> str | None:
        return getattr(self, key)


class ToolContext:
    """The ``ctx`` of a factory tool: the session's read view plus the usual ctx members."""

    def __init__(self, ctx: ContextView, host: ExtensionHost) -> None:
        self._ctx = ctx
        self.session = ctx.session
        self.ui = ctx.ui
        self.mode = ctx.mode
        self.session_manager = ctx.session.session_manager
        self.model_registry = host.model_registry

    @property
    def model(self) -> Model | None:
        return self._ctx.session.model

    def is_idle(self) -> bool:
        return bool(self._ctx.session.is_idle())

    def has_queued_messages(self) -> bool:
        return bool(self._ctx.session.has_pending_messages())

    def abort(self) -> None:
        self._ctx.session.abort()

    def __getitem__(self, key: str) -> object:
        return getattr(self, key)


class ToolFactoryAPI:
    """The ``api`` a factory receives."""

    def __init__(self, host: ExtensionHost, bus: EventBus) -> None:
        self._host = host
        self.events = bus

    @property
    def cwd(self) -> str:
        import os

        active = self._host.active
        return active.cwd if active is not None else str(getattr(self._host, "cwd", os.getcwd()))

    @property
    def ui(self) -> ExtensionUI:
        return self._host.ui

    @property
    def has_ui(self) -> bool:
        return self._host.mode in ("tui", "plain")  # both can ask the person

    async def exec(self, command: str, args: list[str] | None = None, *, timeout: float | None = None,
                   signal: AbortSignal | None = None) -> CommandResult:
        from ..tools.process import run_command  # only when used: it loads the supervisor

        return await run_command(command, args, cwd=self.cwd, timeout=timeout, signal=signal)

    def send_message(self, message: CustomMessage | dict[str, Any], *, trigger_turn: bool = False, deliver_as: str = "steer") -> Awaitable[object]:
        """A custom message into the active session (see ``ctx.session.send_message``)."""
        active = self._host.active
        if active is None:
            raise RuntimeError("send_message: there is no active session")
        return self._host.handle(active).send_message(message, trigger_turn=trigger_turn, deliver_as=deliver_as)


def discover_factories(agent_home: Path, settings_paths: list[str], cli_paths: list[str], cwd: str) -> tuple[list[tuple[str, Path]], list[str]]:
    """(origin, __init__.py or .py file) in load order, and a line for each bad path."""
    found: list[tuple[str, Path]] = []
    problems: list[str] = []
    folder = agent_home / "tools"
    if folder.is_dir():
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if entry.is_dir() and (entry / "__init__.py").is_file() and not entry.name.startswith((".", "_")):
                found.append(("agent", entry / "__init__.py"))
    for origin, paths in (("settings", settings_paths), ("cli", cli_paths)):
        for raw in paths:
            path = Path(str(raw)).expanduser()
            path = path if path.is_absolute() else Path(cwd) / path
            if path.is_dir() and (path / "__init__.py").is_file():
                found.append((origin, path / "__init__.py"))
            elif path.is_file() and path.suffix == ".py":
                found.append((origin, path))
            else:
                where = " (from settings.json 'customTools')" if origin == "settings" else " (--tool)"
                problems.append(f"{path}: no tool factory here{where}; expected a folder with __init__.py or a .py file")
    return found, problems


def tools_from_factory_result(result: object) -> list[Any]:
    if result is None:
        return []
    return list(result) if isinstance(result, list | tuple) else [result]


def split_on_session(definition: object) -> tuple[Any, Any]:
    """(definition without ``on_session``, the ``on_session`` callback or None)."""
    if isinstance(definition, dict):
        fields = dict(definition)
        return fields, fields.pop("on_session", None)
    return definition, getattr(definition, "on_session", None)


def with_tool_context(tool: ToolDefinition, host: ExtensionHost) -> ToolDefinition:
    """``tool`` whose ``execute`` receives a :class:`ToolContext` instead of the plain ctx."""
    original = tool.execute

    async def execute(tool_call_id: str, params: object, signal: AbortSignal | None = None, on_update: object = None, ctx: ContextView | None = None) -> object:
        result = original(tool_call_id, params, signal, on_update, ToolContext(ctx, host) if ctx is not None else None)
        return await result if inspect.isawaitable(result) else result

    tool.execute = execute
    return tool
