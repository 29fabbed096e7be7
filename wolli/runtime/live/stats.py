"""Figures about a session: message counts, tokens, cost (``/session``, the footer, RPC).

Counted over the messages the session holds in memory (the current branch, after the
latest compaction), which is what the next request is built from and what was paid for in
this run of the conversation.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING

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
    usage: UsageTotals = field(default_factory=UsageTotals)  # tokens and cost of the answers

    @property
    def input_tokens(self) -> int:
        return self.usage.input

    @property
    def output_tokens(self) -> int:
        return self.usage.output

    @property
    def cache_read_tokens(self) -> int:
        return self.usage.cache_read

    @property
    def cache_write_tokens(self) -> int:
        return self.usage.cache_write

    @property
    def total_tokens(self) -> int:
        return self.usage.tokens

    @property
    def cost(self) -> float:
        return self.usage.cost


def session_stats(session: SessionCore) -> SessionStats:
    stats = SessionStats(session.session_file, session.session_id)
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
            stats.usage.add(message.usage)
    return stats
