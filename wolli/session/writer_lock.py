"""One writer per session file: a lock file beside it, held while a process writes it.

Two processes continuing the same session would each hang their next entry on the leaf
they loaded, and the file would silently fork: one exchange per race drops out of every
later context. So the process that writes a session holds an exclusive ``flock`` on
``<session>.jsonl.lock`` for as long as the session is live, and writes its pid there (for
the message another process shows). A second process that finds the lock held does not
write to that file: the runtime forks the session visibly instead (docs/sessions.md,
"One writer per session").

The kernel drops a ``flock`` when its process dies, however it dies, so a lock left by a
dead process (SIGKILL, a crash, a power cut) never blocks: its file is taken over. Within
one process a file may be claimed more than once (a count is kept); only other processes
are kept out. Where ``flock`` does not exist (Windows) the pid written in the file is
checked instead.
"""

from __future__ import annotations

import errno
import os
import socket
import threading
from pathlib import Path

from ..base.safe_files import read_head
from ..config.paths import ensure_private_dir

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_lock = threading.Lock()
_held: dict[str, tuple[int, int]] = {}  # real path of the lock file -> (descriptor, claims)


class SessionBusyError(Exception):
    """Another live process is writing this session."""

    def __init__(self, path: str, pid: int | None, host: str | None) -> None:
        who = f"process {pid}" if pid else "another process"
        if host and host != socket.gethostname():
            who += f" on {host}"
        super().__init__(f"{path} is being written by {who}")
        self.path = path
        self.pid = pid
        self.host = host


def lock_path(session_file: str | os.PathLike[str]) -> Path:
    return Path(os.fspath(session_file) + ".lock")


def _key(path: Path) -> str:
    return os.path.realpath(path)


def _read_owner(path: Path) -> tuple[int | None, str | None]:
    try:
        text = read_head(path, 200)[0].decode("utf-8", "replace")  # a pid and a host name, never more
    except OSError:
        return None, None
    pid_text, _, host = text.strip().partition(" ")
    return (int(pid_text) if pid_text.isdigit() else None), (host or None)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stamp(fd: int) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, f"{os.getpid()} {socket.gethostname()}\n".encode(), 0)


def _take(path: Path) -> int:
    """A descriptor holding the lock on ``path``, or SessionBusyError."""
    while True:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600)
        if fcntl is None:  # pragma: no cover - Windows: the pid in the file decides
            pid, host = _read_owner(path)
            if pid and pid != os.getpid() and _alive(pid):
                os.close(fd)
                raise SessionBusyError(str(path)[: -len(".lock")], pid, host)
            _stamp(fd)
            return fd
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as exc:
            os.close(fd)
            if exc.errno in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                pid, host = _read_owner(path)
                raise SessionBusyError(str(path)[: -len(".lock")], pid, host) from None
            raise
        try:  # the holder before us may have removed the file as we opened it: retry then
            same = os.path.samestat(os.fstat(fd), os.stat(path))
        except FileNotFoundError:
            same = False
        if same:
            _stamp(fd)
            return fd
        os.close(fd)


def claim(session_file: str | os.PathLike[str]) -> None:
    """Become (or stay) the writer of ``session_file``; SessionBusyError if another
    process is. Creates the lock file's folder if needed (it is the session's own)."""
    path = lock_path(session_file)
    key = _key(path)
    with _lock:
        held = _held.get(key)
        if held is not None:
            _held[key] = (held[0], held[1] + 1)
            return
        ensure_private_dir(path.parent)
        _held[key] = (_take(path), 1)


def release(session_file: str | os.PathLike[str]) -> None:
    """Give up one claim; the last one removes the lock file and drops the lock."""
    path = lock_path(session_file)
    key = _key(path)
    with _lock:
        held = _held.get(key)
        if held is None:
            return
        fd, claims = held
        if claims > 1:
            _held[key] = (fd, claims - 1)
            return
        del _held[key]
        try:
            os.unlink(path)  # while still locked: a newcomer then locks a fresh file
        except OSError:
            pass
        os.close(fd)


def holds(session_file: str | os.PathLike[str]) -> bool:
    """Whether this process is the writer of ``session_file``."""
    with _lock:
        return _key(lock_path(session_file)) in _held
