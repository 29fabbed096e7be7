"""The one seam between an interactive client's screen and the runtime it drives.

The full-screen app talks to a :class:`ClientRuntime` and reads the session it shows through
a :class:`SessionView`. Two implementations exist: the in-process one (the TUI's
``TuiController``: a host and its live sessions in this process) and the remote one
(``modes/server/attach_tui.py``: the same session on a ``wolli serve`` server, over its
socket). The widgets see no difference; what only the in-process runtime has (extension
shortcuts and renderers, MCP resources) is reached through :attr:`ClientRuntime.host`,
which is None remotely (docs/server.md says what an attached client cannot do).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from ...agent.messages import AgentMessage
    from ...agent.tool import ToolDefinition
    from ...ai.types import ImageContent, Model
    from ...extensions.registry import Shortcut
    from ...runtime.host.agent_host import AgentHost
    from .commands.definition import CommandEntry


class SessionView(Protocol):
    """What the screen reads of the session it shows (a ``LiveSession`` is one)."""

    @property
    def cwd(self) -> str: ...

    @property
    def messages(self) -> Sequence[AgentMessage]: ...

    @property
    def model(self) -> Model | None: ...

    @property
    def is_streaming(self) -> bool: ...

    @property
    def all_tools(self) -> Sequence[ToolDefinition]: ...

    def is_idle(self) -> bool: ...


@dataclass(slots=True)
class SessionFigures:
    """The footer's figures for the session shown."""

    model: str
    cwd: str
    tokens_in: int = 0
    tokens_out: int = 0
    cache_read: int = 0
    cache_write: int = 0
    cost: float = 0.0
    thinking: str | None = None
    context_percent: float | None = None
    session_name: str | None = None
    permission_mode: str = "default"
    # The token and cost totals are not known yet (a resumed session's older messages are
    # still being built): the footer leaves them out until they are.
    totals_pending: bool = False


class ClientRuntime(Protocol):
    """What the app asks of the runtime behind it, in-process or on a server."""

    ready: asyncio.Event  # set once the session is shown; input typed before waits for it

    @property
    def session(self) -> SessionView | None: ...

    @property
    def host(self) -> AgentHost | None:
        """The in-process host (extension shortcuts, renderers, MCP resources); None remotely."""
        ...

    async def start(self) -> None: ...

    async def shutdown(self) -> None: ...

    def settle_before_exit(self) -> Awaitable[None] | None:
        """The app is about to close, and closing cancels its workers, a run among them.
        What to await first so nothing is lost (the in-process runtime stops a run still
        going and waits for its partial answer to be saved), or None: close at once."""
        ...

    async def send(self, text: str, *, follow_up: bool = False, images: list[ImageContent] | None = None) -> None:
        """What the user typed: a built-in command, ``!cmd``, a steer or follow-up while the
        agent works, else a prompt."""
        ...

    async def run_command(self, text: str) -> None: ...

    def command_entries(self) -> list[CommandEntry]: ...

    async def argument_completions(self, name: str, prefix: str) -> object: ...

    def abort(self) -> list[str]:
        """Stop the run; the queued messages (they go back into the editor)."""
        ...

    def stop_user_command(self) -> bool:
        """Stop a ``!cmd`` still running (the session is idle meanwhile: it is no run of the
        agent); True when this runtime knows one was stopped."""
        ...

    async def cycle_thinking_level(self) -> str | None: ...

    async def cycle_permission_mode(self) -> None: ...

    async def cycle_model(self, step: int) -> None: ...

    def shortcut(self, key: str) -> Shortcut | None: ...

    async def run_shortcut(self, shortcut: Shortcut) -> None: ...

    def mcp_resources(self) -> list[dict[str, str]]:
        """``@server:uri`` completion items for the MCP resources the session can attach."""

    def figures(self) -> SessionFigures | None: ...
