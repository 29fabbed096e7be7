"""Durability on disk: after a file is created or renamed, its name survives a crash only
once the folder holding it is synced too (the name is data of the folder)."""

from __future__ import annotations

import os


def sync_folder(folder: str | os.PathLike[str]) -> None:
    """fsync ``folder``; silently nothing where folders cannot be opened (Windows)."""
    try:
        fd = os.open(os.fspath(folder), os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
