"""The ``ctx`` a session hands to extension code: its handle, its UI and the mode."""

from __future__ import annotations

from ...base.records import record
from ...extensions.context import ExtensionMode, ExtensionUI
from ..live.handle import SessionHandle
from ..safety.handle import PermissionsHandle  # evaluated: wolli.ExtensionContext's hints resolve
from ..subagents.info import SubagentInfo


@record(frozen=True)
class HandlerContext:
    """The ``ctx`` every handler, command, shortcut and tool of a session receives (the
    ``ExtensionContext`` of docs/extensions.md, exported as ``wolli.ExtensionContext``): the live session,
    its ``ui`` and the ``mode`` Wolli runs in. Also readable as a mapping (``ctx["ui"]``)."""

    session: SessionHandle
    ui: ExtensionUI
    mode: ExtensionMode
    # The session's permissions: ``mode``, ``set_mode``, rules, ``check`` (docs/permissions.md).
    permissions: PermissionsHandle
    # In a subagent's session: which child this is (``id``, ``name``, ``parent_session_id``,
    # ``tool_call_id``; docs/subagents.md); None in a top-level session.
    subagent: SubagentInfo | None = None

    @property
    def permission_mode(self) -> str:
        """``default``, ``accept-edits``, ``plan`` or ``yolo`` (the event
        ``permission_mode_change`` says when it changes)."""
        return str(self.permissions.mode) if self.permissions is not None else "yolo"

    def __getitem__(self, key: str) -> object:
        return getattr(self, key)


ExtensionContext = HandlerContext
