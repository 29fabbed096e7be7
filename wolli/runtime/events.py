"""The session event stream: one typed union every front end ``match``es on.

An :class:`~wolli.runtime.live.live_session.LiveSession` emits the agent events of
``wolli.agent.events`` interleaved with the session events defined here. Observers (the TUI,
json and rpc modes) receive exactly these objects, in order; ``docs/events.md`` documents
every event and field as it appears on the JSON wire (camelCase).

Handler-only events (the ones extension code may answer: ``tool_call``, ``input``,
``context``...) live in :mod:`wolli.runtime.handlers.hook_events`; they are not part of this stream.
"""

from __future__ import annotations

from dataclasses import field
from typing import TYPE_CHECKING, Any, Literal

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
from ..base.records import record

if TYPE_CHECKING:
    from ..ai.types import Model
    from ..session.compaction import CompactionResult

CompactionReason = Literal["manual", "threshold", "overflow"]
RunState = Literal["idle", "running", "retrying", "compacting"]
StartReason = Literal["startup", "reload", "new", "resume", "fork"]
ShutdownReason = Literal["quit", "reload", "new", "resume", "fork"]


@record(slots=True)
class SessionStartEvent:
    reason: StartReason
    previous_session_file: str | None = None
    type: Literal["session_start"] = field(default="session_start", init=False)


@record(slots=True)
class SessionShutdownEvent:
    reason: ShutdownReason
    target_session_file: str | None = None
    type: Literal["session_shutdown"] = field(default="session_shutdown", init=False)


@record(slots=True)
class SessionBeforeTreeEvent:
    """The leaf is about to move to ``target_id`` (a handler may answer ``{"cancel": True}``)."""

    target_id: str | None
    old_leaf_id: str | None
    type: Literal["session_before_tree"] = field(default="session_before_tree", init=False)


@record(slots=True)
class SessionTreeEvent:
    """The leaf moved (tree navigation): the branch the model sees is a different one."""

    new_leaf_id: str | None
    old_leaf_id: str | None
    type: Literal["session_tree"] = field(default="session_tree", init=False)


@record(slots=True)
class RunStateEvent:
    """The session's run state changed (``idle`` -> ``running`` -> ``retrying`` ...)."""

    state: RunState
    previous: RunState
    type: Literal["run_state"] = field(default="run_state", init=False)


@record(slots=True)
class QueueUpdateEvent:
    """The texts still queued for delivery (pi's ``queue_update``)."""

    steering: list[str]
    follow_up: list[str]
    type: Literal["queue_update"] = field(default="queue_update", init=False)


@record(slots=True)
class CompactionStartEvent:
    reason: CompactionReason
    type: Literal["compaction_start"] = field(default="compaction_start", init=False)


@record(slots=True)
class CompactionEndEvent:
    reason: CompactionReason
    result: CompactionResult | None = None  # set when it succeeded
    aborted: bool = False
    will_retry: bool = False
    error_message: str | None = None
    type: Literal["compaction_end"] = field(default="compaction_end", init=False)


@record(slots=True)
class AutoRetryStartEvent:
    attempt: int
    max_attempts: int
    delay_ms: int
    error_message: str
    type: Literal["auto_retry_start"] = field(default="auto_retry_start", init=False)


@record(slots=True)
class AutoRetryEndEvent:
    success: bool
    attempt: int
    final_error: str | None = None
    type: Literal["auto_retry_end"] = field(default="auto_retry_end", init=False)


@record(slots=True)
class ModelSelectEvent:
    model: Model
    previous_model: object
    source: Literal["set", "cycle", "restore"]
    type: Literal["model_select"] = field(default="model_select", init=False)


@record(slots=True)
class ThinkingLevelSelectEvent:
    level: str
    previous_level: str | None
    type: Literal["thinking_level_select"] = field(default="thinking_level_select", init=False)


@record(slots=True)
class PermissionModeChangeEvent:
    """The session's permission mode changed (the user's key, ``/permissions``, RPC, an
    extension): ``default``, ``accept-edits``, ``plan`` or ``yolo``."""

    mode: str
    previous_mode: str
    source: str  # user | rpc | extension | start
    type: Literal["permission_mode_change"] = field(default="permission_mode_change", init=False)


@record(slots=True)
class RewindEvent:
    """Files and/or the conversation went back to before ``target_id`` (a message of the
    user's, or an earlier rewind, which this one undid)."""

    target_id: str
    scope: str  # code | conversation | both
    restored: list[str]
    removed: list[str]
    skipped: list[str]  # changed outside Wolli, left as they were
    lost: dict[str, str]  # could not be restored, and why
    type: Literal["rewind"] = field(default="rewind", init=False)


@record(slots=True)
class ExtensionErrorEvent:
    """A handler raised, timed out or returned something invalid (pi's ``extension_error``).

    ``extension_path`` names the owner (an extension file, or a label for runtime-internal
    handlers); the session and its run carry on.
    """

    extension_path: str
    event: str
    error: str
    type: Literal["extension_error"] = field(default="extension_error", init=False)


@record(slots=True)
class NoticeEvent:
    """Something the user should know that is not an error of the run: a session file that
    could not be written, a setting that was ignored. Print mode writes it to stderr."""

    level: Literal["info", "warning", "error"]
    message: str
    type: Literal["notice"] = field(default="notice", init=False)


SubagentStatus = Literal["done", "error", "aborted"]


@record(slots=True)
class SubagentStartEvent:
    """A ``task`` call started a child session (docs/subagents.md). ``subagent_id`` is the
    child's session id; ``tool_call_id`` the parent's ``task`` call it answers."""

    subagent_id: str
    name: str
    tool_call_id: str
    description: str
    prompt: str
    session_file: str | None = None
    model: str | None = None  # provider/id
    type: Literal["subagent_start"] = field(default="subagent_start", init=False)


@record(slots=True)
class SubagentEndEvent:
    """A child finished: its answer (``result``) or why not (``error``)."""

    subagent_id: str
    name: str
    tool_call_id: str
    status: SubagentStatus
    result: str = ""
    error: str | None = None
    duration_ms: int = 0
    turns: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    changed_files: list[str] = field(default_factory=list)
    session_file: str | None = None
    type: Literal["subagent_end"] = field(default="subagent_end", init=False)


@record(slots=True)
class SubagentEvent:
    """One event of a running child, passed on to the parent's front ends (the TUI's child
    rows, line mode, json and RPC): ``event`` is the child's own event, unchanged."""

    subagent_id: str
    name: str
    tool_call_id: str
    event: Any
    type: Literal["subagent_event"] = field(default="subagent_event", init=False)


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
    | SubagentStartEvent
    | SubagentEndEvent
    | SubagentEvent
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
    "SubagentEndEvent",
    "SubagentEvent",
    "SubagentStartEvent",
    "SubagentStatus",
    "ThinkingLevelSelectEvent",
    "ToolExecutionEndEvent",
    "ToolExecutionStartEvent",
    "ToolExecutionUpdateEvent",
    "TurnEndEvent",
    "TurnStartEvent",
]
