"""Looking at processes from outside, through /proc: is a pid alive, which pids carry a marker."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """True while ``pid`` runs; zombies count as dead (a container's init may never reap)."""
    try:
        with open(f"/proc/{pid}/stat") as fh:
            data = fh.read()
    except OSError:
        return False
    return data[data.rfind(")") + 2] not in "ZX"


def processes_with(marker: str) -> list[int]:
    """Living pids whose command line contains ``marker``."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/cmdline", "rb") as fh:
                if marker.encode() in fh.read() and alive(int(name)):
                    found.append(int(name))
        except OSError:
            continue
    return found
