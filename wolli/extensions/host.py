"""What the extension machinery needs of its host: :class:`ExtensionHost`.

``extensions/`` sits below ``runtime/`` in the layers and never imports it, so the host
(``runtime.host.agent_host.AgentHost``) is described here as a ``Protocol``: every member
the extension manager, the ``wolli`` API, tool factories and ``wolli.ai`` use. mypy holds
the real host to it where the runtime hands itself over (``ExtensionManager(self)``).

A live session is opaque here except for the few members extensions read directly
(:class:`HostSession`); extension code gets a :class:`SessionView` (``ctx.session``),
made by :meth:`ExtensionHost.handle`.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ..ai.models import ModelRegistry
    from ..ai.types import Model
    from ..config.settings import Settings
    from ..tools.environment import Environment
    from .context import ExtensionMode, ExtensionUI


class HostSession(Protocol):
    """A live session, as far as extensions read it (its cwd and model; the tool set is
    rebuilt when an extension registers a tool or a prompt section)."""

    @property
    def cwd(self) -> str: ...

    @property
    def model(self) -> Model | None: ...

    def refresh_tools(self) -> None: ...


class SessionView(Protocol):
    """The members of ``ctx.session`` (``wolli.SessionHandle``) the extension machinery
    itself calls; extension code sees the whole handle."""

    @property
    def model(self) -> Model | None: ...

    @property
    def session_manager(self) -> Any: ...

    def is_idle(self) -> bool: ...

    def has_pending_messages(self) -> bool: ...

    def abort(self) -> None: ...

    def send_message(self, message: Any, *, trigger_turn: bool = False, deliver_as: str = "steer") -> Awaitable[Any]: ...


class HandlerTable(Protocol):
    """The host's handlers of session events (``runtime.handlers.channel.HandlerRegistry``)."""

    def add(
        self, event: str, fn: Callable[..., Any], *, owner: str = "runtime", rank: int = 0, priority: int = 0,
        fail_open: bool = False,
    ) -> Callable[[], None]: ...

    def remove_owner(self, owner: str) -> None: ...

    def switched_off(self, owner: str) -> list[str]: ...


class PermissionsSource(Protocol):
    """The host's permission rules; ``handle()`` is what ``wolli.permissions`` returns."""

    def handle(self, session: Any = None) -> Any: ...


class ExtensionInfos(Protocol):
    def infos(self) -> list[dict[str, Any]]: ...


class ExtensionHost(Protocol):
    """The host of the extensions: sessions, settings, models, handlers, the front end's UI."""

    @property
    def home(self) -> Path: ...

    @property
    def cwd(self) -> str: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def mode(self) -> ExtensionMode: ...

    @property
    def ui(self) -> ExtensionUI: ...

    @property
    def handlers(self) -> HandlerTable: ...

    @property
    def model_registry(self) -> ModelRegistry: ...

    @property
    def permissions(self) -> PermissionsSource: ...

    @property
    def extensions(self) -> ExtensionInfos: ...

    @property
    def resident(self) -> Mapping[str, HostSession]: ...

    @property
    def active(self) -> HostSession | None: ...

    # The session is the host's own type (runtime's LiveSession), opaque at this layer.
    def handle(self, session: Any) -> SessionView: ...

    def get_session(self, session_id: str) -> HostSession | None: ...

    async def open_session(self, ref: str, *, cwd: str | None = None) -> HostSession: ...

    async def create_session(self, options: Any = None) -> HostSession: ...

    def list_sessions(self, cwd: str | None = None) -> list[Any]: ...

    def find_sessions(self, filter: Any) -> list[Any]: ...

    async def reload(self) -> None: ...

    def request_shutdown(self) -> None: ...

    def default_model(self) -> Model | None: ...

    def get_api_key(self, target: Any) -> str | None: ...

    def environment(self, cwd: str) -> Environment: ...

    def register_mcp_server(self, name: str, config: Any, owner: str) -> None: ...

    def unregister_mcp_server(self, name: str) -> bool: ...


class ContextView(Protocol):
    """The ``ctx`` handlers, commands and tools receive (``wolli.ExtensionContext``), as far
    as the extension machinery itself reads it."""

    @property
    def session(self) -> SessionView: ...

    @property
    def ui(self) -> ExtensionUI: ...

    @property
    def mode(self) -> ExtensionMode: ...
