"""Tolerant reading of a session file for export: every line that parses, and where not.

The export must show what a damaged file still holds, so this reader never stops at a bad
line: it records the line number and goes on, and the branch walk bridges a missing parent.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from .entries import SessionHeader, parse_entry


@dataclass
class LoadedSession:
    """What could be read from a session file, in file order."""

    header: SessionHeader | None
    entries: list[Any]
    malformed_lines: list[int] = field(default_factory=list)


def load_session_file(path: Path) -> LoadedSession:
    """Parse every line that parses; remember the numbers of the lines that do not."""
    header: SessionHeader | None = None
    entries: list[Any] = []
    malformed: list[int] = []
    previous_id: str | None = None
    with open(path, encoding="utf-8", errors="replace") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                data = json.loads(line)
                if not isinstance(data, dict):
                    raise ValueError("not an object")
                if data.get("type") == "session":
                    if header is not None or entries:
                        raise ValueError("second header")
                    header = SessionHeader.model_validate(data)
                    continue
                if "id" not in data and "parentId" not in data:
                    # Pre-tree (version 1) files: entries follow each other.
                    data = {**data, "id": f"line-{number}", "parentId": previous_id}
                entry = parse_entry(data)
            except (ValueError, ValidationError):
                malformed.append(number)
                continue
            entries.append(entry)
            previous_id = entry.id
    return LoadedSession(header, entries, malformed)


def current_branch(entries: list[Any]) -> tuple[list[Any], int]:
    """Entries from the root to the last entry, and how many parent links were broken.

    When a parent cannot be found (its line was malformed) the walk goes on from the
    nearest earlier entry in the file, so one bad line does not hide the history before it.
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
