"""Which stream the full-screen app draws on.

Textual's Linux driver always writes the screen to stderr. With stderr sent to a file
(``wolli 2>wolli.log``, to keep warnings out of the way) the terminal stayed blank while the
escape codes filled the log. When stderr is not a terminal but stdout is, the app draws on
stdout instead; everything else written to stderr still goes where it was sent.
"""

from __future__ import annotations

import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from textual.driver import Driver


def _is_terminal(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (OSError, ValueError):  # closed
        return False


def driver_for_this_terminal(default: type[Driver]) -> type[Driver]:
    """``default`` (Textual's choice), or the Linux driver drawing on stdout when only stdout
    is a terminal. A driver chosen through ``TEXTUAL_DRIVER`` (``wolli web``) is kept."""
    from textual.drivers.linux_driver import LinuxDriver

    if default is not LinuxDriver or _is_terminal(sys.__stderr__) or not _is_terminal(sys.__stdout__):
        return default

    class StdoutLinuxDriver(LinuxDriver):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, **kwargs)  # type: ignore[arg-type]
            self._file = sys.__stdout__

    return StdoutLinuxDriver
