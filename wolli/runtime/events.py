"""The session event stream: one typed union every front end ``match``es on.

An :class:`~wolli.runtime.live.live_session.LiveSession` emits the agent events of
``wolli.agent.events`` interleaved with the session events defined here. Observers (the TUI,
json and rpc modes) receive exactly these objects, in order; ``docs/events.md`` documents
every event and field as it appears on the JSON wire (camelCase).

Handler-only events (the ones extension code may answer: ``tool_call``, ``input``,
``context``...) live in :mod:`wolli.runtime.handlers.hook_events`; they are not part of this stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from ..agent.events import (
    AgentEndEvent,
    AgentStartEvent,
    MessageEndEvent,
    MessageStartEvent,
    MessageUpdateEvent,
    ToolExecutionEndEvent,
    ToolExecutionStartEvent,
    ToolExecutionUpdateEvent,
    TurnEndEvent,
    TurnStartEvent,
)

CompactionReason = Literal["manual", "threshold", "overflow"]
RunState = Literal["idle", "running", "retrying", "compacting"]
StartReason = Literal["startup", "reload", "new", "resume", "fork"]
ShutdownReason = Literal["quit", "reload", "new", "resume", "fork"]


@dataclass(slots=True)
class SessionStartEvent:
    reason: StartReason
    previous_session_file: str | None = None
    type: str = field(default="session_start", init=False)


@dataclass(slots=True)
class SessionShutdownEvent:
    reason: ShutdownReason
    target_session_file: str | None = None
    type: str = field(default="session_shutdown", init=False)


@dataclass(slots=True)
class SessionBeforeTreeEvent:
    """The leaf is about to move to ``target_id`` (a handler may answer ``{"cancel": True}``)."""

    target_id: str | None
    old_leaf_id: str | None
    type: str = field(default="session_before_tree", init=False)


@dataclass(slots=True)
class SessionTreeEvent:
    """The leaf moved (tree navigation): the branch the model sees is a different one."""

    new_leaf_id: str | None
    old_leaf_id: str | None
    type: str = field(default="session_tree", init=False)


@dataclass(slots=True)
class RunStateEvent:
    """The session's run state changed (``idle`` -> ``running`` -> ``retrying`` ...)."""

    state: RunState
    previous: RunState
    type: str = field(default="run_state", init=False)


@dataclass(slots=True)
class QueueUpdateEvent:
    """The texts still queued for delivery (pi's ``queue_update``)."""

    steering: list[str]
    follow_up: list[str]
    type: str = field(default="queue_update", init=False)


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
    previous_model: object
    source: Literal["set", "cycle", "restore"]
    type: str = field(default="model_select", init=False)


@dataclass(slots=True)
class ThinkingLevelSelectEvent:
    level: str
    previous_level: str | None
    type: str = field(default="thinking_level_select", init=False)


@dataclass(slots=True)
class PermissionModeChangeEvent:
    """The session's permission mode changed (the user's key, ``/permissions``, RPC, an
    extension): ``default``, ``accept-edits``, ``plan`` or ``yolo``."""

    mode: str
    previous_mode: str
    source: str  # user | rpc | extension | start
    type: str = field(default="permission_mode_change", init=False)


@dataclass(slots=True)
class RewindEvent:
    """Files and/or the conversation went back to before ``target_id`` (a message of the
    user's, or an earlier rewind, which this one undid)."""

    target_id: str
    scope: str  # code | conversation | both
    restored: list[str]
    removed: list[str]
    skipped: list[str]  # changed outside Wolli, left as they were
    lost: dict[str, str]  # could not be restored, and why
    type: str = field(default="rewind", init=False)


@dataclass(slots=True)
class ExtensionErrorEvent:
    """A handler raised, timed out or returned something invalid (pi's ``extension_error``).

    ``extension_path`` names the owner (an extension file, or a label for runtime-internal
    handlers); the session and its run carry on.
    """

    extension_path: str
    event: str
    error: str
    type: str = field(default="extension_error", init=False)


@dataclass(slots=True)
class NoticeEvent:
    """Something the user should know that is not an error of the run: a session file that
    could not be written, a setting that was ignored. Print mode writes it to stderr."""

    level: Literal["info", "warning", "error"]
    message: str
    type: str = field(default="notice", init=False)


SessionEvent = (
    AgentStartEvent
    | AgentEndEvent
    | TurnStartEvent
    | TurnEndEvent
    | MessageStartEvent
    | MessageUpdateEvent
    | MessageEndEvent
    | ToolExecutionStartEvent
    | ToolExecutionUpdateEvent
    | ToolExecutionEndEvent
    | SessionStartEvent
    | SessionShutdownEvent
    | SessionTreeEvent
    | RunStateEvent
    | QueueUpdateEvent
    | CompactionStartEvent
    | CompactionEndEvent
    | AutoRetryStartEvent
    | AutoRetryEndEvent
    | ModelSelectEvent
    | ThinkingLevelSelectEvent
    | PermissionModeChangeEvent
    | RewindEvent
    | ExtensionErrorEvent
    | NoticeEvent
)

__all__ = [
    "AgentEndEvent",
    "AgentStartEvent",
    "AutoRetryEndEvent",
    "AutoRetryStartEvent",
    "CompactionEndEvent",
    "CompactionReason",
    "CompactionStartEvent",
    "ExtensionErrorEvent",
    "MessageEndEvent",
    "MessageStartEvent",
    "MessageUpdateEvent",
    "ModelSelectEvent",
    "NoticeEvent",
    "PermissionModeChangeEvent",
    "RewindEvent",
    "QueueUpdateEvent",
    "RunState",
    "RunStateEvent",
    "SessionEvent",
    "SessionShutdownEvent",
    "SessionStartEvent",
    "ShutdownReason",
    "StartReason",
    "ThinkingLevelSelectEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
]
