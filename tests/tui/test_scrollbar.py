"""The transcript's scrollbar drawn as strips (wolli/modes/tui/widgets/scrollbar.py): the same
cells, colours and mouse actions as Textual's scrollbar, the thumb where the view is, and
none of Textual's console rendering on the way."""

from __future__ import annotations

from textual.scrollbar import ScrollBar

from wolli.modes.tui.widgets.scrollbar import StripScrollBar

from .test_band_compositor import HEIGHT, WIDTH, StreamApp, answer_of


def column(bar: ScrollBar, render) -> list[tuple[str, object, object, bool, object]]:
    strips = render(bar, bar.size.region)
    cells = []
    for strip in strips:
        for segment in strip:
            style = segment.style
            cells.append((segment.text, style.color, style.bgcolor, bool(style.reverse),
                          (style.meta or {}).get("@mouse.down")))
    return cells


def textual_column(bar: ScrollBar):
    bar._styles_cache.clear()
    return column(bar, ScrollBar.render_lines)


async def test_the_transcript_s_scrollbar_draws_as_textual_s_wherever_the_view_is():
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await answer_of(app, pilot, 12 * 70)
        transcript = app.transcript
        bar = transcript.vertical_scrollbar
        assert isinstance(bar, StripScrollBar)
        seen = set()
        for y in (0, 3, 17, 25, transcript.max_scroll_y // 2, transcript.max_scroll_y):
            transcript.scroll_to(y=y, animate=False)
            await pilot.pause()
            await pilot.pause()
            ours = column(bar, StripScrollBar.render_lines)
            assert ours == textual_column(bar), f"at scroll {y}"
            # The thumb (reversed cells and eighth blocks) starts where the view does.
            assert len(ours) == bar.size.height  # a cell per row, as wide as the bar
            thumb = [row for row, cell in enumerate(ours) if cell[3] or cell[0].strip()]
            assert thumb, f"no thumb at scroll {y}"
            rows, shown = bar.size.height, transcript.scrollable_content_region.height
            length = shown * rows / transcript.virtual_size.height
            expected = (rows - length) * transcript.scroll_y / transcript.max_scroll_y
            assert abs(thumb[0] - expected) <= 1 and abs(len(thumb) - length) <= 2, (thumb, expected, length)
            seen.add(thumb[0])
            assert {cell[4] for cell in ours} >= {"grab"}, "the thumb is dragged by the mouse"
        assert len(seen) >= 4


async def test_hovering_and_clicking_the_scrollbar_still_work():
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await answer_of(app, pilot, 12 * 70)
        transcript = app.transcript
        transcript.scroll_to(y=0, animate=False)
        await pilot.pause()
        bar = transcript.vertical_scrollbar
        await pilot.hover(bar, offset=(0, 2))
        await pilot.pause()
        assert bar.mouse_over
        assert column(bar, StripScrollBar.render_lines) == textual_column(bar)  # hover colours
        await pilot.click(bar, offset=(0, HEIGHT - 1))  # below the thumb: a page down
        await pilot.pause()
        await pilot.pause()
        assert transcript.scroll_y > 0
