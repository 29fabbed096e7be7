"""Session file lines: the header and the tree entries (format version 3, docs/sessions.md).

Every entry has an 8-hex ``id`` and a ``parentId`` (``None`` for the first); together they
form a tree whose current leaf is the last appended entry unless the user navigates.
Entry timestamps are ISO-8601 strings; message timestamps inside are epoch milliseconds.
Unknown fields survive a read/write round trip (``wire_extra``, :mod:`wolli.base.wire`).
"""

from __future__ import annotations

import datetime as _dt
import os
from dataclasses import field
from typing import Any, Literal

from ..agent.messages import AgentMessage
from ..ai.types import UserContentBlock
from ..base.records import record
from ..base.wire import WireModel, wire_union

SESSION_VERSION = 3


def iso_now() -> str:
    return _dt.datetime.now(_dt.UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z")


def new_entry_id(existing: set[str] | None = None) -> str:
    while True:
        candidate = os.urandom(4).hex()  # what secrets.token_hex does, without hashlib/hmac
        if existing is None or candidate not in existing:
            return candidate


@record(slots=True, kw_only=True)
class SubagentOrigin(WireModel):
    """In a child session's header: the subagent it ran as and where its parent called it."""

    name: str
    parent_session_id: str
    tool_call_id: str


@record(slots=True, kw_only=True)
class SessionHeader(WireModel):
    type: Literal["session"] = "session"
    version: int = SESSION_VERSION
    id: str
    timestamp: str = field(default_factory=iso_now)
    cwd: str
    parent_session: str | None = None
    # Set in a subagent's session (docs/subagents.md): ``parent_session`` is then the file of
    # the session whose ``task`` call started it.
    subagent: SubagentOrigin | None = None


@record(slots=True, kw_only=True)
class _Entry(WireModel):
    id: str
    parent_id: str | None = None
    timestamp: str = field(default_factory=iso_now)

    def to_json_dict(self) -> dict[str, Any]:
        """``type`` first and ``parentId`` always present (``null`` for a root), as pi writes."""
        data = super(_Entry, self).to_json_dict()  # noqa: UP008 - slots: the class is remade
        return {"type": data.pop("type"), "id": data.pop("id"), "parentId": self.parent_id, **data}

    def to_json(self) -> str:
        import json

        return json.dumps(self.to_json_dict(), ensure_ascii=False, separators=(",", ":"))


@record(slots=True, kw_only=True)
class MessageEntry(_Entry):
    type: Literal["message"] = "message"
    message: AgentMessage


@record(slots=True, kw_only=True)
class ModelChangeEntry(_Entry):
    type: Literal["model_change"] = "model_change"
    provider: str
    model_id: str


@record(slots=True, kw_only=True)
class ThinkingLevelChangeEntry(_Entry):
    type: Literal["thinking_level_change"] = "thinking_level_change"
    thinking_level: str


@record(slots=True, kw_only=True)
class CompactionEntry(_Entry):
    type: Literal["compaction"] = "compaction"
    summary: str
    first_kept_entry_id: str
    tokens_before: int = 0
    # {"readFiles": [...], "modifiedFiles": [...]} for the built-in compactor.
    details: Any = None
    from_hook: bool | None = None


@record(slots=True, kw_only=True)
class BranchSummaryEntry(_Entry):
    type: Literal["branch_summary"] = "branch_summary"
    from_id: str
    summary: str
    details: Any = None
    from_hook: bool | None = None


@record(slots=True, kw_only=True)
class CustomEntry(_Entry):
    """Extension state: stored, never sent to the model."""

    type: Literal["custom"] = "custom"
    custom_type: str
    data: Any = None


@record(slots=True, kw_only=True)
class CustomMessageEntry(_Entry):
    """An extension message that is part of the model context."""

    type: Literal["custom_message"] = "custom_message"
    custom_type: str
    content: str | list[UserContentBlock] = ""
    display: bool = True
    details: Any = None


@record(slots=True, kw_only=True)
class LabelEntry(_Entry):
    type: Literal["label"] = "label"
    target_id: str
    label: str | None = None  # None clears the label


@record(slots=True, kw_only=True)
class SessionInfoEntry(_Entry):
    type: Literal["session_info"] = "session_info"
    name: str | None = None


@record(slots=True, kw_only=True)
class TagsEntry(_Entry):
    """Wolli's folded key/value tags: later entries override earlier keys; None deletes."""

    type: Literal["tags"] = "tags"
    tags: dict[str, str | None] = field(default_factory=dict)


@record(slots=True, kw_only=True)
class CheckpointEntry(_Entry):
    """Wolli's file checkpoint (``docs/checkpoints.md``): what files held before the agent
    changed them, as content hashes of blobs kept beside the session file.

    ``files`` holds one record per file: ``{"path", "before", "after"?, "mode"?, "skipped"?}``
    with ``before``/``after`` a sha256 (or None: the file did not exist). ``kind`` says what
    wrote it: ``tool`` (before an edit or write runs), ``bash`` (what a shell command changed
    in a git work tree), ``settle`` (the files as a run left them), ``rewind`` (a restore,
    whose ``before`` undoes it). Never sent to the model.
    """

    type: Literal["checkpoint"] = "checkpoint"
    kind: str = "tool"
    files: list[dict[str, Any]] = field(default_factory=list)
    tool_call_id: str | None = None
    # rewind: the entry rewound to, where the session was, and what was restored.
    target_id: str | None = None
    from_leaf_id: str | None = None
    scope: str | None = None


SessionEntry = (
    MessageEntry
    | ModelChangeEntry
    | ThinkingLevelChangeEntry
    | CompactionEntry
    | BranchSummaryEntry
    | CustomEntry
    | CustomMessageEntry
    | LabelEntry
    | SessionInfoEntry
    | TagsEntry
    | CheckpointEntry
)
_ENTRY_CLASSES = (MessageEntry, ModelChangeEntry, ThinkingLevelChangeEntry, CompactionEntry, BranchSummaryEntry,
                  CustomEntry, CustomMessageEntry, LabelEntry, SessionInfoEntry, TagsEntry, CheckpointEntry)
_decode_entry = wire_union(*_ENTRY_CLASSES)
KNOWN_ENTRY_TYPES = frozenset(cls.__dataclass_fields__["type"].default for cls in _ENTRY_CLASSES)


def parse_entry(data: dict[str, Any]) -> Any:
    """Validate one JSON object into its entry class (raises ``wolli.base.wire.WireError``)."""
    return _decode_entry(data)
