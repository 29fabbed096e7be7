"""The row under the transcript while the agent works: indicator, message, elapsed time.

Its timer runs only while it is visible, so an idle TUI uses no CPU. It ticks ten times a second
while the agent works, so a tick must be cheap: the row is drawn through Textual's line API
from one segment (a Static re-rendered its text through Rich on every tick, ~2 ms a tick).

While an answer streams, the indicator moves with the answer's frames instead (:meth:`pulse`,
called by the frame batcher): a tick of its own would be a screen update of its own, ten a
second beside the answer's twenty. Its timer steps in again when the frames stop (tools
running, a slow model).
"""

from __future__ import annotations

import time

from rich.cells import cell_len
from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget

DEFAULT_FRAMES = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"]
DEFAULT_MESSAGE = "Working…"
# A model silent this long is shown as waited on, with the seconds counting (a stalled
# stream ends at settings streamIdleTimeoutMs and is retried; until then the row says so).
SHOW_WAIT_AFTER_S = 5


class WorkingRow(Widget):
    DEFAULT_CLASSES = "working-row"

    def __init__(self) -> None:
        super().__init__()
        self._row: str | Text = ""  # the row's text: a str, or a rich Text when the indicator has colours
        self._strip: Strip | None = None
        self.frames = list(DEFAULT_FRAMES)
        self.interval_s = 0.1
        self.message: str | None = None  # None: the default message
        # After the message (a running !cmd's last line of output); drawn at the next tick,
        # so output arriving fast costs no redraw per piece.
        self.detail: str | None = None
        self.visible_override: bool | None = None  # set_working_visible
        self.running = False
        self.started = 0.0
        # While a request is out: when the model last sent something (or the request left);
        # None while tools run or nothing is asked.
        self.waiting_since: float | None = None
        self.frame = 0
        self._timer: Timer | None = None
        self._advanced_at = 0.0  # when the indicator last moved
        self._pulsed_at = 0.0  # when a streamed frame last moved it (or could have)
        self.display = False

    def start(self) -> None:
        if not self.running:
            self.running = True
            self.started = time.monotonic()
        self._apply()

    def stop(self) -> None:
        self.running = False
        self.waiting_since = None
        self._apply()

    def waiting(self, waiting: bool) -> None:
        """A request went out or data came (True: the clock restarts), or the answer ended."""
        self.waiting_since = time.monotonic() if waiting else None

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
            self._timer = self.set_interval(self.interval_s, self._on_timer)
        elif self.display:  # a static indicator: only the clock moves
            self._timer = self.set_interval(1.0, self._render_row)

    def pulse(self) -> None:
        """A frame of streamed output is being drawn: move the indicator with it when due."""
        now = time.monotonic()
        self._pulsed_at = now
        if self._timer is not None and len(self.frames) > 1 and now - self._advanced_at >= 0.9 * self.interval_s:
            self._tick()

    def _on_timer(self) -> None:
        if time.monotonic() - self._pulsed_at < 2 * self.interval_s:
            return  # streamed frames are moving it
        self._tick()

    def _tick(self) -> None:
        self._advanced_at = time.monotonic()
        self.frame = (self.frame + 1) % max(1, len(self.frames))
        self._render_row()

    def _render_row(self) -> None:
        if not self.display:
            return
        frame = self.frames[self.frame % len(self.frames)] if self.frames else ""
        now = time.monotonic()
        clock = _clock(int(now - self.started))
        quiet = int(now - self.waiting_since) if self.waiting_since is not None else 0
        wait = f"no data from the model for {_clock(quiet)} · " if quiet >= SHOW_WAIT_AFTER_S else ""
        detail = f" · {self.detail}" if self.detail else ""
        rest = f" {self.message or DEFAULT_MESSAGE}{detail} ({wait}{clock} · Esc to interrupt)"
        if "\x1b[" in frame:  # an extension's coloured indicator
            from rich.text import Text

            self._row = Text.from_ansi(frame) + Text(rest)
        else:
            self._row = frame + rest
        self._strip = None
        self.refresh()  # one line, fixed height: no layout pass per tick

    def render(self) -> Text:  # what tests and screenshots read
        from rich.text import Text

        return Text(self._row) if isinstance(self._row, str) else self._row  # literal: no markup

    def on_resize(self) -> None:
        self._strip = None

    def notify_style_update(self) -> None:
        self._strip = None  # the theme changed: the cached row has the old colours
        super().notify_style_update()

    def render_line(self, y: int) -> Strip:
        if y:
            return Strip.blank(self.size.width, self.rich_style)
        if self._strip is None:
            style = self.rich_style
            if isinstance(self._row, str):
                segments = [Segment(self._row, style)]
                length = cell_len(self._row)
            else:
                segments = [Segment(seg.text, style + seg.style if seg.style else style)
                            for seg in self._row.render(self.app.console)]
                length = self._row.cell_len
            self._strip = Strip(segments, length).crop_extend(0, self.size.width, style)
        return self._strip


def _clock(seconds: int) -> str:
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"
