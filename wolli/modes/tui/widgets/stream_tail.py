"""The paragraph an answer is still writing: wrapped incrementally, drawn line by line.

A Static re-wraps and re-renders its whole text on every update, so a long paragraph made
each frame cost more than the last. Here rows that can no longer change (every row but the
last of a line) are kept, only the last row is wrapped again as text arrives, and drawing uses
Textual's line API with a per-row cache: a frame marks only the rows that changed as dirty.

The widget is exactly as tall as its text: no blank rows are kept below it (they once were,
six of them, to lay the screen out less often). A frame that only changes the last row
repaints that row; a frame that adds a row lays the screen out again, and then the rows
already drawn are kept (:class:`.growing.KeepsRowsOnGrowth`, here and in the answer's
containers), so the layout costs the arrangement and the scroll, not a redraw of every row.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region, Size
from textual.strip import Strip
from textual.widget import Widget

from .growing import KeepsRowsOnGrowth


def wrap_row(text: str, width: int) -> list[str]:
    """Greedy word wrap of one line into rows of at most ``width`` cells (long words split)."""
    if width <= 0:
        return [text]
    rows: list[str] = []
    row = ""
    for word in text.split(" "):
        candidate = f"{row} {word}" if row else word
        if cell_len(candidate) <= width:
            row = candidate
            continue
        if row:
            rows.append(row)
        while cell_len(word) > width:  # a word longer than a row is cut
            cut = width
            while cut > 1 and cell_len(word[:cut]) > width:
                cut -= 1
            rows.append(word[:cut])
            word = word[cut:]
        row = word
    rows.append(row)
    return rows


class StreamTail(KeepsRowsOnGrowth, Widget):
    DEFAULT_CSS = "StreamTail { height: auto; background: $background; }"

    def __init__(self) -> None:
        super().__init__()
        self.add_class("stream-tail")
        self.text = ""
        self._rows: list[str] = []
        # Where the last row starts in ``text``: rows before it are final.
        self._last_start = 0
        self._width = 0
        self._strips: dict[int, Strip] = {}
        self._style: Style | None = None  # the resolved style of the rows: kept, and dropped, with them
        self._height = 1  # rows laid out: the text's rows

    def set_text(self, text: str) -> None:
        width = self.size.width
        if width <= 0 or width != self._width or not text.startswith(self.text):
            self.text = text
            self._rewrap_all(width)
            self._height = max(1, len(self._rows))
            self.refresh(layout=True)
            return
        first_changed = max(0, len(self._rows) - 1)  # rows above the last one are final
        self.text = text
        self._rewrap_from_last()
        changed = Region(0, first_changed, max(1, width), len(self._rows) - first_changed)
        if len(self._rows) != self._height:
            # A row was added (or, the text rewrapped, taken away): the only case that lays
            # the screen out again. Rows above ``first_changed`` keep their rendering.
            self._height = max(1, len(self._rows))
            self.refresh(changed, layout=True)
        else:
            self.refresh(changed)

    def settle(self) -> None:
        """The text is complete (kept for callers; the tail never holds blank rows)."""
        if self._height != max(1, len(self._rows)):
            self._height = max(1, len(self._rows))
            self.refresh(layout=True)

    def _rewrap_all(self, width: int) -> None:
        self._width = width
        self._rows, self._last_start = [], 0
        self._strips.clear()
        self._style = None
        self._rewrap_from_last()

    def _rewrap_from_last(self) -> None:
        """Wrap ``text`` from the start of the last row on (earlier rows cannot change)."""
        keep = len(self._rows) - 1 if self._rows else 0
        del self._rows[keep:]
        for y in [y for y in self._strips if y >= keep]:
            del self._strips[y]
        rest = self.text[self._last_start :]
        start = self._last_start
        lines = rest.split("\n")
        for number, line in enumerate(lines):
            rows = wrap_row(line, self._width or 80)
            self._rows.extend(rows)
            if number < len(lines) - 1:
                start += len(line) + 1
        # The last row starts where the last line's last row starts.
        last_line = lines[-1]
        last_rows = wrap_row(last_line, self._width or 80)
        self._last_start = start + max(0, len(last_line) - len(last_rows[-1]))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        if width != self._width:
            self._rewrap_all(width)
            self._height = max(1, len(self._rows))
        return max(self._height, len(self._rows), 1)

    def notify_style_update(self) -> None:
        # The theme changed: cached rows carry the old colours (also called while constructing).
        getattr(self, "_strips", {}).clear()
        self._style = None
        super().notify_style_update()

    def render(self) -> str:  # what tests and screenshots read as plain text
        return "\n".join(self._rows)

    def render_line(self, y: int) -> Strip:
        strip = self._strips.get(y)
        if strip is None:
            row = self._rows[y] if y < len(self._rows) else ""
            # The widget's own style (its resolved background too) for the text and the rest of
            # the row: the line API paints nothing for us. Resolving it walks the ancestors'
            # styles; the last row is drawn again at every frame, so it is kept like the rows.
            style = self._style
            if style is None:
                style = self._style = self.rich_style
            strip = Strip([Segment(row, style)], cell_len(row)).extend_cell_length(self.size.width, style)
            self._strips[y] = strip
        return strip
