"""Widgets that grow downwards while an answer streams, keeping the rows already drawn.

When a widget's size changes Textual throws away every line it has rendered. For the rows
of a streaming answer (the answer's containers and its tail) a taller widget of the same
width draws its old rows exactly as before (no bottom border or padding, no alignment), so
re-rendering them on each new row was wasted: 30-40 lines per widget per row. Rows below the
old bottom are not cached and are drawn anyway, and the compositor repaints the changed
region on screen itself.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.geometry import Region, Size

if TYPE_CHECKING:
    from textual.widget import Widget

    _Base = Widget
else:
    # A plain mixin at run time: Textual collects a widget's default CSS along its *first*
    # DOM base, so a Widget subclass here would hide VerticalScroll's or Vertical's CSS.
    _Base = object


class KeepsRowsOnGrowth(_Base):
    """Mix in before the widget class: ``class Row(KeepsRowsOnGrowth, Vertical)``."""

    _growing = False
    # Set by a scrolling container: only a change of its scrollable (virtual) size keeps the
    # rows (a new scrollbar or a taller screen draws them again).
    _keep_rows_only_at_same_size = False

    def _size_updated(self, size: Size, virtual_size: Size, container_size: Size, layout: bool = True) -> bool:
        old = self._size
        if self._keep_rows_only_at_same_size:
            self._growing = size == old and old.height > 0
        else:
            self._growing = size.width == old.width and size.height >= old.height > 0
        # The layout that called this has just placed the widget: setting its virtual size the
        # usual way (a reactive that lays out) would ask for a second, identical layout of the
        # whole screen. Its own watcher, if any, is called instead.
        relaid = layout and self._growing
        before = self.virtual_size
        try:
            changed = super()._size_updated(size, virtual_size, container_size, layout and not relaid)
        finally:
            self._growing = False
        watch = getattr(self, "watch_virtual_size", None)
        if relaid and watch is not None and before != virtual_size:
            watch(virtual_size)
        return changed

    def _set_dirty(self, *regions: Region) -> None:
        if self._growing and not regions:
            return  # rows above the old bottom are unchanged; new ones are not cached yet
        super()._set_dirty(*regions)
