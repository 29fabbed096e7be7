"""The scrolling transcript, with a bounded number of mounted rows.

Every row is kept as an item (a function that builds its widget); only the last
``MAX_MOUNTED`` are mounted. Older ones are represented by one line at the top saying how
many are hidden; scrolling to the very top (or Ctrl+Home) mounts the previous page. So a
resumed 2,000-message session mounts a few dozen widgets, and the cost of a frame does not
grow with the length of the conversation.

History (a resumed or switched-to session) starts with fewer rows, ``HISTORY_WINDOW``: mounting
and styling rows is most of the time a resume takes, and a screenful is what is seen. If they do
not fill the screen, a few more are mounted until they do.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from textual.containers import VerticalScroll
from textual.widget import Widget
from textual.widgets import Static

MAX_MOUNTED = 24
PAGE = 20
HISTORY_WINDOW = 10  # rows of history mounted at first (a screen of answers; more as it scrolls)
FILL_STEP = 6  # rows added at a time while the history does not fill the screen


class Transcript(VerticalScroll):
    can_focus = False

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.items: list[Callable[[], Widget]] = []
        self.mounted: list[Widget] = []  # widgets of items[first_mounted:], in order
        self.first_mounted = 0
        self.more = Static("", classes="earlier", markup=False)
        self.more.display = False

    def on_mount(self) -> None:
        self.mount(self.more)
        self.call_after_refresh(self._update_anchor)

    def _update_anchor(self) -> None:
        """Follow the end while the rows overflow the screen; rows that fit sit at the top
        (an anchored container would push them to the bottom)."""
        overflowing = self.virtual_size.height > self.scrollable_content_region.height
        if overflowing and not self.is_anchored:
            self.anchor()
        elif not overflowing and self.is_anchored:
            self.anchor(False)

    def watch_virtual_size(self, size) -> None:  # type: ignore[no-untyped-def]
        self._update_anchor()  # rows grew or shrank (a long answer, a new session)

    def on_resize(self) -> None:
        self._update_anchor()  # the screen or the editor changed height

    @property
    def hidden_count(self) -> int:
        return self.first_mounted

    def add(self, widget: Widget, rebuild: Callable[[], Widget]) -> Widget:
        """Append a live widget (streaming rows are added this way). ``rebuild`` makes a fresh
        copy when the row scrolls back into the window after it was unmounted."""
        self.items.append(rebuild)
        self.mounted.append(widget)
        self.mount(widget)
        self._trim()
        return widget

    def add_lazy(self, builders: list[Callable[[], Widget]]) -> None:
        """Append rows built only when they come into the mounted window (history)."""
        start = len(self.items)
        self.items.extend(builders)
        window_start = max(start, len(self.items) - HISTORY_WINDOW)
        if window_start > start:  # everything mounted so far scrolls out of the window
            for widget in self.mounted:
                widget.remove()
            self.mounted = []
            self.first_mounted = window_start
        widgets = [build() for build in self.items[window_start:]]
        self.mounted.extend(widgets)
        if widgets:
            self.mount_all(widgets)
        self._trim()
        self.call_after_refresh(self._fill_screen)

    def _fill_screen(self) -> None:
        """History that does not fill the screen gets the page above it, until it does."""
        if not self.first_mounted or not self.size.height:
            return
        if not all(widget.is_mounted for widget in self.mounted):
            self.call_after_refresh(self._fill_screen)  # not laid out yet
        elif self.max_scroll_y == 0:
            self.show_earlier(FILL_STEP)
            self.call_after_refresh(self._fill_screen)

    def set_rebuild(self, widget: Widget, rebuild: Callable[[], Widget]) -> None:
        """Once a streamed row is complete, say how to build it again from its data."""
        for offset, mounted in enumerate(self.mounted):
            if mounted is widget:
                self.items[self.first_mounted + offset] = rebuild
                return

    def _trim(self) -> None:
        excess = len(self.mounted) - MAX_MOUNTED
        if excess > 0:
            for widget in self.mounted[:excess]:
                widget.remove()
            del self.mounted[:excess]
            self.first_mounted += excess
        self._update_more()

    def _update_more(self) -> None:
        if self.first_mounted:
            self.more.update(f"▲ {self.first_mounted} earlier message{'s' if self.first_mounted != 1 else ''} "
                             "(scroll to the top to show more)")
            self.more.display = True
        else:
            self.more.display = False

    def show_earlier(self, count: int = PAGE) -> int:
        """Mount the previous ``count`` rows above the window; returns how many."""
        if not self.first_mounted:
            return 0
        start = max(0, self.first_mounted - count)
        widgets = [build() for build in self.items[start : self.first_mounted]]
        self.mount_all(widgets, after=self.more)
        self.mounted[:0] = widgets
        self.first_mounted = start
        self._update_more()
        return len(widgets)

    def _on_mouse_scroll_up(self, event) -> None:
        # At the top already: the wheel asks for the rows above the window.
        if self.scroll_y <= 0 and self.first_mounted:
            self.show_earlier()

    def clear_all(self) -> None:
        for widget in self.mounted:
            widget.remove()
        self.items.clear()
        self.mounted.clear()
        self.first_mounted = 0
        self._update_more()
