"""Moving a scrolled band of rows with the terminal's own scroll instead of redrawing it.

Once a streaming answer reaches the bottom of the screen, every new row scrolls the transcript
by one: each of its ~34 visible rows moves up a row, and a compositor that only knows how to
draw cells renders and writes all of them again for one new row of text. A terminal can move
rows itself: a scroll region (DECSTBM, ``CSI top;bottom r``) limited to the transcript's rows,
then an index (``ESC D``) at its bottom margin per row scrolled, moves exactly those rows up
and leaves blank rows at the bottom. Only the rows that are new or differ from their moved
selves have to be drawn after that.

:func:`find_scroll` proves a layout is such a scroll from the old and new compositor maps: the
widgets that moved did so straight up by the same ``k`` rows, inside one container whose own
place did not change. The band is whole screen rows (a scroll region spans the full width), so
everything in it that did *not* move with the container's content is marked to be drawn again
by :meth:`ScrollPlan.moved` (its old cells, where the terminal moved them, and its new ones):
overlays above the transcript (a toast, the completion menu), docked rows, the scrollbar and
whatever lies left or right of the container's content. Anything the proof does not cover is
drawn whole, as without a scroll.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import NamedTuple

from rich.console import Console
from textual._compositor import ChopsUpdate, CompositorMap
from textual.geometry import Region, Size
from textual.widget import Widget


class ScrollPlan(NamedTuple):
    band: Region  # whole screen rows the terminal scrolls
    view: Region  # the container's cells in the band: what moves with the scroll
    rows: int  # how far the content moved up
    container: Widget

    @property
    def sequence(self) -> str:
        """Scroll the band up ``rows`` rows, then restore the full-screen scroll region
        (which homes the cursor: every chop that follows positions it anyway)."""
        top, bottom = self.band.y + 1, self.band.bottom  # 1-based, inclusive
        return f"\x1b[{top};{bottom}r\x1b[{bottom};1H" + "\x1bD" * self.rows + "\x1b[r"

    def moved(self, region: Region) -> Region:
        """Where the terminal's scroll puts the part of ``region`` inside the band."""
        inside = region.intersection(self.band)
        return inside.translate((0, -self.rows)).intersection(self.band) if inside else inside

    def exposed(self) -> Iterable[Region]:
        """The band's cells the scroll leaves wrong whatever the widgets did: the rows it
        scrolled in at the bottom (blank), and the columns beside the content (the scrollbar,
        a border, another widget), which moved with the rows but not with the content."""
        band, view = self.band, self.view
        yield Region(band.x, band.bottom - self.rows, band.width, self.rows)
        if view.x > band.x:
            yield Region(band.x, band.y, view.x - band.x, band.height)
        if view.right < band.right:
            yield Region(view.right, band.y, band.right - view.right, band.height)


def find_scroll(old_map: CompositorMap, new_map: CompositorMap, size: Size) -> ScrollPlan | None:
    """The scroll this layout is, or None: the widgets that moved went up by one distance
    (the most common one, if not all did: the others are drawn whole), inside a container
    that stayed where it was and shows them through a band of at least two rows."""
    deltas: Counter[int] = Counter()
    for widget, new in new_map.items():
        old = old_map.get(widget)
        if old is not None and old.region.y > new.region.y and old.region.x == new.region.x:
            deltas[old.region.y - new.region.y] += 1
    if not deltas:
        return None
    rows = deltas.most_common(1)[0][0]
    for widget, new in new_map.items():
        old = old_map.get(widget)
        if old is None or old.region.y - new.region.y != rows or old.region.x != new.region.x:
            continue
        container = _still_ancestor(widget, old_map, new_map)
        if container is None or not container.allow_vertical_scroll:
            return None
        child = widget
        while child.parent is not container:
            child = child.parent  # type: ignore[assignment]
        # The rows the content scrolls through; across them the container's own cells (its
        # padding, the edges of a border, its background) are the same on every row, so they
        # may move with the content. Not for a hatch (diagonal), nor a widget drawing content.
        through = new_map[child].clip.intersection(new_map[container].clip)
        placed = new_map[container]
        view = placed.region.intersection(placed.clip)
        view = Region(view.x, through.y, view.width, through.height)
        if not (0 < rows < view.height) or view.height < 2 or not container.is_container \
                or container.styles.has_rule("hatch"):
            return None
        band = Region(0, view.y, size.width, view.height)
        return ScrollPlan(band, view, rows, container)
    return None


def _still_ancestor(widget: Widget, old_map: CompositorMap, new_map: CompositorMap) -> Widget | None:
    """The nearest ancestor whose place did not change: the container that scrolled."""
    node = widget.parent
    while isinstance(node, Widget):
        old, new = old_map.get(node), new_map.get(node)
        if old is None or new is None:
            return None
        if old.region == new.region and old.clip == new.clip:
            return node
        node = node.parent
    return None


def in_subtree(widget: Widget, container: Widget) -> bool:
    node = widget.parent
    while node is not None:
        if node is container:
            return True
        node = node.parent
    return False


def ancestors_of(container: Widget) -> set[object]:
    return {container, *container.ancestors}


class ScrolledChopsUpdate(ChopsUpdate):
    """A partial update that first has the terminal scroll the band, then draws the chops.

    ``written`` tells the compositor the update reached the terminal: one that was dropped
    (Textual discards an update drawn while the app batches) leaves the terminal's rows out of
    step with what the compositor believes, and the next update then draws the whole screen.
    """

    def __init__(self, update: ChopsUpdate, plan: ScrollPlan) -> None:
        super().__init__(update.chops, update.spans, update.chop_ends)
        self.plan = plan
        self.written = False

    def render_segments(self, console: Console) -> str:
        self.written = True
        return self.plan.sequence + super().render_segments(console)
