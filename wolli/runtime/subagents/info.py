"""``ctx.subagent``: which child a handler or tool runs for. Its own module so that the
handler context of every session can name it without loading the child machinery."""

from __future__ import annotations

from ...base.records import record


@record(frozen=True)
class SubagentInfo:
    """``ctx.subagent`` in a child's handlers and tools (None in a top-level session)."""

    id: str  # the child's session id
    name: str  # its definition's name
    parent_session_id: str
    tool_call_id: str
    description: str = ""

    def __getitem__(self, key: str) -> str:
        return str(getattr(self, key))
