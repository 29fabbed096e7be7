"""The branch an export shows, walked through damage.

Files are read by :func:`wolli.session.store.load` (``require_header=False``), which keeps
every good line; this walk from the last entry to the root bridges a parent that was on a
bad line, so one damaged line does not hide the history before it.
"""

from __future__ import annotations

from typing import Any


def current_branch(entries: list[Any], dangling: set[str] | frozenset[str] = frozenset()) -> tuple[list[Any], int]:
    """Entries from the root to the last entry, and how many parent links were broken.

    When a parent cannot be found (its line was malformed) the walk goes on from the
    nearest earlier entry in the file, so one bad line does not hide the history before it.
    ``dangling`` names entries the loader already hung on the entry before them (their
    parent was nowhere in the file): the gap is marked there too.
    """
    if not entries:
        return [], 0
    by_id = {entry.id: entry for entry in entries}
    position = {id(entry): index for index, entry in enumerate(entries)}
    path: list[Any] = []
    seen: set[str] = set()
    gaps = 0
    current: Any = entries[-1]
    while current is not None and current.id not in seen:
        seen.add(current.id)
        path.append(current)
        parent_id = current.parent_id
        if current.id in dangling:
            gaps += 1
            path.append(Gap())
        if parent_id is None:
            break
        parent = by_id.get(parent_id)
        if parent is None:
            gaps += 1
            index = position[id(current)]
            parent = entries[index - 1] if index > 0 else None
            path.append(Gap())
        current = parent
    path.reverse()
    return path, gaps


class Gap:
    """Stands in the branch where an entry could not be read."""
