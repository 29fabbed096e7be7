"""The transcript's scrollbar, drawn as strips without a Rich console.

Textual's scrollbar returns a Rich renderable; drawing its column went through a console
render, Textual's visual conversion and the styles cache's per-line pass: ~1.5 ms for a
column of ~34 cells. While an answer scrolls the transcript, the thumb moves with every new
row, so that was paid per row. Here the same segments (Textual's own ``render_bar``: the
thumb with eighth-block ends, the theme's colours, and the mouse actions in each cell's
style, which clicking and dragging rely on) become one strip per row directly, passed through
the app's line filters as the styles cache would.
"""

from __future__ import annotations

from math import ceil

from rich.segment import Segment
from rich.style import Style
from textual.geometry import Region
from textual.scrollbar import ScrollBar
from textual.strip import Strip


class StripScrollBar(ScrollBar):
    def render_lines(self, crop: Region) -> list[Strip]:
        parent = self.parent
        if not self.vertical or parent is None or self.screen.styles.scrollbar_color.a == 0:
            return super().render_lines(crop)
        styles = parent.styles  # type: ignore[attr-defined]
        if self.grabbed:
            background, color = styles.scrollbar_background_active, styles.scrollbar_color_active
        elif self.mouse_over:
            background, color = styles.scrollbar_background_hover, styles.scrollbar_color_hover
        else:
            background, color = styles.scrollbar_background, styles.scrollbar_color
        if background.a < 1:
            background = parent.background_colors[0] + background  # type: ignore[attr-defined]
        color = background + color
        width, height = self.size
        window = self.window_size if self.window_size < self.window_virtual_size else 0
        bar = self.renderer.render_bar(
            size=height, virtual_size=ceil(self.window_virtual_size), window_size=ceil(window),
            position=self.position, thickness=width, vertical=True,
            back_color=background.rich_color, bar_color=color.rich_color)
        base = self.rich_style  # under each cell's style, as the styles cache puts it
        # The bar repeats a few segments (the track above and below the thumb, the thumb, its
        # two ends): one strip each, shared by the rows that show it (strips are immutable).
        made: dict[int, Strip] = {}
        rows = []
        for segment in bar.segments:
            if segment.control:
                continue
            strip = made.get(id(segment))
            if strip is None:
                strip = made[id(segment)] = Strip([Segment(segment.text, base + segment.style)], width)
            rows.append(strip)
        rows = rows[crop.y:crop.bottom]
        if crop.x or crop.width != width:
            rows = [row.crop(crop.x, crop.right) for row in rows]
        filters = self.get_line_filters()
        if filters:
            back = self.background_colors[1]
            for line_filter in filters:
                rows = [row.apply_filter(line_filter, back) for row in rows]
        if len(rows) < crop.height:  # never expected: keep the compositor's row count
            rows += [Strip.blank(crop.width, Style(bgcolor=background.rich_color))] * (crop.height - len(rows))
        return rows
