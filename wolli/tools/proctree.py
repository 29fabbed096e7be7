"""Find and signal whole process trees; run as a script, the sweep that ends them after Wolli died.

Two users, one copy of the logic:

* ``process.py`` imports :func:`live_tree` and :func:`signal_tree` to kill a command's tree on
  timeout, abort and cancellation.
* The watchdog (``supervisor.py``) runs this file as ``python -I -S proctree.py sweep WORD...``
  once Wolli is gone. That is why this module uses the standard library only and imports
  nothing from wolli: it starts in a few milliseconds and does not depend on the package
  being importable at that moment.

A tree is: the processes of the given process groups, the given pids, the processes whose
environment carries one of the given supervision tags (``WOLLI_SUPERVISED``; Linux only, read
from ``/proc/<pid>/environ``), and every descendant of all those. Descendants are found by
parent links, so a child that left the group with ``setsid`` is still caught while its parent
lives; the tag also catches one whose parent is gone. Zombies count as dead: a container's init
may never reap them.
"""

from __future__ import annotations

import os
import signal as signals
import sys
import time
from collections.abc import Iterable

# The variable holding a process's supervision tags (space-separated, inherited by children).
TAGS_VAR = "WOLLI_SUPERVISED"
_TAGS_ENTRY = TAGS_VAR.encode() + b"="

HAS_PROC = sys.platform.startswith("linux") and os.path.isdir("/proc/self")

# The sweep: between SIGTERM and SIGKILL, and how often it looks again meanwhile.
SWEEP_GRACE = 0.5
_POLL = 0.025


class ProcessTable:
    """One snapshot of the system's processes: who is alive, who is whose child, which group."""

    __slots__ = ("live", "children", "groups")

    def __init__(self) -> None:
        self.live: set[int] = set()
        self.children: dict[int, list[int]] = {}
        self.groups: dict[int, list[int]] = {}

    def add(self, pid: int, ppid: int, pgid: int, zombie: bool) -> None:
        if not zombie:
            self.live.add(pid)
        self.children.setdefault(ppid, []).append(pid)
        self.groups.setdefault(pgid, []).append(pid)

    def tree(self, roots: Iterable[int], groups: Iterable[int] = ()) -> set[int]:
        """Living members of ``groups``, ``roots`` and all their descendants (never this process)."""
        stack = list(roots)
        for pgid in groups:
            stack.extend(self.groups.get(pgid, ()))
        found: set[int] = set()
        while stack:
            current = stack.pop()
            if current in found:
                continue
            found.add(current)
            stack.extend(self.children.get(current, ()))
        found.discard(os.getpid())
        return found & self.live


def snapshot(use_proc: bool | None = None) -> ProcessTable | None:
    """The process table from ``/proc`` (Linux) or ``ps`` (elsewhere); None if neither works."""
    if use_proc is None:
        use_proc = HAS_PROC
    return _from_proc() if use_proc else _from_ps()


def _from_proc() -> ProcessTable | None:
    table = ProcessTable()
    try:
        names = os.listdir("/proc")
    except OSError:
        return None
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                raw = fh.read()
        except OSError:  # gone meanwhile
            continue
        # The command name may hold spaces and parentheses: the fields start after the last ")".
        fields = raw[raw.rfind(b")") + 2 :].split()
        if len(fields) < 3:
            continue
        table.add(int(name), int(fields[1]), int(fields[2]), fields[0] in (b"Z", b"X"))
    return table


def _from_ps() -> ProcessTable | None:
    """macOS and other systems without /proc: one ``ps`` call (POSIX options only)."""
    import subprocess  # here: the sweep on Linux starts faster without it

    try:
        out = subprocess.run(
            ["ps", "-A", "-o", "pid=", "-o", "ppid=", "-o", "pgid=", "-o", "stat="],
            stdin=subprocess.DEVNULL, capture_output=True, timeout=10, check=False,
        ).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    table = ProcessTable()
    for line in out.splitlines():
        parts = line.split()
        if len(parts) < 4 or not all(p.isdigit() for p in parts[:3]):
            continue
        table.add(int(parts[0]), int(parts[1]), int(parts[2]), parts[3].startswith(b"Z"))
    return table


