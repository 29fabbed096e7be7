"""Older session files (pi's format versions 1 and 2) brought up to version 3 on load.

Wolli reads pi's session files, so it upgrades them the way pi does:

* **v1 → v2**: v1 entries had no ``id``/``parentId``; each gets a fresh id and hangs on the
  entry before it (a linear chain). A ``compaction`` entry's ``firstKeptEntryIndex`` (an
  index into the file's JSON lines, header included) becomes ``firstKeptEntryId``.
* **v2 → v3**: the message role ``hookMessage`` was renamed ``custom``.

The header's missing ``version`` means 1. Migration works on the parsed JSON objects, before
validation, so a line that is still invalid afterwards is reported like any other bad line.
:func:`wolli.session.manager.SessionManager.open` then rewrites the file in the new format
(new entries must refer to the generated ids on the next load), keeping the original beside
it as ``<file>.v<N>``.
"""

from __future__ import annotations

from typing import Any

from .entries import SESSION_VERSION, new_entry_id


def header_version(header: dict[str, Any]) -> int:
    """The format version a header declares; pi's v1 headers have none."""
    version = header.get("version")
    return version if isinstance(version, int) and not isinstance(version, bool) else 1


def migrate(header: dict[str, Any], entries: list[dict[str, Any]]) -> int:
    """Upgrade ``header`` and ``entries`` in place; returns the version they were in."""
    version = header_version(header)
    if version < 2:
        _v1_to_v2(header, entries)
    if version < 3:
        _v2_to_v3(entries)
    if version < SESSION_VERSION:
        header["version"] = SESSION_VERSION
    return version


def _v1_to_v2(header: dict[str, Any], entries: list[dict[str, Any]]) -> None:
    ids: set[str] = set()
    previous: str | None = None
    for entry in entries:
        entry_id = new_entry_id(ids)
        ids.add(entry_id)
        entry["id"], entry["parentId"] = entry_id, previous
        previous = entry_id
    # Indexes count the header as line 0, as pi's did.
    lines = [header, *entries]
    for entry in entries:
        if entry.get("type") != "compaction" or "firstKeptEntryIndex" not in entry:
            continue
        index = entry.pop("firstKeptEntryIndex")
        if isinstance(index, int) and 0 < index < len(lines):
            entry["firstKeptEntryId"] = lines[index]["id"]


def _v2_to_v3(entries: list[dict[str, Any]]) -> None:
    for entry in entries:
        message = entry.get("message")
        if entry.get("type") == "message" and isinstance(message, dict) and message.get("role") == "hookMessage":
            message["role"] = "custom"
