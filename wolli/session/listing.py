"""Listing and finding stored sessions without parsing whole files.

A ``/resume`` picker over thousands of sessions must open in a blink, so a file is never
parsed in full: the header line and the first user message come from the head, the name
from the last ``session_info`` line (found by a backward byte search), the message count
from a byte count, and ``modified`` from the file's mtime. Entry lines always start with
``{"type":"<kind>"`` (the writer puts ``type`` first), and a nested object can never sit
at the start of a line, so these byte searches cannot be fooled by message content.
Files larger than ``WHOLE_LIMIT`` are memory-mapped so only the touched pages are read.
Results are cached per process by (size, mtime) so repeated listings cost one ``stat``.
"""

from __future__ import annotations

import datetime as _dt
import mmap
import os
from collections.abc import Callable
from dataclasses import field, replace
from pathlib import Path
from typing import Any

from ..base.json_input import parse_json
from ..base.records import record
from ..base.safe_files import open_regular
from ..config.paths import cwd_slug, sessions_dir
from .tags import fold_tags

HEAD_BYTES = 64 * 1024
WHOLE_LIMIT = 1024 * 1024
PREVIEW_CHARS = 500
_MAX_LINE = 8 * 1024 * 1024
_FIRST_MESSAGES_SCANNED = 20

_MESSAGE = b'\n{"type":"message"'
_SESSION_INFO = b'\n{"type":"session_info"'
_TAGS = b'\n{"type":"tags"'


@record
class SessionInfo:
    path: str
    id: str
    cwd: str
    name: str | None
    created: _dt.datetime
    modified: _dt.datetime
    message_count_estimate: int | None
    first_message: str | None
    parent_session: str | None = None
    # {} in plain listings; folded tags from ``find_sessions`` and ``with_tags=True``.
    tags: dict[str, str] = field(default_factory=dict)

    @property
    def created_at(self) -> str:
        return self.created.isoformat().replace("+00:00", "Z")


SessionFilter = dict[str, Any] | Callable[[SessionInfo], bool]

# path -> ((size, mtime_ns, inode), info without tags, folded tags or None if not scanned)
_cache: dict[str, tuple[tuple[int, int, int], SessionInfo, dict[str, str] | None]] = {}
_CACHE_MAX = 20_000
# A session file's bytes: read whole when small, memory-mapped when large.
_Buffer = bytes | mmap.mmap


def _parse_time(value: Any) -> _dt.datetime:
    try:
        parsed = _dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except (ValueError, AttributeError):
        return _dt.datetime.fromtimestamp(0, _dt.UTC)
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=_dt.UTC)


def _line_at(buf: _Buffer, start: int) -> bytes | None:
    """The line starting at ``start`` (just after a newline), or None if torn or too long."""
    end = buf.find(b"\n", start, start + _MAX_LINE)
    if end < 0:
        return None  # an unterminated (torn) last line, or absurdly long
    return bytes(buf[start:end])


def _load_line(buf: _Buffer, start: int) -> dict[str, Any] | None:
    line = _line_at(buf, start)
    if line is None:
        return None
    try:
        data = parse_json(line.decode("utf-8"))
    except ValueError:  # includes UnicodeDecodeError
        return None
    return data if isinstance(data, dict) else None


def _text_of(content: object) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(b.get("text", "") for b in content if isinstance(b, dict) and b.get("type") == "text")
    return ""


def _first_user_message(buf: _Buffer, start: int) -> str | None:
    pos = start
    for _ in range(_FIRST_MESSAGES_SCANNED):
        pos = buf.find(_MESSAGE, pos)
        if pos < 0:
            return None
        if b'"role":"user"' in buf[pos : pos + 400]:
            data = _load_line(buf, pos + 1)
            message = data.get("message") if data else None
            if isinstance(message, dict):
                text = _text_of(message.get("content")).strip()
                if text:
                    return text[:PREVIEW_CHARS]
        pos += 1
    return None


def _latest_name(buf: _Buffer, size: int) -> str | None:
    end = size
    while True:
        pos = buf.rfind(_SESSION_INFO, 0, end)
        if pos < 0:
            return None
        data = _load_line(buf, pos + 1)
        if data is not None:
            name = data.get("name")
            return name if isinstance(name, str) and name else None
        end = pos  # torn or damaged: the one before still counts


def _fold_tags(buf: _Buffer) -> dict[str, str]:
    tags: dict[str, str] = {}
    pos = buf.find(_TAGS)
    while pos >= 0:
        data = _load_line(buf, pos + 1)
        delta = data.get("tags") if data else None
        if isinstance(delta, dict):
            fold_tags(tags, delta)
        pos = buf.find(_TAGS, pos + 1)
    return tags


def _read_header(line: bytes) -> dict[str, Any] | None:
    """The header fields listing needs, checked by hand (cheaper than the pydantic model)."""
    try:
        data = parse_json(line.decode("utf-8"))
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("type") != "session":
        return None
    if not isinstance(data.get("id"), str) or not isinstance(data.get("cwd"), str):
        return None
    return data


