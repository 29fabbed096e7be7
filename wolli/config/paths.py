"""Where Wolli keeps its files (docs/agent-home.md).

``WOLLI_HOME`` (default ``~/.wolli``) holds global settings, auth, models and the agents;
each agent has its own home under ``agents/<name>/``. Read the environment on every call
(not at import) so tests and embedders can point it elsewhere at any time.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

DEFAULT_AGENT = "default"
_AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")


def wolli_home() -> Path:
    value = os.environ.get("WOLLI_HOME")
    return Path(value).expanduser() if value else Path.home() / ".wolli"


def agent_name(explicit: str | None = None) -> str:
    name = explicit or os.environ.get("WOLLI_AGENT") or DEFAULT_AGENT
    if not _AGENT_NAME.match(name):
        raise ValueError(f"invalid agent name {name!r}: use letters, digits, '.', '_' or '-'")
    return name


def agent_home(name: str | None = None) -> Path:
    return wolli_home() / "agents" / agent_name(name)


def settings_path() -> Path:
    return wolli_home() / "settings.json"


def auth_path() -> Path:
    return wolli_home() / "auth.json"


def models_path() -> Path:
    return wolli_home() / "models.json"


def keybindings_path() -> Path:
    return wolli_home() / "keybindings.json"


def sessions_dir(name: str | None = None) -> Path:
    return agent_home(name) / "sessions"


def cwd_slug(cwd: str) -> str:
    """A folder name for a working directory: ``/home/me/proj`` -> ``--home-me-proj--``."""
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", os.path.abspath(cwd).strip("/\\"))
    return f"--{cleaned}--"


PRIVATE_DIR_MODE = 0o700


def ensure_private_dir(path: Path) -> None:
    """Create ``path`` and every missing parent as ``0700``: Wolli's folders hold keys,
    prompts and tool output, readable by the user alone from the moment they exist.
    Folders that already exist keep their mode."""
    missing: list[Path] = []
    current = Path(path)
    while not current.exists():
        missing.append(current)
        if current.parent == current:
            break
        current = current.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:  # made meanwhile by another process
            pass
