"""Taking a file's state: its content into a blob, or just its hash, as a checkpoint record.

A record is a plain dict (it is stored as JSON in a ``checkpoint`` entry):
``{"path": "/abs/file", "before": sha|None, "after": sha|None, "mode": 0o644, "skipped": why}``;
``None`` means the file did not exist. Paths are absolute with links resolved, so a restore
writes the file a link pointed to rather than replacing the link.

Hashing reads the whole file; :class:`HashCache` skips that for files whose size and times
have not changed, except files changed in the last two seconds (a write within the same
clock tick keeps the time; git calls such entries "racily clean" and looks again, as here).
"""

from __future__ import annotations

import hashlib
import os
import stat
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .blobs import BlobStore

_RACY_NS = 2_000_000_000


@dataclass(frozen=True)
class FileState:
    path: str
    sha: str | None  # None: no such file
    mode: int | None = None
    skipped: str | None = None  # why the content was not kept (too large, unreadable, not a file)


def real(path: str) -> str:
    """Absolute, links resolved (a missing file keeps its written spelling below real folders)."""
    return os.path.realpath(os.path.abspath(path))


class HashCache:
    def __init__(self) -> None:
        self._known: dict[str, tuple[tuple[int, int, int, int], str]] = {}

    def sha(self, path: str, st: os.stat_result, read: Callable[[], str]) -> str:
        key = (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)
        found = self._known.get(path)
        if found is not None and found[0] == key:
            return found[1]
        sha = read()
        if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _RACY_NS:
            self._known[path] = (key, sha)
        return sha


def _stat(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):  # missing, or a name no file can have (a NUL byte)
        return None


def capture(store: BlobStore, path: str, limit: int) -> FileState:
    """The file's content kept in ``store`` (or why not), for a ``before`` record."""
    path = real(path)
    st = _stat(path)
    if st is None:
        return FileState(path, None)
    if not stat.S_ISREG(st.st_mode):
        return FileState(path, None, skipped="not a regular file")
    if st.st_size > limit:
        return FileState(path, None, st.st_mode & 0o7777, f"larger than checkpoints.maxFileBytes ({st.st_size:,} bytes)")
    try:
        with open(path, "rb") as handle:
            data = handle.read(limit + 1)
    except OSError as exc:
        return FileState(path, None, st.st_mode & 0o7777, f"unreadable ({exc.strerror or exc})")
    if len(data) > limit:
        return FileState(path, None, st.st_mode & 0o7777, "grew past checkpoints.maxFileBytes while read")
    return FileState(path, store.put(data), st.st_mode & 0o7777)


def current(path: str, cache: HashCache | None = None, limit: int | None = None) -> FileState:
    """The file's hash as it is now (nothing stored), for ``after`` and for comparing."""
    path = real(path)
    st = _stat(path)
    if st is None:
        return FileState(path, None)
    if not stat.S_ISREG(st.st_mode):
        return FileState(path, None, skipped="not a regular file")
    if limit is not None and st.st_size > limit:
        return FileState(path, None, st.st_mode & 0o7777, "too large to compare")

    def read() -> str:
        digest = hashlib.sha256()
        with open(path, "rb") as handle:
            for chunk in iter(lambda: handle.read(1 << 20), b""):
                digest.update(chunk)
        return digest.hexdigest()

    try:
        sha = cache.sha(path, st, read) if cache is not None else read()
    except OSError as exc:
        return FileState(path, None, st.st_mode & 0o7777, f"unreadable ({exc.strerror or exc})")
    return FileState(path, sha, st.st_mode & 0o7777)


def before_record(state: FileState) -> dict[str, Any]:
    record: dict[str, Any] = {"path": state.path, "before": state.sha}
    if state.mode is not None:
        record["mode"] = state.mode
    if state.skipped:
        record["skipped"] = state.skipped
    return record


def after_record(state: FileState) -> dict[str, Any]:
    record: dict[str, Any] = {"path": state.path, "after": state.sha}
    if state.skipped:
        record["skipped"] = state.skipped
    return record
