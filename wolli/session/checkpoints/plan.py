"""Rewinding, worked out over one branch of the session tree (pure: entries in, plans out).

A **rewind point** is one of the user's messages on the branch (going back to just before
it), or an earlier rewind (going back to just before *that*, which undoes it). For a point,
:func:`plan_rewind` says what each file must become: for every file a checkpoint entry after
the point names, the ``before`` of the *first* such record (the content before the agent's
first change from there on). A file whose content cannot be restored (it was too large to
keep) is listed apart.

What Wolli last left each file as comes from the records on the whole branch: an ``after``
(a settled run, a shell command, a rewind) states it; a ``before`` (a change about to be
made) makes it unknown until settled. :func:`conflicts` compares that with the disk: a file
that differs, or whose state is unknown, changed outside Wolli (or a run was cut short), and
is not overwritten without asking.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from collections.abc import Iterable

    from ..entries import SessionEntry

Scope = Literal["code", "conversation", "both"]
SCOPES: tuple[Scope, ...] = ("both", "code", "conversation")
_UNKNOWN = "unknown"


@dataclass(frozen=True)
class RewindPoint:
    entry_id: str
    kind: Literal["message", "rewind"]
    text: str  # the user's message, or what the rewind did
    timestamp: str
    files: tuple[str, ...]  # the files a rewind to here would restore
    # Where the conversation goes: the message's parent, or where the rewind came from.
    leaf_after: str | None


@dataclass
class RewindPlan:
    point: RewindPoint
    # path -> (sha or None for "delete", mode to give a file made anew)
    restore: dict[str, tuple[str | None, int | None]] = field(default_factory=dict)
    # path -> why it cannot be restored
    lost: dict[str, str] = field(default_factory=dict)


def _checkpoints(entries: Iterable[Any]) -> list[Any]:
    return [e for e in entries if getattr(e, "type", None) == "checkpoint"]


def _user_text(entry: SessionEntry) -> str | None:
    message: Any = getattr(entry, "message", None)
    if getattr(entry, "type", None) != "message" or getattr(message, "role", None) != "user":
        return None
    content = message.content
    if isinstance(content, str):
        return content
    return " ".join(getattr(b, "text", "") or "" for b in content if getattr(b, "type", None) == "text") or "(image)"


def rewind_points(branch: list[Any]) -> list[RewindPoint]:
    """Every point of ``branch`` (root first) one can rewind to, newest first."""
    points: list[RewindPoint] = []
    later: dict[str, None] = {}  # files named by checkpoints after the entry being looked at
    for entry in reversed(branch):
        if getattr(entry, "type", None) == "checkpoint" and entry.kind != "settle":
            for record in reversed(entry.files):
                if "before" in record and isinstance(record.get("path"), str):
                    later[record["path"]] = None
        text = _user_text(entry)
        kind: Literal["message", "rewind"]
        if text is not None:
            kind, leaf_after = "message", entry.parent_id
        elif getattr(entry, "type", None) == "checkpoint" and entry.kind == "rewind":
            kind, leaf_after = "rewind", entry.from_leaf_id
            restored = len(entry.files)
            text = f"undo the rewind ({restored} file{'s' if restored != 1 else ''} restored, {entry.scope})"
        else:
            continue
        points.append(RewindPoint(entry.id, kind, text, entry.timestamp, tuple(reversed(later)), leaf_after))
    return points


def plan_rewind(branch: list[Any], point: RewindPoint) -> RewindPlan:
    ids = [e.id for e in branch]
    start = ids.index(point.entry_id)
    plan = RewindPlan(point)
    for entry in _checkpoints(branch[start:]):
        if entry.kind == "settle":
            continue
        for record in entry.files:
            path = record.get("path")
            if not isinstance(path, str) or "before" not in record:
                continue
            if path in plan.restore or path in plan.lost:
                continue
            if record.get("skipped") and record.get("before") is None:
                plan.lost[path] = str(record["skipped"])
                continue
            plan.restore[path] = (record.get("before"), record.get("mode"))
    return plan


def last_known(branch: list[Any]) -> dict[str, str | None]:
    """What Wolli last left each file as: a sha, None (no file), or "unknown"."""
    known: dict[str, str | None] = {}
    for entry in _checkpoints(branch):
        for record in entry.files:
            path = record.get("path")
            if not isinstance(path, str):
                continue
            if "after" in record:
                known[path] = _UNKNOWN if record.get("skipped") else record["after"]
            elif entry.kind == "tool":
                known[path] = _UNKNOWN  # about to change; settled later (or the run was cut short)
    return known


def conflicts(branch: list[Any], plan: RewindPlan, now: dict[str, str | None]) -> list[str]:
    """Files of ``plan`` whose content on disk (``now``) is not what Wolli left there."""
    known = last_known(branch)
    out = []
    for path in plan.restore:
        expected = known.get(path, _UNKNOWN)
        if expected == _UNKNOWN or expected != now.get(path):
            if now.get(path) != plan.restore[path][0]:  # already as the rewind would make it: fine
                out.append(path)
    return out


def blobs_of(entries: Iterable[Any]) -> set[str]:
    """Every blob the checkpoint entries refer to (a fork elsewhere copies them)."""
    out: set[str] = set()
    for entry in _checkpoints(entries):
        for record in entry.files:
            sha = record.get("before")
            if isinstance(sha, str):
                out.add(sha)
    return out
