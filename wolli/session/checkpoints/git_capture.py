"""What a shell command changed in a git work tree, from ``git status`` before and after.

Before the command: the work tree's dirty and untracked files (``git status``), each one's
content kept as a blob (a file already changed before the command is not in git, so its
content has to be kept now). After: ``git status`` again. A file is recorded when

- it was clean and now is not: its content before is the index's (``git cat-file --filters``,
  so line-ending and other filters give the bytes the file had);
- it is new (untracked, not there before): it did not exist;
- it was dirty or untracked and its content now differs, or it is gone, or clean again
  (``git checkout -- file`` throwing changes away): the blob kept before.

Not captured (``docs/checkpoints.md``): ignored files, files outside the work tree, and
files that are clean before and after although their content changed (a branch switch, a
reset: git's idea of clean moved with HEAD). Dirty files past ``limit`` bytes, or past
:data:`MAX_FILES` of them, are not kept; the record says so.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from typing import Any

from .blobs import BlobStore
from .records import FileState, HashCache, capture, current

MAX_FILES = 2000
TIMEOUT_S = 20.0


@dataclass
class GitSnapshot:
    top: str
    # path (absolute) -> porcelain status (" M", "??", "A ", ...)
    status: dict[str, str]
    # path -> the content it had (kept in the store), for every dirty or untracked file
    kept: dict[str, FileState] = field(default_factory=dict)
    # why some dirty files were not kept (too many), for the record
    note: str | None = None
    # path -> how it looked (stat), for files whose content could not be kept (too large,
    # not a regular file): without content, this is how a change is told from none
    stamps: dict[str, tuple[int, ...] | None] = field(default_factory=dict)


# The repository's own config may name programs for git to run (core.fsmonitor, filter
# drivers for status and cat-file --filters). Whoever can edit files (accept-edits, a
# sandboxed command) can write .git/config, and this git runs unconfined and unasked: it
# must never run them. The user's own (global, system) filters, such as Git LFS, stay.
_NO_PROGRAMS = ("-c", "core.fsmonitor=false")
_FILTER_KEYS = r"^filter\..*\.(clean|smudge|process)$"


def _git(cwd: str, *args: str, binary: bool = False) -> subprocess.CompletedProcess[Any]:
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    if args and args[0] in ("status", "cat-file"):
        env.update(_without_repository_filters(cwd))
    return subprocess.run(["git", *_NO_PROGRAMS, *args], cwd=cwd, capture_output=True, timeout=TIMEOUT_S, check=False,
                          stdin=subprocess.DEVNULL, env=env, text=not binary)


def _without_repository_filters(cwd: str) -> dict[str, str]:
    """Environment that blanks the filter drivers the repository's config defines (a blank
    command is no filter; git reads ``GIT_CONFIG_KEY_n`` from 2.31 on)."""
    done = subprocess.run(["git", *_NO_PROGRAMS, "config", "-z", "--show-scope", "--get-regexp", _FILTER_KEYS],
                          cwd=cwd, capture_output=True, timeout=TIMEOUT_S, check=False, stdin=subprocess.DEVNULL)
    names: set[str] = set()
    fields = done.stdout.split(b"\0")  # scope, then "key\nvalue", for each setting
    for scope, setting in zip(fields[0::2], fields[1::2], strict=False):  # a trailing empty field
        key = os.fsdecode(setting).split("\n", 1)[0]
        if key.startswith("filter.") and scope not in (b"global", b"system"):
            names.add(key[len("filter."):].rsplit(".", 1)[0])
    pairs = [(f"filter.{name}.{part}", "false" if part == "required" else "")
             for name in sorted(names) for part in ("clean", "smudge", "process", "required")]
    if not pairs:
        return {}
    env = {"GIT_CONFIG_COUNT": str(len(pairs))}
    for index, (key, value) in enumerate(pairs):
        env[f"GIT_CONFIG_KEY_{index}"], env[f"GIT_CONFIG_VALUE_{index}"] = key, value
    return env


def work_tree(cwd: str) -> str | None:
    """The top of the git work tree ``cwd`` is in, or None (no git, not a repository)."""
    try:
        done = _git(cwd, "rev-parse", "--show-toplevel")
    except (OSError, subprocess.SubprocessError):
        return None
    top = done.stdout.strip() if done.returncode == 0 else ""
    return os.path.realpath(top) if top else None


def status(top: str) -> dict[str, str]:
    done = _git(top, "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames", binary=True)
    if done.returncode != 0:
        raise OSError(f"git status failed: {done.stderr.decode('utf-8', 'replace').strip()}")
    out: dict[str, str] = {}
    for item in done.stdout.split(b"\0"):
        if len(item) < 4:
            continue
        code = item[:2].decode("ascii", "replace")
        name = os.fsdecode(item[3:])
        out[os.path.join(top, name)] = code
    return out


def snapshot(store: BlobStore, cwd: str, limit: int, top: str | None = None) -> GitSnapshot | None:
    """Before a command: the status, and the content of every dirty or untracked file."""
    top = top or work_tree(cwd)
    if top is None:
        return None
    try:
        found = status(top)
    except (OSError, subprocess.SubprocessError):
        return None
    snap = GitSnapshot(top, found)
    for index, path in enumerate(sorted(found)):
        if index >= MAX_FILES:
            snap.note = f"{len(found) - MAX_FILES} more changed files were not kept"
            break
        kept = snap.kept[path] = capture(store, path, limit)
        if kept.skipped:
            snap.stamps[path] = _stamp(path)
    return snap


def _stamp(path: str) -> tuple[int, ...] | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return None
    return (st.st_mode, st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino)


def changes(store: BlobStore, before: GitSnapshot, limit: int, cache: HashCache | None = None) -> list[FileState]:
    """After the command: each file it changed, with the content it had before."""
    try:
        after = status(before.top)
    except (OSError, subprocess.SubprocessError):
        return []
    out: list[FileState] = []
    for path in sorted(set(before.status) | set(after)):
        kept = before.kept.get(path)
        if path not in before.status:  # clean before (or ignored)
            if after.get(path) == "??":
                out.append(FileState(path, None))  # new
            else:
                out.append(_from_index(store, before.top, path, limit))
            continue
        if kept is None:
            continue  # dirty before but not kept (too many files): nothing to restore it from
        if kept.skipped:
            # Not kept, so it cannot be restored: recorded (as lost) only when it may have
            # changed, not after every command while an untracked link to a folder is there.
            if path not in before.stamps or _stamp(path) != before.stamps[path]:
                out.append(kept)
            continue
        now = current(path, cache)
        if now.sha != kept.sha:
            out.append(kept)
    return out


def _from_index(store: BlobStore, top: str, path: str, limit: int) -> FileState:
    relative = os.path.relpath(path, top)
    try:
        done = _git(top, "cat-file", "--filters", f":{relative}", binary=True)
    except (OSError, subprocess.SubprocessError) as exc:
        return FileState(path, None, skipped=f"git cat-file failed ({exc})")
    if done.returncode != 0:
        return FileState(path, None, skipped="not in the index")
    data: bytes = done.stdout
    if len(data) > limit:
        return FileState(path, None, skipped=f"larger than checkpoints.maxFileBytes ({len(data):,} bytes)")
    mode = None
    try:
        mode = os.stat(path).st_mode & 0o7777
    except OSError:
        pass
    return FileState(path, store.put(data), mode)
