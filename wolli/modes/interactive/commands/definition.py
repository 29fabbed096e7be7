"""What a built-in command is, what it runs with, and how commands are listed."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from .front import Front


@dataclass
class CommandContext:
    front: Front
    host: Any  # runtime.host.AgentHost
    session: Any  # the active runtime.session.LiveSession


Run = Callable[[CommandContext, str], Awaitable[None]]
Complete = Callable[[CommandContext, str], list[dict[str, Any]]]


@dataclass(frozen=True)
class BuiltinCommand:
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
