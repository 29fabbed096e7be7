"""The line mode (``wolli --plain``): an inline prompt_toolkit front end whose output goes
into the terminal's own scrollback. Used when asked for, and when the full-screen app cannot
run (``TERM=dumb``). Imports neither Textual nor anything of ``modes/tui``."""

from __future__ import annotations

from ...runtime.startup.request import StartupRequest


def run_line(request: StartupRequest, *, resume: bool = False) -> int:
    """``resume``: start by picking a session to resume (``wolli --plain -r``)."""
    from .repl import run_line as run

    return run(request, resume=resume)
