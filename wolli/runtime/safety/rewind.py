"""Rewinding a live session: code, conversation, or both, to before one of the user's messages.

The steps, in an order that keeps every failure harmless:

1. the plan (:mod:`wolli.session.checkpoints.plan`): which files go back to what, which
   changed outside Wolli since (those are not overwritten unless ``on_conflict`` says so:
   ``ask`` asks through ``ask(conflicts)``, ``overwrite``, ``skip`` them, or ``cancel``);
2. the conversation (``conversation``/``both``): the leaf moves to just before the message
   through the tree navigation (``session_before_tree`` may still say no: then nothing
   happens), and the message goes back into the editor;
3. the files (``code``/``both``): their content now is kept first, then they are restored
   all at once (:mod:`wolli.session.checkpoints.restore`), and a ``rewind`` checkpoint entry
   records both, so the rewind itself can be undone (it is a rewind point of its own).

``rewind`` events tell handlers and front ends what was restored.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ...session.checkpoints.plan import SCOPES, RewindPoint, conflicts, plan_rewind, rewind_points
from ...session.checkpoints.records import before_record, capture, current
from ...session.checkpoints.restore import Change, restore
from ..events import RewindEvent

if TYPE_CHECKING:
    from ...session.entries import SessionEntry
    from .guarded import GuardedSession

CONFLICT_CHOICES = ("ask", "overwrite", "skip", "cancel")
AskConflicts = Callable[[list[str]], "Awaitable[str | None] | str | None"]


class RewindError(RuntimeError):
    """The rewind cannot be done (no such point, files changed outside Wolli, a blob lost...)."""

    def __init__(self, message: str, conflicts: list[str] | None = None) -> None:
        super().__init__(message)
        self.conflicts = conflicts or []


@dataclass
class RewindResult:
    point: RewindPoint
    scope: str
    restored: list[str] = field(default_factory=list)  # written back
    removed: list[str] = field(default_factory=list)  # did not exist before: deleted
    skipped: list[str] = field(default_factory=list)  # changed outside Wolli, left alone
    lost: dict[str, str] = field(default_factory=dict)  # could not be restored, and why
    failed: dict[str, str] = field(default_factory=dict)  # the disk refused
    editor_text: str | None = None  # the message rewound to, for the editor
    cancelled: bool = False

    def summary(self) -> str:
        if self.cancelled:
            return "Rewind cancelled; nothing changed."
        parts = []
        if self.scope in ("conversation", "both"):
            parts.append("conversation rewound")
        count = len(self.restored) + len(self.removed)
        if self.scope in ("code", "both"):
            parts.append(f"{count} file{'s' if count != 1 else ''} restored")
        if self.skipped:
            parts.append(f"{len(self.skipped)} changed outside Wolli left alone")
        if self.lost:
            parts.append(f"{len(self.lost)} could not be restored ({'; '.join(sorted(set(self.lost.values())))})")
        if self.failed:
            parts.append(f"{len(self.failed)} failed to write")
        return "Rewind: " + ", ".join(parts) + "."


def points(session: GuardedSession) -> list[RewindPoint]:
    return rewind_points(session.session_manager.get_branch())


async def rewind(session: GuardedSession, entry_id: str | None = None, *, scope: str = "both", on_conflict: str = "ask",
                 ask: AskConflicts | None = None) -> RewindResult:
    if scope not in SCOPES:
        raise RewindError(f"scope must be one of {', '.join(SCOPES)}, not {scope!r}")
    if on_conflict not in CONFLICT_CHOICES:
        raise RewindError(f"on_conflict must be one of {', '.join(CONFLICT_CHOICES)}, not {on_conflict!r}")
    await session.wait_for_idle()
    manager = session.session_manager
    branch = manager.get_branch()
    available = rewind_points(branch)
    point = _find(available, entry_id)
    checkpoints = session.checkpoints
    plan = plan_rewind(branch, point) if scope in ("code", "both") else None
    result = RewindResult(point, scope, lost=dict(plan.lost) if plan else {})
    now: dict[str, Any] = {}
    if plan is not None and plan.restore:
        states = await asyncio.to_thread(lambda: [current(p, checkpoints.cache) for p in plan.restore])
        now = {s.path: s.sha for s in states}
        found = conflicts(branch, plan, now)
        if found:
            decision = on_conflict
            if decision == "ask":
                answer = ask(list(found)) if ask is not None else None
                if inspect.isawaitable(answer):
                    answer = await answer
                decision = answer if answer in ("overwrite", "skip") else "cancel"
            if decision == "cancel":
                raise RewindError(f"{len(found)} file{'s' if len(found) != 1 else ''} changed outside Wolli since the "
                                  "checkpoint: " + ", ".join(found), found)
            if decision == "skip":
                result.skipped = list(found)
                for path in found:
                    plan.restore.pop(path)
    from_leaf = manager.get_leaf_id()
    moved = await _move_conversation(session, point, scope)
    if moved is None:
        result.cancelled = True
        return result
    if point.kind == "message" and scope in ("conversation", "both"):
        entry = manager.get_entry(point.entry_id)
        result.editor_text = _text_of(entry)
    changes = [Change(path, sha, mode) for path, (sha, mode) in (plan.restore.items() if plan else [])
               if now.get(path) != sha]
    await _restore(session, point, scope, from_leaf, changes, result)
    await session.emit(RewindEvent(point.entry_id, scope, list(result.restored), list(result.removed),
                                   list(result.skipped), dict(result.lost)))
    return result


def _find(available: list[RewindPoint], entry_id: str | None) -> RewindPoint:
    if not available:
        raise RewindError("there is nothing to rewind to yet: this session has no messages of yours")
    if entry_id is None:
        return next((p for p in available if p.kind == "message"), available[0])
    for point in available:
        if point.entry_id == entry_id or (len(entry_id) >= 4 and point.entry_id.startswith(entry_id)):
            return point
    raise RewindError(f"{entry_id!r} is not a rewind point of this branch (a message of yours, or a rewind)")


async def _move_conversation(session: GuardedSession, point: RewindPoint, scope: str) -> bool | None:
    """Move the leaf for the conversation part; None when a handler said no."""
    if scope == "code":
        return False
    manager = session.session_manager
    target = point.leaf_after
    if point.kind == "rewind":
        entry = manager.get_entry(point.entry_id)
        if getattr(entry, "scope", None) == "code":
            return False  # that rewind left the conversation alone: so does its undo
    if target is not None and manager.get_entry(target) is None:
        target = None
    if target == manager.get_leaf_id():
        return False
    moved = await session.navigate_tree(target)
    return True if moved else None


async def _restore(session: GuardedSession, point: RewindPoint, scope: str, from_leaf: str | None, changes: list[Change],
                   result: RewindResult) -> None:
    """Keep the files' content now, restore them at once, and record the rewind."""
    checkpoints = session.checkpoints
    manager = session.session_manager
    store, limit = checkpoints.store, checkpoints.limit
    befores = await asyncio.to_thread(lambda: [capture(store, c.path, limit) for c in changes])
    records = []
    for change, before in zip(changes, befores, strict=True):
        record = {**before_record(before), "after": change.sha}
        if change.mode is not None:
            record.setdefault("mode", change.mode)
        records.append(record)
    entry = manager.prepare_checkpoint("rewind", records, target_id=point.entry_id, from_leaf_id=from_leaf,
                                       scope=scope)
    journal_entry = {"sessionFile": manager.get_session_file(), "line": entry.to_json(), "id": entry.id} \
        if manager.is_persisted() else None

    def commit() -> None:
        try:
            manager.append_prepared(entry)
        except OSError as exc:
            session._stop_writing(exc)

    if not changes:
        commit()
        return
    done = await asyncio.to_thread(restore, store, changes, on_commit=commit, entry=journal_entry)
    result.restored, result.removed, result.failed = done.restored, done.removed, done.failed
    checkpoints.forget_files([c.path for c in changes])  # the next change keeps the restored content


def _text_of(entry: SessionEntry | None) -> str | None:
    message = getattr(entry, "message", None)
    content = getattr(message, "content", None)
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return "\n".join(getattr(b, "text", "") for b in content if getattr(b, "type", None) == "text") or None
    return None
