"""Writing files back from checkpoints: all of them or none, even if Wolli is killed midway.

One restore is three steps around a journal in ``<blobs>/journal/``:

1. *prepare*: every new content goes to a temporary file beside its target (synced); the
   journal lists them as ``prepared``. Nothing the user sees has changed yet;
2. *commit*: the journal is rewritten as ``committed`` (a rename, synced). From here on the
   restore will happen; ``on_commit`` runs (the session records the rewind);
3. *apply*: each temporary file is renamed over its target (a rename is atomic), deleted
   files are removed; then the journal goes.

Killed before the commit, the next :func:`recover` throws the temporary files away (every
file is as it was); killed after it, :func:`recover` finishes the renames and records the
rewind if the session did not (every file is as restored). Wolli runs :func:`recover` when
it opens a session of that folder, so "all old or all new" holds from then on.

The same place keeps *pending* checkpoints: the content files had before a tool call that
is still running (:func:`write_pending`). If Wolli dies during the call, opening the
session records them (:func:`recover_beside`), so the change can still be rewound.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ...base.durable import sync_folder
from ...base.json_input import parse_json
from .blobs import BlobStore

TEMP_PREFIX = ".wolli-restore-"


@dataclass(frozen=True)
class Change:
    path: str
    sha: str | None  # None: the file did not exist, so it is removed
    mode: int | None = None


@dataclass
class RestoreResult:
    restored: list[str]
    removed: list[str]
    failed: dict[str, str]


def journal_dir(store: BlobStore) -> Path:
    return store.root / "journal"


def _write_json(path: Path, data: dict[str, Any]) -> None:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    with open(temporary, "w", encoding="utf-8") as out:
        json.dump(data, out)
        out.flush()
        os.fsync(out.fileno())
    os.replace(temporary, path)
    sync_folder(path.parent)


def restore(store: BlobStore, changes: list[Change], *, on_commit: Callable[[], None] | None = None,
            entry: dict[str, Any] | None = None) -> RestoreResult:
    """Put every change in place at once (see the module docstring). ``entry`` (the rewind
    entry's JSON and the session file) lets :func:`recover` record it after a crash.
    Raises before anything changed when a blob is missing or a file cannot be prepared."""
    token = uuid.uuid4().hex
    journal = journal_dir(store) / f"{token}.json"
    temps = [None if c.sha is None else str(Path(c.path).parent / f"{TEMP_PREFIX}{token}-{i}.tmp")
             for i, c in enumerate(changes)]
    planned: list[dict[str, Any]] = [{"path": c.path, "temp": t} for c, t in zip(changes, temps, strict=True)]
    try:
        _write_json(journal, {"state": "prepared", "changes": planned})  # temps named before they exist
        for change, temp in zip(changes, temps, strict=True):
            if change.sha is None or temp is None:
                continue
            data = store.get(change.sha)
            target = Path(change.path)
            target.parent.mkdir(parents=True, exist_ok=True)
            fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as out:
                out.write(data)
                out.flush()
                os.fsync(out.fileno())
            os.chmod(temp, _mode_for(target, change.mode))
        _write_json(journal, {"state": "committed", "changes": planned, "entry": entry})
    except BaseException:
        _discard(planned)
        _remove(journal)
        raise
    if on_commit is not None:
        on_commit()
    return _apply(journal, planned)


def _mode_for(target: Path, recorded: int | None) -> int:
    """The mode the file had when its content was kept, else the one it has, else a new file's."""
    if recorded is not None:
        return recorded & 0o7777
    try:
        return os.stat(target).st_mode & 0o7777
    except OSError:
        mask = os.umask(0)
        os.umask(mask)
        return 0o666 & ~mask


def _apply(journal: Path, planned: list[dict[str, Any]]) -> RestoreResult:
    result = RestoreResult([], [], {})
    for item in planned:
        path, temp = item["path"], item["temp"]
        try:
            if temp is None:
                if os.path.lexists(path):
                    os.unlink(path)
                    result.removed.append(path)
            elif os.path.exists(temp):
                os.replace(temp, path)
                result.restored.append(path)
        except OSError as exc:
            result.failed[path] = exc.strerror or str(exc)
    for folder in {os.path.dirname(item["path"]) for item in planned}:
        sync_folder(Path(folder))
    if result.failed:
        _discard(planned)  # what could not go into place must not linger as a temp file
    _remove(journal)
    return result


def recover(store: BlobStore) -> list[str]:
    """Finish or undo restores a killed Wolli left behind; returns what it did, one line each."""
    folder = journal_dir(store)
    try:
        journals = sorted(p for p in folder.iterdir() if p.suffix == ".json")
    except OSError:
        return []
    done: list[str] = []
    for journal in journals:
        try:
            data = parse_json(journal.read_text("utf-8"))
        except (OSError, ValueError):
            _remove(journal)
            continue
        planned = [c for c in data.get("changes") or [] if isinstance(c, dict) and isinstance(c.get("path"), str)]
        if data.get("state") != "committed":
            _discard(planned)
            _remove(journal)
            done.append(f"an interrupted rewind was undone ({len(planned)} files left as they were)")
            continue
        entry = data.get("entry")
        if isinstance(entry, dict):
            _record(entry)
        result = _apply(journal, planned)
        done.append(f"an interrupted rewind was finished ({len(result.restored) + len(result.removed)} files)")
    return done


def recover_beside(session_file: Path) -> list[str]:
    """:func:`recover` for the folder of ``session_file``, and the session's pending
    checkpoints recorded (one stat when there is nothing)."""
    blobs = session_file.parent / "blobs"
    if not (blobs / "journal").is_dir():
        return []
    done = recover(BlobStore(blobs))
    pending = _pending_path(BlobStore(blobs), str(session_file))
    if pending.is_file():
        done += _record_pending(pending)
    return done


def _pending_path(store: BlobStore, session_file: str) -> Path:
    return journal_dir(store) / f"pending-{Path(session_file).stem}.jsonl"


def write_pending(store: BlobStore, session_file: str | None, calls: list[dict[str, Any]]) -> None:
    """Note (or, with no ``calls``, forget) the before-records of running tool calls."""
    if session_file is None:
        return
    path = _pending_path(store, session_file)
    if not calls:
        _remove(path)
        return
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps({"sessionFile": session_file, "calls": calls}))
    os.replace(temporary, path)