def tagged(tags: Iterable[str]) -> set[int]:
    """Pids whose environment carries one of ``tags`` in ``WOLLI_SUPERVISED`` (Linux only).

    Only the environment a process was started with is visible, which is what children
    inherit; processes of other users are unreadable and skipped.
    """
    wanted = {tag.encode() for tag in tags}
    if not wanted or not HAS_PROC:
        return set()
    found: set[int] = set()
    try:
        names = os.listdir("/proc")
    except OSError:
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/environ", "rb") as fh:
                raw = fh.read()
        except OSError:
            continue
        if _TAGS_ENTRY not in raw:
            continue
        for entry in raw.split(b"\0"):
            if entry.startswith(_TAGS_ENTRY) and wanted.intersection(entry[len(_TAGS_ENTRY) :].split()):
                found.add(int(name))
                break
    return found


def live_tree(root: int, known: set[int]) -> set[int]:
    """Living processes in ``root``'s group or descending from ``root`` or ``known``.

    For the kill loop in ``process.py``: read from ``/proc`` only and empty elsewhere (the
    group kill then does the work), because it runs every few milliseconds.
    """
    table = snapshot(use_proc=True) if HAS_PROC else None
    if table is None:
        return set()
    return table.tree([root, *known], [root])


def signal_tree(pgid: int | None, pids: Iterable[int], sig: int) -> None:
    """Send ``sig`` to the process group ``pgid`` and to each of ``pids``; gone ones are fine."""
    me = os.getpid()
    if pgid is not None and pgid > 1 and pgid != os.getpgid(0):
        try:
            os.killpg(pgid, sig)
        except (ProcessLookupError, PermissionError):
            pass
    for pid in pids:
        if pid <= 1 or pid == me:
            continue
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


# ---------------------------------------------------------------------------- the sweep


def parse_words(words: Iterable[str]) -> tuple[set[int], set[int], set[str]]:
    """The watchdog's state words: ``g<pgid>``, ``p<pid>``, ``t<tag>``; anything else is ignored."""
    groups: set[int] = set()
    pids: set[int] = set()
    tags: set[str] = set()
    for word in words:
        kind, rest = word[:1], word[1:]
        if kind == "g" and rest.isdigit():
            groups.add(int(rest))
        elif kind == "p" and rest.isdigit():
            pids.add(int(rest))
        elif kind == "t" and rest:
            tags.add(rest)
    return groups, pids, tags


def sweep(groups: set[int], pids: set[int], tags: set[str], grace: float = SWEEP_GRACE) -> set[int]:
    """End every process of the trees described: SIGTERM, ``grace`` seconds, then SIGKILL.

    Looks again while waiting, so children forked in the meantime are caught too. Returns
    every pid it signalled.
    """
    spared = {os.getpid(), os.getppid()}
    groups = {g for g in groups if g > 1 and g != os.getpgid(0)}
    tracked: set[int] = set()

    def collect() -> set[int]:
        table = snapshot()
        if table is None:
            return set()
        found = table.tree(pids | tracked | tagged(tags), groups) - spared
        tracked.update(found)
        return found

    signalled: set[int] = set()
    deadline = time.monotonic() + grace
    found = collect()  # before any signal: a dying parent would orphan its children
    for pgid in groups:
        signal_tree(pgid, (), signals.SIGTERM)
    while found and time.monotonic() < deadline:
        signal_tree(None, found - signalled, signals.SIGTERM)
        signalled |= found
        time.sleep(_POLL)
        found = collect()
    for _ in range(20):  # SIGKILL until nothing is left; a fork bomb gets a few rounds only
        for pgid in groups:
            signal_tree(pgid, (), signals.SIGKILL)
        found = collect()
        if not found:
            break
        signal_tree(None, found, signals.SIGKILL)
        signalled |= found
        time.sleep(_POLL)
    return signalled


def main(argv: list[str]) -> int:
    if len(argv) < 1 or argv[0] != "sweep":
        print("usage: proctree.py sweep [gPGID | pPID | tTAG]...", file=sys.stderr)
        return 2
    groups, pids, tags = parse_words(argv[1:])
    sweep(groups, pids, tags)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
