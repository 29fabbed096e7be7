"""Removing checkpoint blobs that no session of their folder names any more.

Blobs are shared by every session file of one folder (:mod:`.blobs`), so a blob may go only
when none of them needs it: the sweep marks every sha256 named in a ``checkpoint`` line of
every session file of the folder and in the journal (rewinds in flight, pending tool
calls), then removes the other blobs. Marking reads raw lines and takes every quoted
64-hex string of a line that mentions ``"checkpoint"``: it may keep a blob it need not,
never the reverse, and it needs no JSON parsing of lines that are not checkpoints.

A running session (this process or another) stores a blob *before* it appends the entry
naming it, so blobs younger than :data:`GRACE_SECONDS` are never removed. The sweep runs
after a session is deleted and, at most once a day per folder, when a session first keeps a
file's content (both in a daemon thread, off the event loop; docs/checkpoints.md).
"""

from __future__ import annotations

import os
import re
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from .blobs import BlobStore

GRACE_SECONDS = 3600.0
SWEEP_EVERY_SECONDS = 24 * 3600.0
MARKER = ".last-sweep"
_SHA = re.compile(rb'"([0-9a-f]{64})"')
_RUNNING: dict[str, threading.Thread] = {}  # folder -> the sweep this process runs in it
_RUNNING_LOCK = threading.Lock()


@dataclass(frozen=True)
class SweepResult:
    removed: int = 0
    freed_bytes: int = 0
    kept: int = 0


def needed_blobs(folder: Path) -> set[str]:
    """Every sha the session files of ``folder`` and its journal name (a superset, see above)."""
    needed: set[str] = set()
    sources = [p for p in folder.glob("*.jsonl") if p.is_file()]
    journal = folder / "blobs" / "journal"
    if journal.is_dir():
        sources.extend(p for p in journal.iterdir() if p.is_file())
    for source in sources:  # an unreadable one raises: it might name any blob
        in_journal = source.parent == journal
        with open(source, "rb") as handle:
            for line in handle:
                if in_journal or b'"checkpoint"' in line:
                    needed.update(match.decode() for match in _SHA.findall(line))
    return needed


def sweep(folder: Path, *, grace_seconds: float = GRACE_SECONDS, now: float | None = None) -> SweepResult:
    """Remove the blobs of ``folder``'s ``blobs/`` that no session file there names.

    ``folder`` is a folder of session files. If any session file cannot be read, nothing is
    removed (it might need any blob)."""
    store = BlobStore(folder / "blobs")
    if not store.root.is_dir():
        return SweepResult()
    try:
        needed = needed_blobs(folder)
    except OSError:
        return SweepResult()
    now = time.time() if now is None else now
    removed = freed = kept = 0
    for shard in _shards(store.root):
        for blob in _entries(shard):
            is_blob = len(blob.name) == 62
            leftover = blob.name.startswith(".blob-")  # a write cut short by a crash
            if (is_blob and shard.name + blob.name in needed) or not (is_blob or leftover):
                kept += 1
                continue
            try:
                st = blob.stat()
                if now - st.st_mtime < grace_seconds:
                    kept += 1
                    continue
                blob.unlink()
            except OSError:
                continue
            removed += 1
            freed += st.st_size
        try:
            shard.rmdir()  # only succeeds once empty
        except OSError:
            pass
    _touch(store.root / MARKER)
    return SweepResult(removed, freed, kept)


def sweep_in_background(folder: Path, *, only_if_due: bool) -> threading.Thread | None:
    """:func:`sweep` in a daemon thread; with ``only_if_due``, only when the folder was not
    swept in the last :data:`SWEEP_EVERY_SECONDS`. Returns the thread (None: not started)."""
    marker = folder / "blobs" / MARKER
    if not (folder / "blobs").is_dir():
        return None
    if only_if_due:
        try:
            if time.time() - marker.stat().st_mtime < SWEEP_EVERY_SECONDS:
                return None
        except FileNotFoundError:
            _touch(marker)  # the first day of a folder: start counting, nothing can be old yet
            return None
        except OSError:
            return None
    key = str(folder.resolve())

    def run() -> None:
        try:
            sweep(folder)
        finally:
            with _RUNNING_LOCK:
                _RUNNING.pop(key, None)

    with _RUNNING_LOCK:
        if key in _RUNNING:
            return None
        thread = _RUNNING[key] = threading.Thread(target=run, name="wolli-blob-sweep", daemon=True)
    try:
        thread.start()
    except BaseException:  # no thread to run it: the folder is free for the next sweep
        with _RUNNING_LOCK:
            _RUNNING.pop(key, None)
        raise
    return thread


def wait_for_sweeps(timeout: float) -> bool:
    """Wait until the sweeps this process started have ended (at most ``timeout`` seconds in
    all); True when none is left running. For whoever removes a home folder afterwards: a
    sweep still finishing would write its marker into a folder being deleted."""
    deadline = time.monotonic() + timeout
    with _RUNNING_LOCK:
        threads = list(_RUNNING.values())
    for thread in threads:
        thread.join(max(0.0, deadline - time.monotonic()))
    return not any(t.is_alive() for t in threads)


def _shards(root: Path) -> list[Path]:
    try:
        return [p for p in root.iterdir() if len(p.name) == 2 and p.is_dir()]
    except OSError:
        return []


def _entries(shard: Path) -> list[Path]:
    try:
        return list(shard.iterdir())
    except OSError:
        return []


def _touch(path: Path) -> None:
    try:
        path.touch(mode=0o600)
        os.utime(path)
    except OSError:
        pass
