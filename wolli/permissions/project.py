"""Where a working directory's project is, and where its rule files live (no heavy imports:
the start-up path asks whether there are rules at all before it loads the matchers)."""

from __future__ import annotations

import os
from pathlib import Path

from ..config.paths import cwd_slug

SHARED_DIR = ".wolli"


def find_project_root(cwd: str) -> str:
    """The project a working directory belongs to: the nearest folder holding ``.wolli/``
    or ``.git`` (not above the home folder), else the working directory itself."""
    start = Path(cwd).absolute()
    home = Path(os.path.expanduser("~")).absolute()
    for folder in (start, *start.parents):
        if folder == home:
            break
        if (folder / SHARED_DIR).is_dir() or (folder / ".git").exists():
            return str(folder)
    return str(start)


def personal_rules_path(agent_home: Path, root: str) -> Path:
    """The user's own rules for one project ("allow always" saves there)."""
    return Path(agent_home) / "permissions" / f"{cwd_slug(root)}.json"


def shared_rules_path(root: str) -> Path:
    """The repository's ``.wolli/settings.json``."""
    return Path(root) / SHARED_DIR / "settings.json"