def _scan(path: str, st: os.stat_result, with_tags: bool) -> tuple[SessionInfo, dict[str, str] | None] | None:
    size = st.st_size
    if size == 0:
        return None
    fd, _ = open_regular(path)  # a FIFO or device named *.jsonl is skipped, never waited on
    with os.fdopen(fd, "rb") as handle:
        head = handle.read(HEAD_BYTES if size > WHOLE_LIMIT else size)
        mapped: mmap.mmap | None = None
        if size > WHOLE_LIMIT:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        try:
            buf: _Buffer = mapped if mapped is not None else head
            header_end = buf.find(b"\n", 0, _MAX_LINE)
            header = _read_header(bytes(buf[: header_end if header_end >= 0 else size]))
            if header is None:
                return None
            start = max(header_end, 0)
            if mapped is None:
                count: int | None = head.count(_MESSAGE)  # buf is head
            else:
                sample = mapped[:WHOLE_LIMIT]
                count = round(sample.count(_MESSAGE) * size / WHOLE_LIMIT)
            info = SessionInfo(
                path=path,
                id=header["id"],
                cwd=header["cwd"],
                name=_latest_name(buf, size),
                created=_parse_time(header.get("timestamp")),
                modified=_dt.datetime.fromtimestamp(st.st_mtime).astimezone(),
                message_count_estimate=count,
                first_message=_first_user_message(buf, start),
                parent_session=header.get("parentSession") if isinstance(header.get("parentSession"), str) else None,
            )
            tags = _fold_tags(buf) if with_tags else None
        finally:
            if mapped is not None:
                mapped.close()
    return info, tags


def read_session_info(path: str | os.PathLike[str], *, with_tags: bool = False) -> SessionInfo | None:
    """Summary of one session file, or None when it is not a usable session file."""
    key = os.fspath(path)
    try:
        st = os.stat(key)
    except OSError:
        _cache.pop(key, None)
        return None
    stamp = (st.st_size, st.st_mtime_ns, st.st_ino)
    cached = _cache.get(key)
    if cached is not None and cached[0] == stamp and (cached[2] is not None or not with_tags):
        info, tags = cached[1], cached[2]
    else:
        try:
            scanned = _scan(key, st, with_tags)
        except OSError:
            return None
        if scanned is None:
            return None
        info, tags = scanned
        if len(_cache) >= _CACHE_MAX:
            _cache.clear()
        _cache[key] = (stamp, info, tags)
    return replace(info, tags=dict(tags)) if with_tags and tags is not None else replace(info, tags={})


def _session_files(folder: Path) -> list[str]:
    try:
        with os.scandir(folder) as it:
            return [e.path for e in it if e.name.endswith(".jsonl") and e.is_file()]
    except OSError:
        return []


def _collect(files: list[str], with_tags: bool) -> list[SessionInfo]:
    infos = [info for path in files if (info := read_session_info(path, with_tags=with_tags)) is not None]
    infos.sort(key=lambda i: i.modified, reverse=True)
    return infos


def _root(session_dir: str | os.PathLike[str] | None) -> Path:
    return Path(session_dir) if session_dir is not None else sessions_dir()


def session_folder(cwd: str, session_dir: str | os.PathLike[str] | None = None) -> Path:
    """``<sessions root>/<cwd slug>``: where the sessions of one working directory live."""
    return _root(session_dir) / cwd_slug(cwd)


def list_sessions(
    cwd: str, session_dir: str | os.PathLike[str] | None = None, *, with_tags: bool = False
) -> list[SessionInfo]:
    """Sessions of one working directory, newest first. ``session_dir`` is the sessions root."""
    return _collect(_session_files(session_folder(cwd, session_dir)), with_tags)


def all_session_files(session_dir_root: str | os.PathLike[str] | None = None) -> list[str]:
    root = _root(session_dir_root)
    try:
        with os.scandir(root) as it:
            folders = [e.path for e in it if e.is_dir()]
    except OSError:
        return []
    return [path for folder in folders for path in _session_files(Path(folder))]


def list_all_sessions(
    session_dir_root: str | os.PathLike[str] | None = None, *, with_tags: bool = False
) -> list[SessionInfo]:
    """Sessions of every working directory, newest first."""
    return _collect(all_session_files(session_dir_root), with_tags)


_STRUCTURED_KEYS = {"name", "tag", "tags", "cwd", "text"}


def _tags_match(tags: dict[str, str], wanted: dict[str, Any]) -> bool:
    """Subset match; a wanted value of None only asks for the key to be present."""
    return all(k in tags and (v is None or tags[k] == str(v)) for k, v in wanted.items())


def _compile(filter: SessionFilter) -> Callable[[SessionInfo], bool]:
    if callable(filter):
        return filter
    if not isinstance(filter, dict):
        raise TypeError("find_sessions filter must be a dict or a callable(SessionInfo) -> bool")
    if not filter or not set(filter) <= _STRUCTURED_KEYS:
        # The extension API form: {"telegram:chat": "42"} matches folded tags.
        return lambda info: _tags_match(info.tags, filter)
    name = str(filter["name"]).lower() if filter.get("name") is not None else None
    text = str(filter["text"]).lower() if filter.get("text") is not None else None
    cwd = os.path.abspath(filter["cwd"]) if filter.get("cwd") is not None else None
    wanted: dict[str, Any] = {**(filter.get("tags") or {}), **(filter.get("tag") or {})}

    def predicate(info: SessionInfo) -> bool:
        if name is not None and name not in (info.name or "").lower():
            return False
        if text is not None and text not in (info.first_message or "").lower():
            return False
        if cwd is not None and os.path.abspath(info.cwd) != cwd:
            return False
        return _tags_match(info.tags, wanted)

    return predicate


def find_sessions(filter: SessionFilter, session_dir_root: str | os.PathLike[str] | None = None) -> list[SessionInfo]:
    """Stored sessions matching ``filter``, newest first, each with its folded tags.

    ``filter`` is a callable, a structured dict ``{"name": substr, "text": substr of the first
    message, "cwd": path, "tag": {key: value|None}}`` (every given condition must hold), or
    any other dict, read as a tag subset match (``{"telegram:chat": "42"}``).
    """
    predicate = _compile(filter)
    infos = list_all_sessions(session_dir_root, with_tags=True)
    return [info for info in infos if predicate(info)]


def clear_cache() -> None:
    _cache.clear()
