"""A compositor that renders only the rows a partial update repaints.

Textual's compositor, asked to repaint a few rows, has every widget overlapping them produce
the lines of its *whole* visible region (a widget inside its clip renders all its rows) and
then keeps only the changed rows. While an answer streams, one changed row of the answer's
tail thus had the screen, the transcript, the answer's containers and the tail each produce
30-40 lines per frame: the cost of a frame grew with what was on screen, not with what
changed. Here each widget renders only the band of rows the update covers (the union of the
dirty regions), so a one-row change costs a few lines per overlapping widget. Full updates
(a resize, a new screen) render the whole screen as before. Widgets are drawn front to back
and the first strip for a cell wins, so a widget whose part of the update lies inside rows
already drawn in front of it (an answer's containers and the screen behind its changed row,
the transcript behind its scrollbar) is not rendered at all.

After a layout Textual marks the whole old and new region of every widget whose geometry
changed as dirty. A streaming answer that gains a row changes the geometry of its tail, its
containers and the transcript (its scrollable size), so every row of the answer was cut into
the screen and written to the terminal again for one new row. Here a widget that only grew
downwards and keeps the rows it had drawn (:class:`.widgets.growing.KeepsRowsOnGrowth`) marks
its new rows only, and a widget whose place on screen did not change marks only what it asked
to repaint itself; everything else (a widget that moved, shrank, appeared, or was clipped
differently, as when the transcript scrolls) is marked whole, as before.

Once the transcript scrolls, every visible row moves up for each new row of an answer. When
a layout is such a scroll (:func:`.scroll_band.find_scroll`), the update has the terminal move
the band of rows with a scroll region and marks only what the move leaves wrong: the rows
scrolled in, whatever in the band did not move with the content (an overlay, the scrollbar, a
docked row), and the widgets' own repaints. If that update never reaches the terminal, the
next one draws the whole screen.

Textual is pinned below 9 in pyproject.toml; ``_get_renders`` is its private seam between
working out which widgets are visible and cutting their lines into the screen's chops.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from rich.console import RenderableType
from textual import events
from textual._compositor import ChopsUpdate, Compositor, ReflowResult
from textual.geometry import Region, Size
from textual.map_geometry import MapGeometry
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from .scroll_band import ScrolledChopsUpdate, ScrollPlan, ancestors_of, find_scroll, in_subtree
from .widgets.growing import KeepsRowsOnGrowth


class BandCompositor(Compositor):
    _update_regions: list[Region] = []  # the dirty regions of the partial update being drawn
    # Move a scrolled band with the terminal's scroll region (scroll_band.py): None = when the
    # app draws on a real full-screen terminal; tests set it.
    terminal_scroll: bool | None = None
    _pending_scroll: ScrollPlan | None = None  # found by the last layout, not drawn yet
    _unwritten: ScrolledChopsUpdate | None = None  # the last scrolling update, if not written
    _map_stale = False  # a scroll-only reflow since the last layout: the old map is not on screen

    def reflow(self, parent: Widget, size: Size) -> ReflowResult:
        old_map = self._full_map
        before = set(self._dirty_regions)
        stale, self._map_stale = self._map_stale, False
        result = super().reflow(parent, size)
        if self._pending_scroll is not None:
            # Laid out again before the scroll was drawn: draw its band whole instead.
            before.add(self._pending_scroll.band)
            self._pending_scroll = None
            stale = True
        if not old_map or size.region in before:
            return result  # a first or full layout: everything is repainted anyway
        new_map = self._full_map
        scroll = None
        if not stale and self._scroll_allowed(parent):
            scroll = find_scroll(old_map, new_map, size)
        regions = before
        lifted: set[object] = set()
        if scroll is not None:
            # Repaints asked for before the layout are where the widgets were: also where the
            # scroll puts those rows.
            regions |= {moved for region in before if (moved := scroll.moved(region))}
            regions.update(scroll.exposed())
            lifted = ancestors_of(scroll.container)
        for widget, gone in old_map.items():
            if widget not in new_map:
                regions.add(old_visible := gone.clip.intersection(gone.region))
                if scroll is not None:
                    regions.add(scroll.moved(old_visible))
        for widget, new in new_map.items():
            new_visible = new.clip.intersection(new.region)
            if widget not in old_map:
                regions.add(new_visible)
                continue
            old = old_map[widget]
            old_visible = old.clip.intersection(old.region)
            if scroll is not None and widget not in lifted:
                if in_subtree(widget, scroll.container) and self._scrolled_with(
                        widget, old, new, scroll, regions):
                    continue
                if old_visible.overlaps(scroll.band):
                    # In front of the scrolled band and not moved with it (an overlay, a docked
                    # row, the scrollbar): its cells moved on the terminal; draw them where
                    # they went, and the widget where it is now.
                    regions.add(scroll.moved(old_visible))
                    regions.add(new_visible)
            if old == new:
                continue
            if old.order == new.order and old.dock_gutter == new.dock_gutter:
                if old.region == new.region and old_visible == new_visible:
                    self._add_repaints(regions, widget, new.region, new.clip)
                    continue
                if isinstance(widget, KeepsRowsOnGrowth) and _grew_downwards(old.region, new.region) \
                        and _grew_downwards(old_visible, new_visible):
                    regions.add(Region(new_visible.x, old_visible.bottom, new_visible.width,
                                       new_visible.bottom - old_visible.bottom))
                    self._add_repaints(regions, widget, new.region, new.clip)
                    continue
            regions.add(old_visible)
            regions.add(new_visible)
            if scroll is not None:
                regions.add(scroll.moved(old_visible))
        self._dirty_regions = {region for region in regions if region}
        self._pending_scroll = scroll
        return result

    def _scrolled_with(self, widget: Widget, old: MapGeometry, new: MapGeometry, scroll: ScrollPlan,
                       regions: set[Region]) -> bool:
        """A widget in the scrolled container that moved up with its content: the terminal
        moved its drawn rows; only rows it did not have on screen before (scrolled in from
        below, or grown, for a widget keeping its rows) and its own repaints are drawn."""
        region, was = new.region, old.region.translate((0, -scroll.rows))
        if old.order != new.order or old.dock_gutter != new.dock_gutter or region.x != was.x \
                or region.width != was.width or region.y != was.y:
            return False
        if region.height != was.height and not (
                isinstance(widget, KeepsRowsOnGrowth) and region.height > was.height):
            return False
        shown = new.clip.intersection(region)
        kept = old.clip.intersection(old.region).translate((0, -scroll.rows)).intersection(shown)
        if not kept:
            regions.add(shown)
        else:
            if shown.y < kept.y:
                regions.add(Region(shown.x, shown.y, shown.width, kept.y - shown.y))
            if shown.bottom > kept.bottom:
                regions.add(Region(shown.x, kept.bottom, shown.width, shown.bottom - kept.bottom))
        self._add_repaints(regions, widget, region, new.clip)
        return True

    def _scroll_allowed(self, screen: Widget) -> bool:
        allowed = self.terminal_scroll
        if allowed is None:
            app = screen.app
            allowed = not app.is_headless and not app.is_inline and os.environ.get(
                "WOLLI_TERMINAL_SCROLL", "1") != "0"
        return allowed and isinstance(screen, Screen) and screen.is_current

    def reflow_visible(self, parent: Widget, size: Size) -> set[Widget]:
        self._map_stale = True  # widgets moved without a layout: the full map is not what is drawn
        if self._pending_scroll is not None:
            self._dirty_regions.add(self._pending_scroll.band)
            self._pending_scroll = None
        return super().reflow_visible(parent, size)

    def render_update(self, full: bool = False, screen_stack: list[Screen] | None = None,
                      simplify: bool = False) -> RenderableType | None:
        plan, self._pending_scroll = self._pending_scroll, None
        if self._unwritten is not None and not self._unwritten.written:
            full = True  # a scroll never reached the terminal: its rows are out of step
        self._unwritten = None
        if plan is not None and (full or screen_stack or self.size.region in self._dirty_regions):
            plan = None  # the whole screen is drawn (a full update covers the band anyway)
        update = super().render_update(full=full, screen_stack=screen_stack, simplify=simplify)
        if plan is None:
            return update
        if not isinstance(update, ChopsUpdate):
            self._dirty_regions.add(self.size.region)  # drawn at the next update, whole
            return update
        self._unwritten = scrolled = ScrolledChopsUpdate(update, plan)
        return scrolled

    @staticmethod
    def _add_repaints(regions: set[Region], widget: Widget, region: Region, clip: Region) -> None:
        """What the widget asked to repaint itself (its own coordinates), on screen."""
        offset = region.offset
        for dirty in widget._exchange_repaint_regions():
            if update := clip.intersection(dirty.translate(offset)):
                regions.add(update)

    def render_partial_update(self) -> ChopsUpdate | None:
        # Repaints asked for during this frame's layout (the scrollbar of a transcript that
        # scrolled, told its new size after the arrangement) would wait for their Update
        # message: a second screen update a frame later, the thumb lagging the text. They are
        # drawn now, and that message then finds nothing left to draw.
        pending = {widget for widget in self.visible_widgets if widget._repaint_regions}
        if pending:
            self.update_widgets(pending)
        self._update_regions = list(self._dirty_regions)  # what _get_renders draws
        try:
            return super().render_partial_update()
        finally:
            self._update_regions = []

    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if crop is None or not self._update_regions:
            yield from super()._get_renders(crop)
            return
        updates = self._update_regions
        # Front to back: the first strip for a cell wins. Drawn rows of a widget in front hide
        # what is behind them, so a widget draws only when part of the update within it is
        # not hidden (not when a row of an answer changed in front of its containers, or the
        # scrollbar in front of the transcript's edge).
        covered: list[Region] = []
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            if not crop.overlaps(visible):
                continue
            needed = [part for update in updates if (part := update.intersection(visible))
                      and not any(front.contains_region(part) for front in covered)]
            if not needed:
                continue
            # Whole rows of the widget (its strips fill every cut of them), the update's rows only.
            first, end = min(part.y for part in needed), max(part.bottom for part in needed)
            band = Region(visible.x, first, visible.width, end - first)
            covered.append(band)
            # Returned as the clip: the caller cuts the strips into rows of region ∩ clip.
            yield region, band, widget.render_lines(
                Region(band.x - region.x, band.y - region.y, band.width, band.height))


def _grew_downwards(old: Region, new: Region) -> bool:
    """Same top-left corner and width, and at least as tall (a visible part may be empty)."""
    return (old.x == new.x and old.y == new.y and old.width == new.width
            and new.height >= old.height > 0)


class MainScreen(Screen[None]):
    """The app's default screen, drawn through :class:`BandCompositor`."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._compositor = BandCompositor()
        self._resumed = False

    def _on_screen_resume(self, event: events.ScreenResume) -> None:
        # Runs before Screen's own handler. Its first resume would restyle every widget the
        # app just mounted: each was styled as it was registered (the stylesheet and the
        # app's theme classes complete by then) and any change since restyled its node
        # itself, so the second pass changes nothing (~1 % of the start's instructions).
        # A later resume (a dialog closed) restyles as Textual does.
        if not self._resumed:
            self._resumed = True
            event.refresh_styles = False
