"""A compositor that renders only the rows a partial update repaints.

Textual's compositor, asked to repaint a few rows, has every widget overlapping them produce
the lines of its *whole* visible region (a widget inside its clip renders all its rows) and
then keeps only the changed rows. While an answer streams, one changed row of the answer's
tail thus had the screen, the transcript, the answer's containers and the tail each produce
30-40 lines per frame: the cost of a frame grew with what was on screen, not with what
changed. Here each widget renders only the band of rows the update covers (the union of the
dirty regions), so a one-row change costs a few lines per overlapping widget. Full updates
(after a layout, a resize) render the whole screen as before.

Textual is pinned below 9 in pyproject.toml; ``_get_renders`` is its private seam between
working out which widgets are visible and cutting their lines into the screen's chops.
"""

from __future__ import annotations

from collections.abc import Iterable

from textual._compositor import Compositor
from textual.geometry import Region
from textual.screen import Screen
from textual.strip import Strip


class BandCompositor(Compositor):
    def _get_renders(self, crop: Region | None = None) -> Iterable[tuple[Region, Region, list[Strip]]]:
        if crop is None:
            yield from super()._get_renders(crop)
            return
        top, bottom = crop.y, crop.bottom
        for widget, (region, clip) in self.visible_widgets.items():
            visible = region.intersection(clip)
            if not crop.overlaps(visible):
                continue
            first, end = max(visible.y, top), min(visible.bottom, bottom)
            if end <= first or not visible.width:
                continue
            # Returned as the clip: the caller cuts the strips into rows of region ∩ clip.
            band = Region(visible.x, first, visible.width, end - first)
            yield region, band, widget.render_lines(
                Region(band.x - region.x, band.y - region.y, band.width, band.height))


class MainScreen(Screen[None]):
    """The app's default screen, drawn through :class:`BandCompositor`."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self._compositor = BandCompositor()
