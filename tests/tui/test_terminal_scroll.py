"""The transcript's scrolled rows moved by the terminal (wolli/modes/tui/scroll_band.py).

Each test keeps a model of the terminal: the rows it shows, changed only by what the screen's
updates tell it (a scroll region moved up by its index count, then the chops written at their
places). After every frame the model must equal a full render of the screen: a row the
compositor believed moved but did not, or a cell it forgot to draw again, shows as a
difference. And once the transcript scrolls, a new row is one scroll and a few drawn rows,
not all of them.
"""

from __future__ import annotations

import re

from rich.console import Console
from textual.widgets import Static

from wolli.modes.tui.compositor import BandCompositor
from wolli.modes.tui.scroll_band import ScrolledChopsUpdate

from .test_band_compositor import HEIGHT, WIDTH, answer_of, screen_rows, words
from .test_band_compositor import StreamApp as PlainStreamApp


class StreamApp(PlainStreamApp):
    """As the app's transcript: a column of padding each side, beside the scrollbar."""

    CSS = PlainStreamApp.CSS + " Transcript { padding: 0 1; }"

SCROLL = re.compile(r"\x1b\[(\d+);(\d+)r\x1b\[\d+;1H((?:\x1bD)+)\x1b\[r")


class Terminal:
    """The rows a terminal shows, from the updates the screen writes while installed."""

    def __init__(self, app: StreamApp) -> None:
        self.app = app
        self.rows = screen_rows(app)
        self.scrolls: list[tuple[int, int, int]] = []  # (top, bottom, rows) as written
        self.drawn: list[int] = []  # the cells each partial update drew
        self._original = BandCompositor.render_update
        self._console = Console(width=WIDTH, height=HEIGHT, force_terminal=True, color_system="truecolor")

    def __enter__(self) -> Terminal:
        original, terminal = self._original, self

        def written(compositor: BandCompositor, full: bool = False, screen_stack=None, simplify: bool = False):
            update = original(compositor, full=full, screen_stack=screen_stack, simplify=simplify)
            if update is not None:
                terminal.write(compositor, update)
            return update

        BandCompositor.render_update = written  # type: ignore[method-assign]
        self.app.screen._compositor.terminal_scroll = True
        return self

    def __exit__(self, *exc: object) -> None:
        BandCompositor.render_update = self._original  # type: ignore[method-assign]

    drop_next_scroll = False  # the next scrolling update never reaches the terminal

    def write(self, compositor: BandCompositor, update: object) -> None:
        if self.drop_next_scroll and isinstance(update, ScrolledChopsUpdate):
            self.drop_next_scroll = False
            return
        chops = getattr(update, "chops", None)
        if chops is None:  # a full update: every row
            self.rows = [strip.text for strip in compositor.render_strips()]
            return
        data = update.render_segments(self._console)  # type: ignore[attr-defined]
        if isinstance(update, ScrolledChopsUpdate):
            match = SCROLL.match(data)
            assert match, f"a scrolling update starts with its scroll: {data[:40]!r}"
            top, bottom, count = int(match[1]) - 1, int(match[2]), len(match[3]) // 2
            self.scrolls.append((top, bottom, count))
            band = self.rows[top:bottom]
            self.rows[top:bottom] = band[count:] + [" " * WIDTH] * count
        drawn = 0
        for y, x1, x2 in update.spans:  # type: ignore[attr-defined]
            for end, (x, strip) in zip(update.chop_ends[y], chops[y].items(), strict=True):  # type: ignore[attr-defined]
                if strip is None or x > x2 or end <= x1:
                    continue
                text = strip.text if end <= x2 else strip.crop(0, min(end, x2) - x).text
                row = self.rows[y]
                self.rows[y] = row[:x] + text + row[x + len(text):]
                drawn += len(text)
        self.drawn.append(drawn)

    def check(self) -> None:
        truth = screen_rows(self.app)
        wrong = [y for y, (seen, real) in enumerate(zip(self.rows, truth, strict=True)) if seen != real]
        assert not wrong, "\n".join(f"row {y}: terminal {self.rows[y]!r}\n        screen   {truth[y]!r}"
                                    for y in wrong[:4])


