"""What a built-in command is, what it runs with, and how commands are listed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .front import Front

if TYPE_CHECKING:
    from ....runtime.host.agent_host import AgentHost
    from ....runtime.live.live_session import LiveSession


class NotStarted(RuntimeError):
    """A command reached for the session before the client had started it."""


@dataclass
class CommandContext:
    """What a command runs with. Clients build one before their session is up too (the
    completion menu lists commands at once), so the host and the active session may still
    be missing: ``host``/``session`` are for commands, which run once it is started, and
    raise a clear error otherwise; ``host_or_none``/``session_or_none`` are for code that
    also runs before."""

    front: Front
    host_or_none: AgentHost | None
    session_or_none: LiveSession | None

    @property
    def host(self) -> AgentHost:
        if self.host_or_none is None:
            raise NotStarted("the session has not started yet")
        return self.host_or_none

    @property
    def session(self) -> LiveSession:
        if self.session_or_none is None:
            raise NotStarted("the session has not started yet")
        return self.session_or_none


Run = Callable[[CommandContext, str], Awaitable[None]]
Complete = Callable[[CommandContext, str], list[dict[str, Any]]]


@dataclass(frozen=True)
class BuiltinCommand:
    """A built-in slash command: its name, what it does, and the function that runs it."""

    name: str
    description: str
    run: Run
    category: str = "Session"
    usage: str = ""  # the arguments, as help shows them: "[search]", "<name>"
    complete: Complete | None = None
    aliases: tuple[str, ...] = ()
    needs_idle: bool = False  # refused while the agent works (it would change what it works on)


@dataclass(frozen=True)
class CommandEntry:
    """One line of the completion menu and of the command palette."""

    name: str  # as typed, without the slash: "model", "review:2", "skill:pdf"
    description: str
    category: str
    source: str  # builtin | extension | prompt | skill
    usage: str = ""
    availability: str = "enabled"  # enabled | disabled | hidden
    reason: str | None = None  # why it is disabled
