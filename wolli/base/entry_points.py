"""Entry points of installed packages, looked up without ``importlib.metadata`` when none can match.

``importlib.metadata.entry_points()`` parses the metadata of every installed distribution
and imports ``email`` to do it (~20-90 ms); Wolli asks for four groups on every start
(extensions, tools, hooks, resources) and most installs declare none of them.
"""

from __future__ import annotations

import os
import sys
from typing import Any


def entry_points_of(group: str) -> list[Any]:
    """``importlib.metadata.entry_points(group=group)``, without importing it when no
    installed distribution names the group (see :func:`_declared_groups`)."""
    groups = _declared_groups()
    if groups is not None and group not in groups:
        return []
    from importlib.metadata import entry_points

    return list(entry_points(group=group))


_groups_seen: tuple[tuple[tuple[str, int], ...], frozenset[str] | None] | None = None


def _declared_groups() -> frozenset[str] | None:
    """The entry-point groups the ``entry_points.txt`` files on ``sys.path`` name, or None
    when a path entry cannot be looked into (a zip file, an unreadable folder).

    One look at those small files spares most starts importing ``importlib.metadata`` (and
    ``email``), which parses every distribution's metadata (~20-90 ms). The answer is kept
    until a folder on ``sys.path`` changes (a package installed while Wolli runs).
    """
    global _groups_seen
    stamps = []
    for entry in sys.path:
        try:
            stamps.append((entry, os.stat(entry or ".").st_mtime_ns))
        except OSError:
            continue
    key = tuple(stamps)
    if _groups_seen is not None and _groups_seen[0] == key:
        return _groups_seen[1]
    result = _scan_groups()
    _groups_seen = (key, result)
    return result


def _scan_groups() -> frozenset[str] | None:
    groups: set[str] = set()
    for entry in sys.path:
        folder = entry or "."
        try:
            names = os.listdir(folder)
        except NotADirectoryError:
            return None  # a zip or egg file: let importlib.metadata look
        except OSError:
            continue  # a folder that is not there holds nothing either way
        for name in names:
            if not (name.endswith((".dist-info", ".egg-info")) or name == "EGG-INFO"):
                continue
            # Most distributions declare no entry points: a look that raises nothing for them,
            # and the few files there are read without a text stream (~2.7 M instructions of
            # the ~4.5 M a start's scan took, against io.open and FileNotFoundError).
            path = os.path.join(folder, name, "entry_points.txt")
            if not os.access(path, os.F_OK):
                continue
            try:
                fd = os.open(path, os.O_RDONLY)
                try:
                    text = os.read(fd, 1 << 20).decode("utf-8")
                finally:
                    os.close(fd)
            except FileNotFoundError:
                continue
            except (OSError, ValueError):
                return None
            groups.update(line.strip()[1:-1].strip() for line in text.splitlines() if line.startswith("["))
    return frozenset(groups)
