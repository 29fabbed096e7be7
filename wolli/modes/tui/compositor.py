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

Textual is pinned below 9 in pyproject.toml; ``_get_renders`` is its private seam between
working out which widgets are visible and cutting their lines into the screen's chops.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import ChopsUpdate, Compositor, ReflowResult
from textual.geometry import Region, Size
from textual.screen import Screen
from textual.strip import Strip
from textual.widget import Widget

from .widgets.growing import KeepsRowsOnGrowth


class BandCompositor(Compositor):
    _update_regions: list[Region] = []  # the dirty regions of the partial update being drawn

    def reflow(self, parent: Widget, size: Size) -> ReflowResult:
        old_map = self._full_map
        before = set(self._dirty_regions)
        result = super().reflow(parent, size)
        if not old_map or size.region in before:
            return result  # a first or full layout: everything is repainted anyway
        regions = before
        new_map = self._full_map
        for widget, gone in old_map.items():
            if widget not in new_map:
                regions.add(gone.clip.intersection(gone.region))
        for widget, new in new_map.items():
            new_visible = new.clip.intersection(new.region)
            if widget not in old_map:
                regions.add(new_visible)
                continue
            old = old_map[widget]
            if old == new:
                continue
            old_visible = old.clip.intersection(old.region)
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
        self._dirty_regions = {region for region in regions if region}
        return result

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
