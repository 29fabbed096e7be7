"""Finding sessions for ``/resume``: by name, first message and folder at once, and by
anything said in them (a scan of the files, run off the UI thread by the client)."""

from __future__ import annotations

import mmap
import os
import re
from typing import TYPE_CHECKING, Any

from ...base.safe_files import open_regular
from .fuzzy import fuzzy_score

if TYPE_CHECKING:
    from ...session.listing import SessionInfo

CONTENT_SCAN_LIMIT = 200  # sessions found by content at most


def session_title(info: SessionInfo) -> str:
    return info.name or (info.first_message or "").replace("\n", " ").strip() or "(no messages)"


def match_sessions(sessions: list[Any], query: str) -> list[Any]:
    """Sessions whose name or first message match ``query`` (fuzzy) or whose folder contains
    it, best first; all of them, newest first, for an empty query. Folders are matched as
    plain text only: fuzzy letters-in-order would find almost anything in a long path."""
    query = query.strip()
    if not query:
        return list(sessions)
    needle = query.lower()
    scored: list[tuple[int, int, Any]] = []
    for index, info in enumerate(sessions):
        fields = (info.name or "", (info.first_message or "")[:100])
        best = max((s for f in fields if f and (s := fuzzy_score(query, f)) is not None), default=None)
        if best is None and needle in info.cwd.lower():
            best = 0
        if best is not None:
            scored.append((best, -index, info))
    scored.sort(key=lambda item: (item[0], item[1]), reverse=True)
    return [info for _, _, info in scored]


def content_matches(sessions: list[Any], query: str, *, exclude: set[str] | None = None,
                    limit: int = CONTENT_SCAN_LIMIT) -> list[Any]:
    """Sessions whose file contains ``query`` (case-insensitive, as JSON-escaped text),
    newest first. Reads each file once through mmap; unreadable files are skipped."""
    needle = query.strip()
    if len(needle) < 2:
        return []
    pattern = re.compile(re.escape(needle.encode("utf-8")), re.IGNORECASE)
    found: list[Any] = []
    for info in sessions:
        if exclude and info.path in exclude:
            continue
        try:
            fd, _ = open_regular(info.path)
            with os.fdopen(fd, "rb") as handle:
                if os.fstat(handle.fileno()).st_size == 0:
                    continue
                with mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as buf:
                    if pattern.search(buf):  # type: ignore[call-overload]
                        found.append(info)
        except (OSError, ValueError):
            continue
        if len(found) >= limit:
            break
    return found
