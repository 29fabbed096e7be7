"""One streamed block of an answer (its text or its thinking) written into scrollback.

Text is shown as it arrives. On a colour terminal the unfinished last line is shown raw and,
once its newline comes, erased and written again with its markdown rendered (only that one
line is ever redrawn, so nothing scrolled away needs to change). Plain output appends the
text exactly as it streams.
"""

from __future__ import annotations

from collections.abc import Callable

from .terminal import Terminal


class StreamedBlock:
    def __init__(self, terminal: Terminal, render: Callable[[str], str] | None, raw_style: Callable[[str], str]) -> None:
        self.terminal = terminal
        self.render = render  # a complete line -> styled; None: lines stay as streamed
        self.raw_style = raw_style  # how the unfinished line looks meanwhile
        self.pending = ""  # the unfinished last line
        self.shown = ""  # what of it is on the screen

    def feed(self, delta: str) -> None:
        if not delta:
            return
        delta = delta.replace("\t", "    ").replace("\r", "")
        if self.render is None or not self.terminal.colour:
            self.terminal.write(self.raw_style(delta))
            self.pending = (self.pending + delta).rpartition("\n")[2]
            return
        text = self.pending + delta
        *complete, self.pending = text.split("\n")
        if complete:
            self._replace_shown()
            for line in complete:
                self.terminal.write(self.render(line) + "\n")
            self.shown = ""
        new = self.pending[len(self.shown):]
        if new:
            self.terminal.write(self.raw_style(new))
            self.shown = self.pending

    def _replace_shown(self) -> None:
        if self.shown and not self.terminal.erase_partial(self.shown):
            self.terminal.write("\n")  # too long to redraw: the raw line stays, rendered below

    def finish(self) -> None:
        """The block ended: its last line is complete."""
        if self.render is not None and self.terminal.colour and self.pending:
            self._replace_shown()
            self.terminal.write(self.render(self.pending) + "\n")
        self.pending = self.shown = ""
        self.terminal.end_line()

    def suspend(self) -> None:
        """Something else must print now: take the unfinished line off the screen (or end it)."""
        if self.shown and self.terminal.erase_partial(self.shown):
            self.shown = ""  # kept in ``pending``; ``resume`` shows it again
            return
        self.terminal.end_line()  # plain output, or too long to redraw: it stays as it is
        self.pending = self.shown = ""

    def resume(self) -> None:
        """Put the unfinished line back after whatever printed in between."""
        if self.pending and not self.shown and self.terminal.colour:
            self.terminal.write(self.raw_style(self.pending))
            self.shown = self.pending