def _record_pending(path: Path) -> list[str]:
    """The checkpoints of tool calls a killed Wolli never finished, as entries of their session."""
    from ..entries import CheckpointEntry, new_entry_id

    try:
        data = parse_json(path.read_text("utf-8"))
        session_file = data["sessionFile"]
        calls = [c for c in data["calls"] if isinstance(c, dict) and isinstance(c.get("files"), list)]
        parent = _last_entry_id(session_file)  # they follow whatever the file ends with
    except (OSError, ValueError, KeyError, TypeError):
        _remove(path)
        return []
    lines = []
    for call in calls:
        entry = CheckpointEntry(id=new_entry_id(), parent_id=parent, kind="tool", files=call["files"],
                                tool_call_id=call.get("toolCallId"))
        lines.append(entry.to_json())
        parent = entry.id
    if lines:
        from ..store import append_lines

        try:
            append_lines(session_file, lines)
        except OSError:
            return []
    _remove(path)
    return [f"the checkpoints of {len(lines)} tool call{'s' if len(lines) != 1 else ''} cut short by a crash "
            "were recorded"]


def _last_entry_id(session_file: str) -> str | None:
    """The id of the last whole entry of a session file (it is where the next one hangs)."""
    with open(session_file, "rb") as handle:
        size = handle.seek(0, os.SEEK_END)
        window = 65536
        while True:
            handle.seek(max(0, size - window))
            tail = handle.read()
            lines = tail.split(b"\n")
            whole = lines if window >= size else lines[1:]  # the first piece may be a line's end
            for line in reversed(whole):
                try:
                    data = parse_json(line)
                except ValueError:
                    continue
                if isinstance(data, dict) and data.get("type") != "session" and isinstance(data.get("id"), str):
                    return str(data["id"])
            if window >= size:
                return None
            window *= 8


def _record(entry: dict[str, Any]) -> None:
    """Append the rewind's entry to its session file unless it is there already."""
    from ..store import append_lines

    session_file, line, entry_id = entry.get("sessionFile"), entry.get("line"), entry.get("id")
    if not (isinstance(session_file, str) and isinstance(line, str) and isinstance(entry_id, str)):
        return
    try:
        with open(session_file, "rb") as handle:
            if f'"id":"{entry_id}"'.encode() in handle.read():
                return
        append_lines(session_file, [line])
    except OSError:
        pass


def _discard(planned: list[dict[str, Any]]) -> None:
    for item in planned:
        temp = item.get("temp")
        if isinstance(temp, str):
            _remove(Path(temp))


def _remove(path: Path) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
