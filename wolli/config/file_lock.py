"""An exclusive lock between processes around a read-modify-write of a small file.

Two ``wolli`` processes saving ``settings.json`` or ``auth.json`` at the same moment would
each read the old file and the second rename would drop the first change. Holding
``flock`` on a sidecar ``<name>.lock`` across the re-read and the atomic rename serialises
them, so both changes land. The sidecar (not the file itself) is locked because the file is
replaced by a rename, and a lock on a replaced inode protects nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Iterator
from pathlib import Path

from .paths import ensure_private_dir

try:
    import fcntl
except ImportError:  # Windows: no flock; writes stay atomic, concurrent saves are not merged
    fcntl = None  # type: ignore[assignment]


@contextlib.contextmanager
def locked(path: Path) -> Iterator[None]:
    """Hold the exclusive lock for ``path`` (waits for another holder to finish).

    The sidecar stays after the lock is released: removing it would race with a process
    that just opened it. A missing folder is created private (``0700``): these are Wolli's
    own configuration folders."""
    if fcntl is None:
        yield
        return
    ensure_private_dir(path.parent)
    fd = os.open(path.with_name(path.name + ".lock"), os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing releases the lock
