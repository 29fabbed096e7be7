"""The live session as the safety net sees it: :class:`GuardedSession`.

The permission gate, the checkpoints and rewind work on the live session
(``runtime.live.live_session.LiveSession``), which sits above them and imports them, so they
name what they use of it here instead of importing it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from ...agent.messages import CustomMessage
    from ...config.settings import Settings
    from ...extensions.context import ExtensionMode, ExtensionUI
    from ...session.manager import SessionManager


class GuardedServices(Protocol):
    """The host's members the safety net reads: where to ask, in which mode, who is active."""

    @property
    def ui(self) -> ExtensionUI: ...

    @property
    def mode(self) -> ExtensionMode: ...

    @property
    def active(self) -> object: ...


class GuardedSession(Protocol):
    cwd: str
    settings: Settings
    session_manager: SessionManager

    @property
    def services(self) -> GuardedServices: ...

    # The session's TurnCheckpoints (checkpointing.py, which imports this module).
    @property
    def checkpoints(self) -> Any: ...

    @property
    def session_file(self) -> str | None: ...

    @property
    def messages(self) -> list[Any]: ...

    def refresh_system_prompt(self) -> None: ...

    def _deliver(self, event: object) -> None: ...

    def _stop_writing(self, exc: OSError) -> None: ...

    async def emit(self, event: Any) -> None: ...

    async def wait_for_idle(self) -> None: ...

    async def send_message(self, message: CustomMessage | dict[str, Any], *, trigger_turn: bool = False, deliver_as: str = "steer") -> None: ...

    async def navigate_tree(self, entry_id: str | None, *, summarize: bool = False,
                            custom_instructions: str | None = None) -> bool: ...
