"""Where the line mode writes: the terminal's scrollback, or a pipe.

Two kinds of output. On a colour terminal (a tty, ``TERM`` not ``dumb``, no ``NO_COLOR``)
text is styled with the theme's colours, and the one line still being streamed may be erased
and written again once it is complete (its markdown rendered). Anywhere else (a pipe,
``script``'s log, Emacs' shell, ``NO_COLOR``) output is plain text, appended only: no escape
codes and no cursor movement, so it reads the same in any scrollback or file.

The stream is looked up at each write (``sys.stdout`` by default), so a prompt's
``patch_stdout`` sends what arrives while a question is open above the question.
"""

from __future__ import annotations

import os
import re
import shutil
import sys
from typing import IO, TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console


def colour_wanted(stream: IO[str], env: dict[str, str] | None = None) -> bool:
    env = dict(os.environ) if env is None else env
    if "NO_COLOR" in env or env.get("TERM", "") in ("", "dumb"):
        return False
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False


def cell_width(text: str) -> int:
    from prompt_toolkit.utils import get_cwidth

    return sum(get_cwidth(char) for char in text)


class Terminal:
    """Appends text, tracking whether the cursor is at a line start and whether a blank line
    ends the output (so blocks are separated by exactly one blank line)."""

    def __init__(self, stream: IO[str] | None = None, *, colour: bool | None = None, width: int | None = None) -> None:
        self._stream = stream
        self.colour = colour_wanted(self.stream) if colour is None else colour
        self._width = width
        self._tail = ""  # the last two characters written ("": nothing yet)
        self.writes = 0  # how many times something was written (by anyone): what came in between
        self._rich: Console | None = None

    @property
    def stream(self) -> IO[str]:
        return self._stream if self._stream is not None else sys.stdout

    @property
    def writes_stdout(self) -> bool:
        return self._stream is None

    @property
    def width(self) -> int:
        if self._width is not None:
            return self._width
        return max(20, shutil.get_terminal_size((100, 30)).columns)

    @property
    def height(self) -> int:
        return max(5, shutil.get_terminal_size((100, 30)).lines)

    def write(self, text: str) -> None:
        if not text:
            return
        try:
            self.stream.write(text)
            self.stream.flush()
        except (OSError, ValueError):  # a closed terminal: nothing left to show it on
            return
        self._tail = (self._tail + text)[-2:]
        self.writes += 1

    @property
    def at_line_start(self) -> bool:
        return self._tail in ("", "\n") or self._tail.endswith("\n")

    def moved_to_new_line(self) -> None:
        """Someone else (a prompt) wrote a line: the cursor is at a line start."""
        self._tail = "x\n"
        self.writes += 1

    def line(self, text: str = "") -> None:
        """``text`` on a line of its own."""
        self.end_line()
        self.write(text + "\n")

    def end_line(self) -> None:
        if not self.at_line_start:
            self.write("\n")

    def separate(self) -> None:
        """One blank line before the next block (none at the very start)."""
        self.end_line()
        if self._tail not in ("", "\n\n"):
            self.write("\n")

    def erase_partial(self, shown: str) -> bool:
        """Erase ``shown``, the unfinished line just written, so it can be written again.
        Only on a colour terminal, and only while it still fits on the screen."""
        if not self.colour or "\n" in shown:
            return False
        cells = cell_width(shown)
        up = (cells - 1) // self.width if cells else 0
        if up >= self.height - 1:
            return False
        self.write((f"\x1b[{up}A" if up else "") + "\r\x1b[J")
        self._tail = "x\n"
        return True

    def rich(self, renderable: object) -> str:
        """A Rich renderable (tool bodies, extension renderers) as text for this terminal:
        ANSI on a colour terminal, else plain."""
        import io

        from rich.console import Console

        if self._rich is None:
            self._rich = Console(file=io.StringIO(), force_terminal=self.colour, no_color=not self.colour,
                                 color_system="truecolor" if self.colour else None, highlight=False, markup=False,
                                 emoji=False)
        self._rich.width = self.width
        with self._rich.capture() as capture:
            self._rich.print(renderable, end="")
        return str(capture.get())


_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b\][^\x07]*\x07")


def strip_ansi(text: str) -> str:
    return _ANSI.sub("", text)
