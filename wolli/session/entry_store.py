"""The entries of one open session: objects for the current context, line references for the rest.

A resumed session needs entry objects only for what the model is sent next: the branch from
the leaf back to the latest compaction's first kept entry (``SessionManager`` decides which).
Every other entry of the file (older history above a compaction, abandoned branches) stays an
:class:`EntryRef`: its id, parent, type and where its line is in the file. It is built into
an object when something asks for it (``/tree``, fork, export, ``get_entry``) and not kept
afterwards, so a long session costs memory for its context, not for its file.

A line is validated when it is built. The index (``store.load(..., lazy=True)``) already
dropped every line whose id, parent or type could not be read, so a line found damaged this
late is one whose body is broken: it is reported then, like any skipped line (its line
number and why), and its children hang on its parent, as they would have at load.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator
from typing import Any

from .store import EntryRef, LoadedSession, entry_from_line, entry_from_span, parse_line_carefully

__all__ = ["EntryRef", "EntryStore"]


class EntryStore:
    """Entries in file order, by id; each an entry object or an :class:`EntryRef`."""

    def __init__(self, errors: list[str]) -> None:
        self._order: list[str] = []
        self._items: dict[str, Any] = {}
        # Where the lines of built and kept entries are (``_pack``), so they can be let go
        # again: one int each rather than the whole reference (a long context has many).
        self._places: dict[str, int] = {}
        # How many compactions the session has: none (the usual long session) means no
        # branch needs scanning for one.
        self.compactions = 0
        # Ids of loaded entries built and kept (the context): what ``release_except`` lets go.
        self._kept: set[str] = set()
        # Lines found damaged when built: id -> parent id (their children hang on the parent).
        self._bad: dict[str, str | None] = {}
        self._path: str | None = None
        # The file's bytes while it is being opened (then lines are read back one by one).
        self._raw: bytes | None = None
        self._errors = errors  # the manager's load_errors: late findings go there too

    # ------------------------------------------------------------------ filling

    def load(self, items: Iterable[Any], path: str | os.PathLike[str], raw: bytes) -> None:
        """Take a file's index (``store.load(..., lazy=True)``): refs and entry objects."""
        self._path = os.fspath(path)
        self._raw = raw
        order, by_id = self._order, self._items
        compactions = 0
        for item in items:
            order.append(item.id)
            by_id[item.id] = item
            if item.type == "compaction":
                compactions += 1
        self.compactions += compactions

    def done_loading(self) -> None:
        """Let go of the file's bytes: from now on lines are read back from the file."""
        self._raw = None

    def add(self, entry: Any) -> None:
        self._order.append(entry.id)
        self._items[entry.id] = entry
        if entry.type == "compaction":
            self.compactions += 1

    # ------------------------------------------------------------------ reading

    def __contains__(self, entry_id: object) -> bool:
        return entry_id in self._items

    def __len__(self) -> int:
        return len(self._order)

    def ids(self) -> list[str]:
        return list(self._order)

    def last_id(self) -> str | None:
        return self._order[-1] if self._order else None

    def kind(self, entry_id: str) -> str | None:
        item = self._items.get(entry_id)
        return item.type if item is not None else None

    def parent_of(self, entry_id: str) -> str | None:
        """The parent an entry hangs on: past any line found damaged since the index was made."""
        parent = self._items[entry_id].parent_id
        hops = 0
        while parent in self._bad and hops <= len(self._bad):
            parent, hops = self._bad[parent], hops + 1
        return parent

    def is_built(self, entry_id: str) -> bool:
        item = self._items.get(entry_id)
        return item is not None and type(item) is not EntryRef

    def get(self, entry_id: str, *, keep: bool = False) -> Any | None:
        """The entry object (built from its line if need be; ``keep`` holds on to it)."""
        item = self._items.get(entry_id)
        if item is None or type(item) is not EntryRef:
            return item
        entry = self._build(item)
        if entry is not None and keep:
            self._items[entry_id] = entry
            self._kept.add(entry_id)
            self._places[entry_id] = _pack(item)
        return entry

    def keep_all(self, ids: list[str]) -> list[Any]:
        """``get(i, keep=True)`` for each of ``ids``, in one pass (the context on open)."""
        items, kept, places, raw = self._items, self._kept, self._places, self._raw
        validate = entry_from_span
        out: list[Any] = []
        for entry_id in ids:
            item = items.get(entry_id)
            if item is None:
                continue
            if type(item) is EntryRef:
                entry = None
                if raw is not None and not self._bad:  # the usual case, without the detours
                    try:
                        entry = validate(raw, item.start, item.end)
                    except Exception:
                        entry = None
                    if entry is not None and (entry.id != item.id or entry.parent_id != item.parent_id):
                        entry = None  # repaired at load: the careful way below sets it right
                if entry is None:
                    entry = self._build(item)
                    if entry is None:
                        continue
                items[entry_id] = entry
                kept.add(entry_id)
                places[entry_id] = _pack(item)
                item = entry
            out.append(item)
        return out

    def entries(self) -> list[Any]:
        """Every entry in file order, built as needed (and not kept)."""
        return list(self.iter_entries())

    def iter_entries(self, kinds: frozenset[str] | None = None, after: str | None = None) -> Iterator[Any]:
        """Entries in file order, each built when the caller reaches it (and not kept);
        with ``kinds``, only entries of those types: the others are never built; with
        ``after``, only those after that entry in the file."""
        items = self._items
        order = self._order
        start = order.index(after) + 1 if after is not None and after in items else 0
        for entry_id in order[start:]:  # a copy: a line found damaged leaves the order
            item = items.get(entry_id)
            if item is None or (kinds is not None and item.type not in kinds):
                continue
            entry = item if type(item) is not EntryRef else self._build(item)
            if entry is not None:
                yield entry

    def path_ids(self, from_id: str | None) -> list[str]:
        """Ids from ``from_id`` up to its root, leaf first (nothing is built)."""
        ids: list[str] = []
        seen: set[str] = set()
        items = self._items
        current = from_id
        if not self._bad:  # the usual case: no line found damaged, parents as indexed
            while current is not None and current not in seen:
                item = items.get(current)
                if item is None:
                    break
                seen.add(current)
                ids.append(current)
                current = item.parent_id
            return ids
        while current is not None and current in items and current not in seen:
            seen.add(current)
            ids.append(current)
            current = self.parent_of(current)
        return ids

    def first_of_kind(self, ids: list[str], kind: str) -> int | None:
        """The index in ``ids`` of the first entry of type ``kind`` (nothing is built)."""
        if kind == "compaction" and not self.compactions:
            return None
        items = self._items
        for index, entry_id in enumerate(ids):
            if items[entry_id].type == kind:
                return index
        return None

    def walk_back(self, from_id: str | None) -> Iterator[Any]:
        """Entries from ``from_id`` towards the root, built one at a time as the caller goes."""
        for entry_id in self.path_ids(from_id):
            entry = self.get(entry_id)
            if entry is not None:
                yield entry

    def release_except(self, keep: set[str]) -> None:
        """Turn loaded entries outside ``keep`` back into references (the context moved)."""
        items, places = self._items, self._places
        for entry_id in self._kept - keep:
            entry = items.get(entry_id)
            place = places.pop(entry_id, None)
            if entry is not None and place is not None:
                items[entry_id] = EntryRef(entry_id, entry.parent_id, entry.type, *_unpack(place))
        self._kept &= keep

    # ------------------------------------------------------------------ building

    def _line(self, ref: EntryRef) -> bytes:
        raw = self._raw  # read once: a worker thread finishing a deferred context may drop it
        if raw is not None:
            return raw[ref.start : ref.end]
        assert self._path is not None
        length = ref.end - ref.start
        fd = os.open(self._path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
        try:
            return os.pread(fd, length, ref.start)
        finally:
            os.close(fd)

    def _build(self, ref: EntryRef) -> Any | None:
        """Validate a line into its entry, or report it and take it out of the tree."""
        try:
            line = self._line(ref)
        except OSError as exc:
            return self._drop(ref, f"line {ref.number}: cannot read it back from the file ({exc.strerror or exc})")
        try:
            entry = entry_from_line(line)
        except Exception:
            report = LoadedSession(header=None)
            entry = parse_line_carefully(line, ref.number, False, report)
            if entry is None:
                return self._drop(ref, report.errors[0])
        if entry.id != ref.id or entry.type != ref.type:  # the file was replaced under us
            return self._drop(ref, f"line {ref.number}: changed since the session was opened; skipped")
        parent = self.parent_of(ref.id)
        if entry.parent_id != parent:  # repaired at load (a dangling or skipped parent)
            entry.parent_id = parent
        return entry

    def _drop(self, ref: EntryRef, error: str) -> Any | None:
        """Skip a line found damaged: reported (``line N: why``), its children on its parent."""
        self._errors.append(error)
        parent = self._bad[ref.id] = self.parent_of(ref.id)
        for item in self._items.values():  # entries built before this was found hang on its parent
            if item.parent_id == ref.id and type(item) is not EntryRef:
                item.parent_id = parent
        del self._items[ref.id]
        self._places.pop(ref.id, None)
        self._kept.discard(ref.id)
        self._order.remove(ref.id)
        return None


# A line's place as one int: start, length and line number, 30 bits each (files are capped
# at 512 MB, so each fits).
_BITS = 30
_MASK = (1 << _BITS) - 1


def _pack(ref: EntryRef) -> int:
    return ref.start | (ref.end - ref.start) << _BITS | ref.number << 2 * _BITS


def _unpack(place: int) -> tuple[int, int, int]:
    start = place & _MASK
    return start, start + (place >> _BITS & _MASK), place >> 2 * _BITS
