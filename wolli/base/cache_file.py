"""Files of ``WOLLI_HOME/cache`` (the code cache, the module bundle, the parsed CSS): written
private to the user, and whole or not at all, so a run reading one meanwhile sees the old
file or the new one; read back bounded, anything damaged or foreign taken as no file."""

from __future__ import annotations

import os


def replace_private(path: str, data: bytes) -> os.stat_result:
    """Write ``data`` to a temporary file beside ``path`` (``0600``, the folder made ``0700``
    if missing) and rename it over ``path``; the written file's status. Raises ``OSError``,
    leaving no temporary file behind."""
    temporary = f"{path}.{os.getpid()}.tmp"
    os.makedirs(os.path.dirname(path), mode=0o700, exist_ok=True)
    try:
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
            status = os.fstat(fd)
        finally:
            os.close(fd)
        os.replace(temporary, path)
        return status
    except OSError:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def read_marshalled(path: str | os.PathLike[str], header: bytes, limit: int) -> object | None:
    """The value marshalled after ``header`` in the file at ``path`` (at most ``limit``
    bytes), or None when the file is missing, too large, not one this header names, or
    damaged. The caller checks the value's shape."""
    import marshal

    from .safe_files import read_capped  # not at import: the module bundle imports this module first

    try:
        data = read_capped(path, limit)
    except (OSError, ValueError):
        return None
    if not data.startswith(header):
        return None
    try:
        return marshal.loads(data[len(header):])
    except (EOFError, ValueError, TypeError):
        return None