async def stream_rows(app: StreamApp, pilot, terminal: Terminal, start: int, rows: int, *, check: bool = True) -> int:
    count = start
    for _ in range(rows):
        count += 12  # one more row of 60 cells
        await answer_of(app, pilot, count)
        if check:
            terminal.check()
    return count


async def test_a_scrolling_answer_moves_the_rows_with_the_terminal_and_draws_only_new_ones():
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await answer_of(app, pilot, 12 * (HEIGHT + 2))  # overflows: the transcript scrolls
        with Terminal(app) as terminal:
            count = await stream_rows(app, pilot, terminal, 12 * (HEIGHT + 2), 12)
        assert len(terminal.scrolls) >= 10, terminal.scrolls
        assert {scroll[:2] for scroll in terminal.scrolls} == {(0, HEIGHT)}
        # a new row and the one above it (the tail redraws its last row), and the scrollbar's
        # column (2 cells wide here); all 20 rows were drawn again without the scroll
        assert sorted(terminal.drawn)[len(terminal.drawn) // 2] <= 2 * WIDTH + 2 * HEIGHT, terminal.drawn
        assert max(terminal.drawn) <= 4 * WIDTH, terminal.drawn
        assert terminal.rows[HEIGHT - 1].rstrip().endswith(f"w{count - 1:03d}")


async def test_rows_stay_right_when_the_answer_grows_several_rows_a_frame():
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        app.tail.set_text(words(12 * 3))
        await pilot.pause()
        with Terminal(app) as terminal:
            count = 12 * 3
            for step in (5, 30, 41, 7, 60, 12, 100, 3, 50, 1, 36, 24, 80, 13):  # words: under a row to several rows
                count += step
                await answer_of(app, pilot, count)
                terminal.check()
        assert terminal.scrolls


async def test_an_overlay_and_a_docked_row_over_the_band_are_drawn_where_they_are():
    """A box on a layer above the transcript (as the completion menu or a toast) and a row
    docked at the transcript's bottom do not move with its content: the terminal's scroll
    moves their cells all the same, so they are drawn again at their place and the cells they
    left are drawn from what is there now."""
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await answer_of(app, pilot, 12 * (HEIGHT + 2))
        with Terminal(app) as terminal:
            app.screen.styles.layers = ("base", "overlay")
            box = Static("an overlay box\nover the answer\n(three rows)")
            box.styles.layer = "overlay"
            box.styles.width, box.styles.height = 20, 3
            box.styles.offset = (10, 6)
            box.styles.background = "red"
            await app.screen.mount(box)
            await pilot.pause()
            await pilot.pause()
            terminal.check()
            count = await stream_rows(app, pilot, terminal, 12 * (HEIGHT + 2), 4)
            assert "over the answer" in "\n".join(terminal.rows)
            docked = Static("docked at the bottom", classes="docked")
            docked.styles.dock = "bottom"
            docked.styles.height = 1
            await app.transcript.mount(docked)
            await pilot.pause()
            terminal.check()
            count = await stream_rows(app, pilot, terminal, count, 4)
            await box.remove()
            await pilot.pause()
            await pilot.pause()
            terminal.check()
            await stream_rows(app, pilot, terminal, count, 3)
        assert len(terminal.scrolls) >= 8
        assert "docked at the bottom" in "\n".join(terminal.rows)


async def test_a_scroll_that_never_reached_the_terminal_is_made_good_by_the_next_update():
    """Textual drops an update drawn while the app batches; the compositor believed the rows
    moved, so the update after it draws the whole screen."""
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        await answer_of(app, pilot, 12 * (HEIGHT + 2))
        with Terminal(app) as terminal:
            terminal.drop_next_scroll = True
            count = await stream_rows(app, pilot, terminal, 12 * (HEIGHT + 2), 1, check=False)
            assert not terminal.drop_next_scroll, "a scrolling update was dropped"
            await stream_rows(app, pilot, terminal, count, 2)
