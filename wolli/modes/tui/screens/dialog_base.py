"""What every ``ctx.ui`` dialog shares: a title, a countdown, cancellation, a default.

``timeout`` (seconds) shows a countdown and answers the dialog's cancel value when it runs
out; an abort ``signal`` closes it the same way; Esc cancels. The countdown timer runs only
while such a dialog is open.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from typing import Generic, TypedDict, TypeVar

from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Static

from ....ai.abort import AbortSignal

T = TypeVar("T")


class DialogOptions(TypedDict, total=False):
    """What every dialog takes besides its own arguments (passed on by the subclasses)."""

    timeout: float | None
    signal: AbortSignal | None


RESUME_TRIES = 20  # refreshes to wait for the screen above to be gone (see close_when_shown)


class DialogBox(Vertical):
    """The box of a dialog. A terminal too short for all of it scrolls it (tui.tcss); when
    the box changes size, what has the focus (the answers of a question) comes back into
    view, so a terminal made smaller while the dialog is open does not hide them."""

    def on_resize(self) -> None:
        focused = self.screen.focused
        if focused is not None and focused is not self:
            self.scroll_to_widget(focused, animate=False)


class TimedDialog(ModalScreen[T], Generic[T]):
    BINDINGS = [Binding("escape", "cancel", "Cancel", show=False)]
    DEFAULT_CLASSES = "dialog"
    BOX_CLASSES = "dialog-box"

    def __init__(self, title: str, *, timeout: float | None = None, signal: AbortSignal | None = None, cancel_value: T | None = None) -> None:
        super().__init__()
        self.title_text = title
        self.timeout = timeout
        self.signal = signal
        self.cancel_value = cancel_value
        self.countdown = Static("", classes="dialog-countdown", markup=False)
        self._deadline: float | None = None
        self._timer: Timer | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._answered = False
        self._close_when_shown = False

    def body(self) -> Iterable[Widget]:
        """The widgets between the title and the countdown."""
        return ()

    def first_focus(self) -> Widget | None:
        """The widget that has the focus when the dialog opens."""
        return None

    def compose(self):  # type: ignore[override]
        with DialogBox(classes=self.BOX_CLASSES):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield from self.body()
            yield self.countdown

    def on_mount(self) -> None:
        target = self.first_focus()
        if target is not None:
            target.focus()
        if self.timeout is not None and self.timeout > 0:
            self._deadline = time.monotonic() + self.timeout
            self._tick()
            self._timer = self.set_interval(0.25, self._tick)
        else:
            self.countdown.display = False
        if self.signal is not None and hasattr(self.signal, "add_listener"):
            app = self.app
            # The signal may fire on a worker thread: hop onto the app's loop.
            self._unsubscribe = self.signal.add_listener(lambda: app.call_later(self.action_cancel))

    def _tick(self) -> None:
        if self._deadline is None:
            return
        left = self._deadline - time.monotonic()
        if left <= 0:
            self.action_cancel()
            return
        self.countdown.update(f"closes in {int(left) + 1}s")

    def close(self, value: T | None) -> None:
        if self._answered:
            return
        self._answered = True
        if self._timer is not None:
            self._timer.stop()
        if self._unsubscribe is not None:
            self._unsubscribe()
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.close(self.cancel_value)

    def close_when_shown(self) -> None:
        """Close unanswered once this is the screen on top again (it was answered elsewhere
        while another dialog covered it; only the top screen can be dismissed)."""
        self._close_when_shown = True

    def on_screen_resume(self) -> None:
        if self._close_when_shown:
            self._close_once_on_top(RESUME_TRIES)

    def _close_once_on_top(self, tries: int) -> None:
        # Resumed while the dialog above is still being popped: dismissing now would fail
        # (only the top screen can be dismissed), so look again after the next refresh.
        if self._answered or not self.is_attached:
            return
        if self.app.screen is self:
            self.close(self.cancel_value)
        elif tries > 0:
            self.call_after_refresh(self._close_once_on_top, tries - 1)
