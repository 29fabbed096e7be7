"""Finding stored session files: the ``.jsonl`` files of a folder, a file's session id, and
the files whose id starts with a prefix (``wolli -r <prefix>``)."""

from __future__ import annotations

import os
from pathlib import Path


def jsonl_in(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return [e.path for e in it if e.name.endswith(".jsonl") and e.is_file()]
    except OSError:
        return []


def subagent_files(root: Path, folder_name: str) -> list[str]:
    """Every subagent session file: ``<root>/<any project>/<folder_name>/*.jsonl``."""
    try:
        with os.scandir(root) as it:
            folders = [e.path for e in it if e.is_dir()]
    except OSError:
        return []
    return [path for folder in folders for path in jsonl_in(Path(folder) / folder_name)]


def session_id_of(path: str) -> str | None:
    """The id from ``<timestamp>_<id>.jsonl``, else from the header line."""
    stem = os.path.basename(path)[: -len(".jsonl")]
    _, sep, tail = stem.partition("_")
    if sep and len(tail) == 36 and tail.count("-") == 4:
        return tail.lower()
    from .listing import read_session_info  # the header read; the listing loads when used

    info = read_session_info(path)
    return info.id.lower() if info is not None else None


def match_prefix(files: list[str], prefix: str) -> list[tuple[str, str]]:
    matches = []
    for path in sorted(files):
        sid = session_id_of(path)
        if sid is not None and sid.startswith(prefix):
            matches.append((sid, path))
    return matches
