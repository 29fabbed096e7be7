"""Which shell runs commands, and the environment it gets.

Commands are written for bash by the model, so bash is preferred wherever it exists; a
``shell_path`` setting overrides that (a sandbox wrapper, zsh, a pinned bash), and
``/bin/sh`` is the last resort on systems without bash.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Mapping

_BASH_CANDIDATES = ("/bin/bash", "/usr/bin/bash", "/usr/local/bin/bash", "/opt/homebrew/bin/bash")

# Variables that would make a child behave as if it were talking to Wolli's terminal, or
# that only make sense to the process that set them.
_DROPPED = ("COLUMNS", "LINES", "TEXTUAL", "TEXTUAL_DRIVER", "PYTHONINSPECT", "PYTHONSTARTUP")

# Commands run with no terminal and stdin at /dev/null: never page, never ask for a password.
_FORCED = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}


class ShellNotFoundError(FileNotFoundError):
    """The configured shell does not exist or cannot be executed."""


def _is_executable(path: str) -> bool:
    return os.path.isfile(path) and os.access(path, os.X_OK)


def resolve_shell(shell_path: str | None = None) -> str:
    """Absolute path of the shell to run commands with (called with ``-c``).

    ``shell_path`` (the setting) wins and must exist; a bare name is looked up on PATH.
    Otherwise bash from PATH or a usual location, else ``/bin/sh``.
    """
    if shell_path:
        configured = os.path.expanduser(shell_path)
        found = configured if os.sep in configured else shutil.which(configured)
        if found and _is_executable(found):
            return found
        raise ShellNotFoundError(
            f"The shell_path setting points to {shell_path!r}, which is not an executable file. "
            "Fix the setting or remove it to use bash."
        )
    found = shutil.which("bash")
    if found:
        return found
    for candidate in _BASH_CANDIDATES:
        if _is_executable(candidate):
            return candidate
    return "/bin/sh"


def shell_env(extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """The environment for a command: Wolli's own, minus terminal leftovers, plus ``extra``.

    ``extra`` is applied last, so a caller (or a spawn hook) can still set any variable,
    including the forced ones.
    """
    env = {k: v for k, v in os.environ.items() if k not in _DROPPED}
    env.update(_FORCED)
    if extra:
        env.update({str(k): str(v) for k, v in extra.items()})
    return env
