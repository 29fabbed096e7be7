"""The row under the transcript while the agent works: indicator, message, elapsed time.

Its timer runs only while it is visible, so an idle TUI uses no CPU.
"""

from __future__ import annotations

import time

from textual.timer import Timer
from textual.widgets import Static

DEFAULT_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
DEFAULT_MESSAGE = "Working…"


class WorkingRow(Static):
    DEFAULT_CLASSES = "working-row"

    def __init__(self) -> None:
        super().__init__("", markup=False)
        self.frames = list(DEFAULT_FRAMES)
        self.interval_s = 0.1
        self.message: str | None = None  # None: the default message
        self.visible_override: bool | None = None  # set_working_visible
        self.running = False
        self.started = 0.0
        self.frame = 0
        self._timer: Timer | None = None
        self.display = False

    def start(self) -> None:
        if not self.running:
            self.running = True
            self.started = time.monotonic()
        self._apply()

    def stop(self) -> None:
        self.running = False
        self._apply()

    def set_message(self, text: str | None) -> None:
        self.message = text
        self._render_row()

    def set_indicator(self, frames: list[str] | None, interval_ms: int | None) -> None:
        self.frames = list(frames) if frames else list(DEFAULT_FRAMES)
        self.interval_s = max(0.03, (interval_ms or 80) / 1000)
        self.frame = 0
        self._restart_timer()
        self._render_row()

    def set_visible(self, visible: bool | None) -> None:
        self.visible_override = visible
        self._apply()

    def _apply(self) -> None:
        show = self.running if self.visible_override is None else (self.visible_override and self.running)
        self.display = show
        self._restart_timer()
        self._render_row()

    def _restart_timer(self) -> None:
        if self._timer is not None:
            self._timer.stop()
            self._timer = None
        if self.display and len(self.frames) > 1:
            self._timer = self.set_interval(self.interval_s, self._tick)
        elif self.display:  # a static indicator: only the clock moves
            self._timer = self.set_interval(1.0, self._render_row)

    def _tick(self) -> None:
        self.frame = (self.frame + 1) % max(1, len(self.frames))
        self._render_row()

    def _render_row(self) -> None:
        if not self.display:
            return
        frame = self.frames[self.frame % len(self.frames)] if self.frames else ""
        elapsed = int(time.monotonic() - self.started)
        clock = f"{elapsed // 60}m{elapsed % 60:02d}s" if elapsed >= 60 else f"{elapsed}s"
        from rich.text import Text

        text = Text.from_ansi(frame) if "\x1b[" in frame else Text(frame)
        text.append(f" {self.message or DEFAULT_MESSAGE} ({clock} · Esc to interrupt)")
        self.update(text, layout=False)  # one line, fixed height: no layout pass per tick
