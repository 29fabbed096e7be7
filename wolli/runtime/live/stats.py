"""Figures about a session: message counts, tokens, cost (``/session``, the footer, RPC).

Counted over the messages the session holds in memory (the current branch, after the
latest compaction), which is what the next request is built from and what was paid for in
this run of the conversation.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .services import SessionCore

from ...ai.cost import UsageTotals


@dataclass
class SessionStats:
    session_file: str | None
    session_id: str
    user_messages: int = 0
    assistant_messages: int = 0
    tool_calls: int = 0
    tool_results: int = 0
    total_messages: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    cost: float = 0.0

    @property
    def total_tokens(self) -> int:
        return self.input_tokens + self.output_tokens + self.cache_read_tokens + self.cache_write_tokens

    def as_dict(self) -> dict[str, Any]:
        return {**asdict(self), "total_tokens": self.total_tokens}


def session_stats(session: SessionCore) -> SessionStats:
    stats = SessionStats(session.session_file, session.session_id)
    totals = UsageTotals()
    for message in session.messages:
        role = getattr(message, "role", None)
        stats.total_messages += 1
        if role == "user":
            stats.user_messages += 1
        elif role == "toolResult":
            stats.tool_results += 1
        elif role == "assistant":
            stats.assistant_messages += 1
            stats.tool_calls += sum(1 for block in message.content if getattr(block, "type", None) == "toolCall")
            totals.add(message.usage)
    stats.input_tokens, stats.output_tokens = totals.input, totals.output
    stats.cache_read_tokens, stats.cache_write_tokens = totals.cache_read, totals.cache_write
    stats.cost = totals.cost
    return stats
