"""The scrolling transcript, with a bounded number of mounted rows.

Every row is kept as an item (a function that builds its widget); only the last
``MAX_MOUNTED`` are mounted. Older ones are represented by one line at the top saying how
many are hidden; scrolling to the very top (or Ctrl+Home) mounts the previous page. So a
resumed 2,000-message session mounts a few dozen widgets, and the cost of a frame does not
grow with the length of the conversation.

History (a resumed or switched-to session) starts with fewer rows, ``HISTORY_WINDOW``: mounting
and styling rows is most of the time a resume takes, and a screenful is what is seen. If they do
not fill the screen, a few more are mounted until they do.

A client of a server (``wolli attach``) is sent only the end of a long history: the messages
before it are announced (:meth:`expect_earlier`) and fetched a page at a time when scrolling
reaches them, arriving by :meth:`prepend_lazy`.

The view follows the end while the user has not scrolled away. Scrolled up, arriving output
does not move the view: a "new output below" line at the bottom says there is more, and
sending a prompt or command (or Ctrl+End, or a click on that line) goes back to the end.
A row whose widget cannot be built (an extension's renderer failing in a way nothing
caught) becomes a one-line error instead of taking the app down.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from rich.text import Text
from textual import events
from textual.containers import VerticalScroll
from textual.scrollbar import ScrollBar
from textual.widget import Widget
from textual.widgets import Static

from ..timers import after
from .growing import KeepsRowsOnGrowth
from .scrollbar import StripScrollBar

MAX_MOUNTED = 24
PAGE = 20
HISTORY_WINDOW = 10  # rows of history mounted at first (a screen of answers; more as it scrolls)
FILL_STEP = 6  # rows added at a time while the history does not fill the screen


class NewOutputMarker(Static):
    """The line at the bottom of a transcript scrolled away from its end while output arrives."""

    DEFAULT_CSS = "NewOutputMarker { dock: bottom; height: 1; }"

    def on_click(self, event: events.Click) -> None:
        event.stop()
        parent = self.parent
        if isinstance(parent, Transcript):
            parent.follow()


class Transcript(KeepsRowsOnGrowth, VerticalScroll):
    can_focus = False
    _keep_rows_only_at_same_size = True  # an answer growing: the transcript's own rows stay

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.items: list[Callable[[], Widget]] = []
        self.mounted: list[Widget] = []  # widgets of items[first_mounted:], in order
        self.first_mounted = 0
        self.more = Static("", classes="earlier", markup=False)
        self.more.display = False
        # False once the user scrolled away from the end; then arriving output leaves the view
        # where it is and shows ``marker`` instead.
        self.following = True
        self.marker = NewOutputMarker("", classes="new-output")
        self.marker.display = False
        self._growing_above = False  # earlier rows are being mounted: not new output
        # Older messages that exist elsewhere (a server) and are not items yet; ``_fetch`` asks
        # for the next page of them. ``_want_earlier``: the view asked, show them on arrival.
        self.unfetched = 0
        self._fetch: Callable[[], None] | None = None
        self._want_earlier = False
        self._mounting: asyncio.Future[None] | None = None
        # Anchored by add_lazy before its rows were laid out: kept until a layout has them.
        self._anchored_ahead = False

    @property
    def vertical_scrollbar(self) -> ScrollBar:
        # Textual's own, but drawn without a Rich console (widgets/scrollbar.py).
        if self._vertical_scrollbar is None:
            self._vertical_scrollbar = bar = StripScrollBar(
                vertical=True, name="vertical", thickness=self.scrollbar_size_vertical)
            bar.display = False
            self.app._start_widget(self, bar)
        return self._vertical_scrollbar

    def on_mount(self) -> None:
        self.mount(self.more)
        self.mount(self.marker)
        self.call_after_refresh(self._update_anchor)

    # ------------------------------------------------------------------ following the end

    def follow(self) -> None:
        """Back to the end, and stay there as output arrives."""
        self.following = True
        self.marker.display = False
        if self.is_anchored:
            self.anchor()  # re-anchors (and scrolls to the end) after the user scrolled away
        else:
            self.scroll_end(animate=False, immediate=True)

    def page(self, pages: int) -> None:
        """PageUp (-1) / PageDown (1) from the editor; PageUp at the top shows earlier rows."""
        if pages < 0:
            if self.scroll_y <= 0 and self.has_earlier:
                self.show_earlier()
            else:
                self.scroll_page_up(animate=False)
        else:
            self.scroll_page_down(animate=False)

    def to_top(self) -> None:
        """Ctrl+Home: the previous page of rows, and the top of the transcript."""
        self.show_earlier()
        self.scroll_home(animate=False)

    def release_anchor(self) -> None:
        # Textual calls this when the user scrolls away (wheel, scrollbar, PageUp, Home).
        super().release_anchor()
        self.following = False

    def watch_scroll_y(self, old: float, new: float) -> None:
        super().watch_scroll_y(old, new)
        if new >= self.max_scroll_y:  # back at the end: follow from here
            if not self.following or self.marker.display:
                self.following = True
                self.marker.display = False
                if self.is_anchored:
                    self.anchor()  # at the end again: follow from here

    def _arrived(self) -> None:
        """Output arrived: say so when the user is reading further up."""
        if self._growing_above:
            return
        if not self.following and self.max_scroll_y > 0 and self.scroll_y < self.max_scroll_y:
            from ....config.keybindings import key_text

            keys = key_text("app.transcript.end")
            self.marker.update(Text(f"↓ new output below{f' · {keys}' if keys else ''}"))
            self.marker.display = True

    def _update_anchor(self) -> None:
        """Follow the end while the rows overflow the screen; rows that fit sit at the top
        (an anchored container would push them to the bottom)."""
        overflowing = self.virtual_size.height > self.scrollable_content_region.height
        if overflowing and not self.is_anchored:
            self.anchor()
        elif not overflowing and self.is_anchored and not self._anchored_ahead:
            self.anchor(False)

    def watch_virtual_size(self, size) -> None:  # type: ignore[no-untyped-def]
        self._anchored_ahead = False  # laid out with the rows: whether they overflow is known
        self._update_anchor()  # rows grew or shrank (a long answer, a new session)
        if not self.following:
            self._arrived()

    def on_resize(self) -> None:
        self._update_anchor()  # the screen or the editor changed height

    @property
    def hidden_count(self) -> int:
        """Rows above the window, and older messages still to fetch."""
        return self.first_mounted + self.unfetched

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
        widgets = [self._build(build) for build in self.items[window_start:]]
        self.mounted.extend(widgets)
        if widgets:
            self._mount_whole(widgets)
        if self.first_mounted and not self.is_anchored:
            # Rows above the window: the history fills the screen (more is mounted until it
            # does). Shown from its end with its scrollbar in the first layout; found out after
            # it, the overflow would cost a second layout, a column narrower, and its drawing.
            self.show_vertical_scrollbar = True
            self.anchor()
            self._anchored_ahead = True
        self._trim()
        self.call_after_refresh(self._fill_screen)

    def _mount_whole(self, widgets: list[Widget]) -> None:
        """Mount rows with no frame drawn until they and what they compose are mounted: the
        screen's timer would otherwise lay out and draw the rows before their markdown, then
        everything again a frame later."""
        mounting = self.mount_all(widgets)
        app = self.app
        app._begin_batch()  # what App.batch_update does, held until the mount is done

        async def mounted() -> None:
            try:
                await mounting
            finally:
                app._end_batch()

        self._mounting = asyncio.ensure_future(mounted())  # referenced until done

    def expect_earlier(self, count: int, fetch: Callable[[], None]) -> None:
        """``count`` older messages exist that are not items yet; ``fetch`` asks for the next
        page of them (it arrives by :meth:`prepend_lazy`; asking again meanwhile is harmless)."""
        self.unfetched, self._fetch, self._want_earlier = count, fetch, False
        self._update_more()
        self.call_after_refresh(self._fill_screen)

    @property
    def has_earlier(self) -> bool:
        """Rows above the window: mounted on request, or still to be fetched."""
        return bool(self.first_mounted or (self.unfetched and self._fetch is not None))

    def prepend_lazy(self, builders: list[Callable[[], Widget]], *, unfetched: int = 0) -> None:
        """Put rows before all the others, unbuilt (the older part of a history that arrived
        after its tail); the window stays where it is and counts them as hidden above.
        ``unfetched``: how many older messages are still to be fetched after these."""
        self.unfetched = unfetched
        if not builders:
            self._update_more()
            return
        self.items[:0] = builders
        self.first_mounted += len(builders)
        self._update_more()
        if self._want_earlier:  # asked for by scrolling to the top, or to fill the screen
            self._want_earlier = False
            self.show_earlier()
        self.call_after_refresh(self._fill_screen)  # does nothing once the rows fill the screen

    def _fill_screen(self) -> None:
        """History that does not fill the screen gets the page above it, until it does."""
        if not self.has_earlier or not self.size.height:
            return
        if not all(widget.is_mounted for widget in self.mounted):
            self.call_after_refresh(self._fill_screen)  # not laid out yet
            return
        if self._anchored_ahead:  # laid out without a change of size
            self._anchored_ahead = False
            self._update_anchor()
        if self.max_scroll_y == 0 and self.show_earlier(FILL_STEP):
            self.call_after_refresh(self._fill_screen)  # (none shown: a page was asked for; its arrival goes on)

    def rows_drawn(self) -> bool:
        """Every mounted row is mounted in full (an answer's markdown is parsed as it mounts,
        in a thread) and the view is at the end: the next frame shows the last rows as they are."""
        if not all(widget.is_mounted and getattr(widget, "drawn", True) for widget in self.mounted):
            return False
        return not self.following or self.scroll_y >= self.max_scroll_y

    def when_rows_drawn(self, callback: Callable[[], object], *, every: float = 0.02, limit: float = 2.0) -> None:
        """Call ``callback`` after the frame that shows the mounted rows in full (checked
        every ``every`` seconds; after ``limit`` it is called anyway)."""
        if limit <= 0 or self.rows_drawn():
            self.call_after_refresh(callback)
        else:
            after(self, every, lambda: self.when_rows_drawn(callback, every=every, limit=limit - every))

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
        hidden = self.hidden_count
        if hidden:
            self.more.update(f"▲ {hidden} earlier message{'s' if hidden != 1 else ''} "
                             "(scroll to the top to show more)")
            self.more.display = True
        else:
            self.more.display = False

    def show_earlier(self, count: int = PAGE) -> int:
        """Mount the previous ``count`` rows above the window; returns how many. At the first
        row with older messages still to fetch, asks for them (shown when they arrive)."""
        if not self.first_mounted:
            if self.unfetched and self._fetch is not None:
                self._want_earlier = True
                self._fetch()
            return 0
        start = max(0, self.first_mounted - count)
        widgets = [self._build(build) for build in self.items[start : self.first_mounted]]
        self._growing_above = True
        self.call_after_refresh(self._grown_above)
        self.mount_all(widgets, after=self.more)
        self.mounted[:0] = widgets
        self.first_mounted = start
        self._update_more()
        return len(widgets)

    def _grown_above(self) -> None:
        self._growing_above = False

    def _build(self, build: Callable[[], Widget]) -> Widget:
        """A row's widget; one that cannot be built is a one-line error, never a crash."""
        try:
            return build()
        except Exception as exc:
            line = getattr(self.app, "extension_failed")("wolli", "drawing a transcript row", exc)  # noqa: B009
            return Static(line, classes="notice notice-error")

    def _on_mouse_scroll_up(self, event) -> None:
        # At the top already: the wheel asks for the rows above the window.
        if self.scroll_y <= 0 and self.has_earlier:
            self.show_earlier()

    def clear_all(self) -> None:
        for widget in self.mounted:
            widget.remove()
        self.items.clear()
        self.mounted.clear()
        self.first_mounted = 0
        self.unfetched, self._fetch, self._want_earlier = 0, None, False
        self._anchored_ahead = False
        self._update_more()
