"""Reading files that may be hostile: regular files only, never more than a cap.

Anything Wolli reads on behalf of a model, a repository or a user's argument can name
``/dev/zero`` (endless), a FIFO (``open()`` blocks until someone writes), a terminal or a
socket. Every such read goes through here:

* the file is opened with ``O_NONBLOCK | O_NOCTTY`` (so opening a FIFO or a tty returns at
  once instead of blocking or becoming the controlling terminal) and checked with ``fstat``
  on the open descriptor, so a path swapped between a check and the open cannot slip
  through; anything but a regular file raises :class:`SpecialFileError`;
* at most ``limit`` bytes are read: more raises :class:`FileTooLargeError` (or, for
  :func:`read_head`, returns the first ``limit`` bytes and says so). The size ``stat``
  reports is not trusted alone (``/proc`` files report 0), the read itself stops.

Symlinks are followed (``open`` resolves them), so the check applies to what is read.
"""

from __future__ import annotations

import errno
import os
import stat

# Flags that keep ``open`` from blocking on a FIFO and from adopting a terminal.
_OPEN_FLAGS = getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0)
_CHUNK = 1 << 20


# Configuration files (settings, models, auth, keybindings, themes) are read up to this size.
CONFIG_FILE_LIMIT = 4 * 1024 * 1024


class SpecialFileError(OSError):
    """A device, FIFO or socket where a regular file was expected."""

    def __init__(self, path: str | os.PathLike[str], kind: str) -> None:
        super().__init__(errno.EINVAL, f"{kind}, not a regular file", os.fspath(path))
        self.kind = kind

    def __str__(self) -> str:  # callers name the path themselves
        return str(self.strerror)


class FileTooLargeError(OSError):
    """More bytes than the reader allows; ``size`` is what ``stat`` said (None: unknown)."""

    def __init__(self, path: str | os.PathLike[str], limit: int, size: int | None = None) -> None:
        shown = f"{format_bytes(size)}, " if size else ""
        super().__init__(errno.EFBIG, f"{shown}over the {format_bytes(limit)} limit", os.fspath(path))
        self.limit = limit
        self.size = size

    def __str__(self) -> str:
        return str(self.strerror)


def format_bytes(count: int) -> str:
    if count < 1024:
        return f"{count} B"
    if count < 1024 * 1024:
        return f"{count / 1024:.0f} KB"
    if count < 1024**3:
        return f"{count / 1024 / 1024:.0f} MB"
    return f"{count / 1024**3:.1f} GB"


def file_kind(mode: int) -> str:
    """What a ``st_mode`` is, for a message: ``"a FIFO (named pipe)"``..."""
    if stat.S_ISREG(mode):
        return "a regular file"
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "a special file"


def open_regular(path: str | os.PathLike[str], flags: int = os.O_RDONLY, mode: int = 0o666) -> tuple[int, os.stat_result]:
    """An open descriptor of the regular file at ``path`` and its stat.

    Raises ``IsADirectoryError`` for a folder, :class:`SpecialFileError` for anything else
    that is not a regular file, and the usual ``OSError`` subclasses otherwise. Writers pass
    their flags without ``O_TRUNC`` and truncate after the check (a device is never
    truncated); a FIFO without a reader fails with ``ENXIO`` at the open.
    """
    try:
        fd = os.open(path, flags | _OPEN_FLAGS, mode)
    except OSError as exc:
        if exc.errno == errno.ENXIO:  # O_WRONLY|O_NONBLOCK on a FIFO nobody reads
            raise SpecialFileError(path, "a FIFO (named pipe)") from None
        raise
    try:
        st = os.fstat(fd)
        if stat.S_ISDIR(st.st_mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", os.fspath(path))
        if not stat.S_ISREG(st.st_mode):
            raise SpecialFileError(path, file_kind(st.st_mode))
    except BaseException:
        os.close(fd)
        raise
    return fd, st


def _read_up_to(fd: int, limit: int, size_hint: int = 0) -> bytes:
    """Up to ``limit + 1`` bytes (one more tells that there was more).

    ``size_hint`` (the file's size when it was opened) is read in one piece: one buffer,
    not chunks joined into a copy (a 2 MiB session file is read on every resume)."""
    chunks: list[bytes] = []
    total = 0
    first = size_hint + 1 if size_hint > _CHUNK else _CHUNK
    while total <= limit:
        try:
            chunk = os.read(fd, min(first, limit + 1 - total))
            first = _CHUNK
        except BlockingIOError:  # cannot happen for a regular file; never spin on it
            break
        if not chunk:
            break
        chunks.append(chunk)
        total += len(chunk)
    return b"".join(chunks)


def read_capped(path: str | os.PathLike[str], limit: int) -> bytes:
    """The whole regular file, or :class:`FileTooLargeError` when it holds over ``limit`` bytes."""
    fd, st = open_regular(path)
    try:
        if st.st_size > limit:
            raise FileTooLargeError(path, limit, st.st_size)
        data = _read_up_to(fd, limit, st.st_size)
    finally:
        os.close(fd)
    if len(data) > limit:
        raise FileTooLargeError(path, limit)
    return data


def read_head(path: str | os.PathLike[str], limit: int) -> tuple[bytes, bool]:
    """The first ``limit`` bytes of the regular file, and whether there was more."""
    fd, _ = open_regular(path)
    try:
        data = _read_up_to(fd, limit)
    finally:
        os.close(fd)
    return data[:limit], len(data) > limit


def read_tail(path: str | os.PathLike[str], limit: int) -> tuple[bytes, bool]:
    """The last ``limit`` bytes of the regular file, and whether there was more before them."""
    fd, st = open_regular(path)
    try:
        start = max(0, st.st_size - limit)
        if start:
            os.lseek(fd, start, os.SEEK_SET)
        data = _read_up_to(fd, limit)
    finally:
        os.close(fd)
    return data[-limit:], start > 0 or len(data) > limit


def read_text_capped(path: str | os.PathLike[str], limit: int, errors: str = "strict") -> str:
    """:func:`read_capped` decoded as UTF-8 (``errors`` as for ``bytes.decode``)."""
    return read_capped(path, limit).decode("utf-8", errors)


def is_regular_file(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` (symlinks followed) is a regular file, without opening it."""
    try:
        return stat.S_ISREG(os.stat(path).st_mode)
    except (OSError, ValueError):
        return False


def write_regular(path: str | os.PathLike[str], data: bytes) -> None:
    """Create or replace the contents of a regular file; refuses devices, FIFOs, sockets."""
    fd, _ = open_regular(path, os.O_WRONLY | os.O_CREAT)
    try:
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
    finally:
        os.close(fd)


__all__ = [
    "CONFIG_FILE_LIMIT", "FileTooLargeError", "SpecialFileError", "file_kind", "format_bytes", "is_regular_file",
    "open_regular", "read_capped", "read_head", "read_tail", "read_text_capped", "write_regular",
]
