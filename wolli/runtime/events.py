"""Session-level events, emitted on the same stream as the agent events.

Every mode (print, json, rpc, tui) consumes one stream from :class:`AgentSession`: the agent
events of ``wolli.agent.events`` interleaved with these.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

CompactionReason = Literal["manual", "threshold", "overflow"]


@dataclass(slots=True)
class SessionStartEvent:
    reason: Literal["startup", "reload", "new", "resume", "fork"]
    previous_session_file: str | None = None
    type: str = field(default="session_start", init=False)


@dataclass(slots=True)
class SessionShutdownEvent:
    reason: Literal["quit", "reload", "new", "resume", "fork"]
    target_session_file: str | None = None
    type: str = field(default="session_shutdown", init=False)


@dataclass(slots=True)
class CompactionStartEvent:
    reason: CompactionReason
    type: str = field(default="compaction_start", init=False)


@dataclass(slots=True)
class CompactionEndEvent:
    reason: CompactionReason
    result: Any = None  # CompactionResult when it succeeded
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: str = field(default="compaction_end", init=False)


@dataclass(slots=True)
class AutoRetryStartEvent:
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: str = field(default="auto_retry_start", init=False)


@dataclass(slots=True)
class AutoRetryEndEvent:
    success: bool
    attempt: int
    final_error: str | None = None
    type: str = field(default="auto_retry_end", init=False)


@dataclass(slots=True)
class ModelSelectEvent:
    model: Any
    previous_model: Any
    source: Literal["set", "cycle", "restore"]
    type: str = field(default="model_select", init=False)


@dataclass(slots=True)
class ThinkingLevelSelectEvent:
    level: str
    previous_level: str | None
    type: str = field(default="thinking_level_select", init=False)

