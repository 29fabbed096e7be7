"""What ``/tree`` reads of a session's tree, and what choosing a point of it means.

:class:`TreeSource` is the seam: :class:`ManagerTree` reads a session manager in this process;
:class:`RecordTree` reads the record a server sends (``get_tree``, built here by
:func:`tree_record`), so the picker, the line mode's list and the command's questions are
the same for an app attached to ``wolli serve``. Rows come from :func:`.tree_rows.tree_rows`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from .tree_rows import TreeRow, content_text, describe, tree_rows

if TYPE_CHECKING:
    from ...session.manager import SessionManager


@dataclass(frozen=True)
class TreePoint:
    """Where choosing an entry goes: just before your message (which goes back into the
    editor), or to the entry itself."""

    target: str | None
    editor_text: str | None


class TreeSource(Protocol):
    def leaf_id(self) -> str | None: ...

    def rows(self, *, mode: str = "default", folded: set[str] | frozenset[str] = frozenset(),
             search: str = "") -> list[TreeRow]: ...

    def set_label(self, entry_id: str, label: str | None) -> None: ...

    def point(self, entry_id: str) -> TreePoint:
        """Raises KeyError for an entry that is not in the tree."""

    def leaves_messages(self, target: str | None) -> bool:
        """Whether moving to ``target`` leaves messages behind (a branch to summarize)."""


class ManagerTree:
    def __init__(self, manager: SessionManager) -> None:
        self.manager = manager

    def leaf_id(self) -> str | None:
        return self.manager.get_leaf_id()

    def rows(self, *, mode: str = "default", folded: set[str] | frozenset[str] = frozenset(),
             search: str = "") -> list[TreeRow]:
        leaf = self.manager.get_leaf_id()
        path = {e.id for e in self.manager.get_branch()} if leaf is not None else set()
        return tree_rows(self.manager.get_tree(), leaf, path, mode=mode, folded=folded, search=search)

    def set_label(self, entry_id: str, label: str | None) -> None:
        self.manager.append_label(entry_id, label)

    def point(self, entry_id: str) -> TreePoint:
        entry = self.manager.get_entry(entry_id)
        if entry is None:
            raise KeyError(f"no entry {entry_id} in this session")
        message: Any = getattr(entry, "message", None)
        if getattr(entry, "type", None) == "message" and getattr(message, "role", None) == "user":
            return TreePoint(entry.parent_id, content_text(message.content))
        return TreePoint(entry.id, None)

    def leaves_messages(self, target: str | None) -> bool:
        from ...runtime.live.tree_navigation import abandoned_entries

        return any(getattr(e, "type", None) == "message"
                   for e in abandoned_entries(self.manager, self.manager.get_leaf_id(), target))


def tree_record(manager: SessionManager) -> dict[str, Any]:
    """The tree as data for a client elsewhere (RPC ``get_tree``): each entry's id, parent,
    type, row kind and text, label, and for your messages their whole text (for the editor)."""
    leaf = manager.get_leaf_id()
    entries = []
    pending = list(reversed(manager.get_tree()))
    while pending:  # file order within each level; no recursion (a chain is thousands deep)
        node = pending.pop()
        kind, text = describe(node.entry)
        record: dict[str, Any] = {"id": node.entry.id, "parentId": getattr(node.entry, "parent_id", None),
                                  "type": getattr(node.entry, "type", ""), "kind": kind, "text": text}
        if node.label is not None:
            record["label"] = node.label
        point = ManagerTree(manager).point(node.entry.id) if kind == "user" else None
        if point is not None and point.editor_text is not None:
            record["userText"] = point.editor_text
        entries.append(record)
        pending.extend(reversed(node.children))
    return {"leafId": leaf, "entries": entries}


@dataclass
class _Entry:
    id: str
    type: str
    parent_id: str | None


@dataclass
class _Node:
    entry: _Entry
    label: str | None
    children: list[_Node] = field(default_factory=list)


class RecordTree:
    """A tree from :func:`tree_record`'s data; labels go through ``on_label``."""

    def __init__(self, record: dict[str, Any], on_label: Callable[[str, str | None], None] | None = None) -> None:
        self._leaf = record.get("leafId") if isinstance(record.get("leafId"), str) else None
        raw = [e for e in record.get("entries") or [] if isinstance(e, dict) and isinstance(e.get("id"), str)]
        self._records = {str(e["id"]): e for e in raw}
        self._nodes = {entry_id: _Node(_Entry(entry_id, str(e.get("type", "")), _text_or_none(e.get("parentId"))),
                                       _text_or_none(e.get("label")))
                       for entry_id, e in self._records.items()}
        self._roots: list[_Node] = []
        for node in self._nodes.values():
            parent = self._nodes.get(node.entry.parent_id) if node.entry.parent_id is not None else None
            (parent.children if parent is not None else self._roots).append(node)
        self._on_label = on_label

    def leaf_id(self) -> str | None:
        return self._leaf

    def _path(self, entry_id: str | None) -> list[str]:
        out: list[str] = []
        seen: set[str] = set()
        while entry_id is not None and entry_id in self._nodes and entry_id not in seen:
            seen.add(entry_id)
            out.append(entry_id)
            entry_id = self._nodes[entry_id].entry.parent_id
        return out

    def rows(self, *, mode: str = "default", folded: set[str] | frozenset[str] = frozenset(),
             search: str = "") -> list[TreeRow]:
        def described(entry: Any) -> tuple[str, str]:
            found = self._records[entry.id]
            return str(found.get("kind", "setting")), str(found.get("text", ""))

        return tree_rows(self._roots, self._leaf, set(self._path(self._leaf)), mode=mode,  # type: ignore[arg-type]
                         folded=folded, search=search, describe_entry=described)

    def set_label(self, entry_id: str, label: str | None) -> None:
        node = self._nodes[entry_id]
        node.label = label
        if label is None:
            self._records[entry_id].pop("label", None)
        else:
            self._records[entry_id]["label"] = label
        if self._on_label is not None:
            self._on_label(entry_id, label)

    def point(self, entry_id: str) -> TreePoint:
        found = self._records[entry_id]
        text = found.get("userText")
        if found.get("type") == "message" and isinstance(text, str):
            return TreePoint(_text_or_none(found.get("parentId")), text)
        return TreePoint(entry_id, None)

    def leaves_messages(self, target: str | None) -> bool:
        kept = set(self._path(target))
        return any(self._records[e].get("type") == "message" for e in self._path(self._leaf) if e not in kept)


def _text_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None
