"""Typed options a host accepts to open or create a live session.

Front ends never hand the runtime loose ``**kwargs``: the start-up path
(:mod:`wolli.runtime.startup.start`) turns command-line input into a :class:`SessionOptions`,
and extension code's ``create_session(options)`` does the same.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING

from ...base.records import record

if TYPE_CHECKING:
    from ...agent.tool import ToolDefinition
    from ...ai.types import Model, ThinkingLevel
    from ...permissions.modes import PermissionMode


@record
class SessionOptions:
    """What a new or opened session starts with. ``None`` means "what the session file or
    the settings say" (a resumed session keeps its model and thinking level)."""

    cwd: str
    # Where the session lives: a path or id prefix to open, the newest of ``cwd``, or new.
    session: str | None = None
    continue_recent: bool = False
    persist: bool = True
    model: Model | None = None
    thinking_level: ThinkingLevel | None = None
    # Names of the tools to activate (``None``: every tool; ``[]``: none).
    active_tools: list[str] | None = None
    custom_system_prompt: str | None = None
    append_system_prompt: str = ""
    extra_tools: list[ToolDefinition] = field(default_factory=list)
    # The session file this one was forked or handed off from (header ``parentSession``).
    parent_session: str | None = None
    # The permission mode to start in (None: the host's starting mode; docs/permissions.md).
    permission_mode: PermissionMode | None = None
    # Open a stored session with only its last ``context_tail`` messages built (0: all of
    # them); the rest is built later, off the caller's thread, and a run waits for it (the
    # TUI's resume, docs/performance.md; the server's open, docs/server.md).
    context_tail: int = 0
