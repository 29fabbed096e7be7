"""Writing a file of ``WOLLI_HOME/cache`` (the code cache, the module bundle): private to the
user, and whole or not at all, so a run reading it meanwhile sees the old file or the new one."""

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
