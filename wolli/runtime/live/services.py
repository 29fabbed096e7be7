"""What a live session needs from its host, as a narrow protocol.

:class:`~wolli.runtime.live.live_session.LiveSession` depends on this protocol, never on
:class:`~wolli.runtime.host.agent_host.AgentHost` itself, so the host can import the session (it owns
the sessions) without the session importing the host back.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from pathlib import Path

    from ...agent.agent import Agent
    from ...agent.tool import ToolDefinition
    from ...ai.models import ModelRegistry
    from ...ai.types import AssistantMessage, Model
    from ...config.settings import Settings
    from ...extensions.context import ExtensionMode, ExtensionUI
    from ...extensions.host import ContextView
    from ...extensions.registry import RegisteredCommand
    from ...mcp.offers import PromptCommand
    from ...session.manager import SessionManager
    from ...tools.environment import Environment
    from ..events import RunState
    from ..handlers.channel import Dispatcher, HandlerRegistry, NamedEvent
    from ..resources.loading import ResourceSet
    from ..safety.permissions import HostPermissions
    from ..safety.sandbox import SandboxService


class ToolOwner(Protocol):
    """The session a tool set is made for: MCP tool search keeps what each session loaded,
    read back from its history, and sized to its model's context window."""

    session_manager: SessionManager

    @property
    def model(self) -> Model | None: ...

    def refresh_tools(self) -> None: ...


class SessionServices(Protocol):
    settings: Settings
    # The agent home (``logs/extensions.log`` takes the tracebacks of extension code).
    home: Path
    # Handlers of every session of the host (extensions load once per host).
    handlers: HandlerRegistry
    mode: ExtensionMode
    # Extension prompt sections (``title``, ``order``, ``text()``), read at each prompt build.
    prompt_sections: list[Any]
    # ``ctx.ui`` of the front end (permission questions go there), and the host's rules.
    ui: ExtensionUI
    permissions: HostPermissions
    sandbox: SandboxService  # the optional bubblewrap sandbox for shell commands
    # Seconds between reads of a streamed answer, set by a front end that draws N frames a
    # second (``StreamOptions.read_interval``); 0: as the pieces arrive.
    stream_read_interval: float

    @property
    def active(self) -> Any:
        """The session the front end shows (None before the first one)."""
        ...

    @property
    def model_registry(self) -> ModelRegistry: ...

    def get_api_key(self, target: Model | str) -> str | None: ...

    def environment(self, cwd: str) -> Environment: ...

    def resources(self, cwd: str) -> ResourceSet: ...

    def create_tools(self, cwd: str, session: ToolOwner | None = None) -> list[ToolDefinition]:
        """The tools a session in ``cwd`` starts with; MCP tools as ``session`` offers them."""
        ...

    def default_model(self) -> Model | None: ...

    def no_model_help(self) -> str: ...

    def handler_context(self, session: Any) -> ContextView:
        """The ``ctx`` handlers of ``session`` receive (session handle, ui, mode)."""
        ...

    async def expand_mcp_references(self, text: str) -> str:
        """``@server:uri`` resource references replaced by their content."""
        ...

    def on_active_session(self, listener: Callable[[Any, Any], Any]) -> Callable[[], None]:
        """Call ``listener(new, old)`` whenever the active session changes; returns a remover."""
        ...

    def find_command(self, name: str) -> RegisteredCommand | PromptCommand | None:
        """An extension command by invocation name (``review`` or ``review:2``), or None."""
        ...


class SessionCore(Protocol):
    """A live session as its own helpers see it (retry and overflow recovery, compaction,
    tree navigation, statistics): :class:`~.live_session.LiveSession` is the one, and these
    modules cannot import it back."""

    agent: Agent
    settings: Settings
    services: SessionServices
    session_manager: SessionManager

    @property
    def session_id(self) -> str: ...

    @property
    def session_file(self) -> str | None: ...

    @property
    def model(self) -> Model | None: ...

    @property
    def messages(self) -> list[Any]: ...

    @property
    def dispatcher(self) -> Dispatcher: ...

    def handler_context(self) -> ContextView: ...

    def set_run_state(self, state: RunState) -> None: ...

    def context_usage(self) -> dict[str, Any]: ...

    async def emit(self, event: NamedEvent) -> None: ...

    async def wait_for_idle(self) -> None: ...

    async def compact_for_overflow(self, failed: AssistantMessage) -> bool: ...
