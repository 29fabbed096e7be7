"""What the screen repaints when a streaming answer gains a row (wolli/modes/tui/compositor.py).

A layout used to mark the whole old and new region of every widget whose geometry changed,
so one new row of an answer had all of its rows cut into the screen and written out again.
These tests record every partial update's dirty rows and compare full renders of the screen
before and after: each row that changed must have been repainted, and a growing answer
repaints its new rows, not itself.
"""

from __future__ import annotations

from textual.app import App
from textual.containers import Vertical
from textual.geometry import Region
from textual.widget import Widget

from wolli.modes.tui.compositor import BandCompositor, MainScreen
from wolli.modes.tui.widgets.growing import KeepsRowsOnGrowth
from wolli.modes.tui.widgets.stream_tail import StreamTail
from wolli.modes.tui.widgets.transcript import Transcript

WIDTH, HEIGHT = 60, 20


class Answer(KeepsRowsOnGrowth, Vertical):
    DEFAULT_CSS = "Answer { height: auto; }"


class StreamApp(App[None]):
    CSS = "Transcript { height: 1fr; } StreamTail { width: 1fr; }"

    def __init__(self) -> None:
        super().__init__()
        self.tail = StreamTail()
        self.answer = Answer(self.tail)
        self.transcript = Transcript()

    def get_default_screen(self) -> MainScreen:
        return MainScreen(id="_default")

    def compose(self):  # type: ignore[override]
        yield self.transcript

    async def on_mount(self) -> None:
        await self.transcript.mount(self.answer)


def words(count: int) -> str:
    return " ".join(f"w{i:03d}" for i in range(count))  # 4 cells and a space: 12 a row of 60


async def answer_of(app: StreamApp, pilot, count: int) -> None:
    """The streaming tail holds ``count`` words, laid out and drawn (two frames)."""
    app.tail.set_text(words(count))
    await pilot.pause()
    await pilot.pause()


def screen_rows(app: App[None]) -> list[str]:
    return [strip.text for strip in app.screen._compositor.render_strips()]


class RepaintLog:
    """The rows of every update the screen sends (all of them for a full one), while installed."""

    def __init__(self) -> None:
        self.updates: list[set[int]] = []
        self._original = BandCompositor.render_update

    def __enter__(self) -> RepaintLog:
        original, updates = self._original, self.updates

        def logged(compositor: BandCompositor, full: bool = False, screen_stack=None):
            screen = compositor.size.region
            dirty = [screen] if full or screen in compositor._dirty_regions else compositor._dirty_regions
            rows = {y for region in dirty for y in range(region.y, region.bottom)}
            if rows:
                updates.append(rows)
            return original(compositor, full=full, screen_stack=screen_stack)

        BandCompositor.render_update = logged  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        BandCompositor.render_update = self._original  # type: ignore[method-assign]

    @property
    def rows(self) -> set[int]:
        return set().union(*self.updates)


async def test_an_answer_gaining_a_row_repaints_that_row_not_the_whole_answer():
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        app.tail.set_text(words(12 * 8))  # eight full rows
        await pilot.pause()
        await pilot.pause()
        assert app.tail.size.height == 8 and not app.transcript.max_scroll_y
        before = screen_rows(app)
        with RepaintLog() as log:
            app.tail.set_text(words(12 * 8 + 3))  # a ninth row
            await pilot.pause()
            await pilot.pause()
        after = screen_rows(app)
        assert app.tail.size.height == 9
        changed = {y for y, (old, new) in enumerate(zip(before, after, strict=True)) if old != new}
        top = app.tail.region.y
        assert changed == {top + 8}
        assert changed <= log.rows, "a changed row was not repainted"
        # the new row, and the row above it (the tail marks its last row as changed)
        assert log.rows <= {top + 7, top + 8}, f"repainted rows {sorted(log.rows)}"


async def test_every_row_that_changes_while_an_answer_streams_and_scrolls_is_repainted():
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        count = 1
        app.tail.set_text(words(count))
        await pilot.pause()
        previous = screen_rows(app)
        scrolled = False
        while count < 12 * (HEIGHT + 6):  # past the bottom: the transcript scrolls
            count += 5
            with RepaintLog() as log:
                app.tail.set_text(words(count))
                await pilot.pause()
                await pilot.pause()
            rows = screen_rows(app)
            changed = {y for y, (old, new) in enumerate(zip(previous, rows, strict=True)) if old != new}
            assert changed <= log.rows, f"rows {sorted(changed - log.rows)} changed but were not repainted"
            scrolled = scrolled or app.transcript.scroll_y > 0
            previous = rows
        assert scrolled and app.transcript.scroll_y == app.transcript.max_scroll_y
        assert previous[HEIGHT - 1].rstrip().endswith(f"w{count - 1:03d}")


async def test_a_widget_that_moves_is_repainted_whole():
    """Only growth downwards keeps rows: a row inserted above shifts the answer, all of it
    is drawn again at its new place."""
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        app.tail.set_text(words(12 * 4))
        await pilot.pause()
        before = screen_rows(app)
        with RepaintLog() as log:
            from textual.widgets import Static

            await app.transcript.mount(Static("a row above"), before=app.answer)
            await pilot.pause()
            await pilot.pause()
        after = screen_rows(app)
        changed = {y for y, (old, new) in enumerate(zip(before, after, strict=True)) if old != new}
        assert len(changed) >= 5 and changed <= log.rows
        assert app.answer.region == Region(0, 1, app.answer.region.width, 4)


class DrawLog:
    """Which widgets drew rows (``render_lines``) for the screen, and how many, while installed."""

    def __init__(self) -> None:
        self.drawn: list[tuple[str, int]] = []
        self._original = Widget.render_lines

    def __enter__(self) -> DrawLog:
        original, drawn = self._original, self.drawn

        def logged(widget: Widget, crop: Region):
            drawn.append((type(widget).__name__, crop.height))
            return original(widget, crop)

        Widget.render_lines = logged  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        Widget.render_lines = self._original  # type: ignore[method-assign]


async def test_a_changed_row_of_an_answer_is_drawn_by_the_answer_alone():
    """The tail covers the changed row: its containers and the screen behind it would only be
    cut away, so they draw nothing (they used to draw the row too, each of them)."""
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        app.tail.set_text(words(12 * 3))
        await pilot.pause()
        await pilot.pause()
        before = screen_rows(app)
        with DrawLog() as log, RepaintLog() as repaints:
            app.tail.set_text(words(12 * 3 - 1) + " wide")  # the last row changes, no new row
            await pilot.pause()
            await pilot.pause()
        after = screen_rows(app)
        changed = {y for y, (old, new) in enumerate(zip(before, after, strict=True)) if old != new}
        assert changed == {app.tail.region.y + 2} and changed <= repaints.rows
        assert {name for name, _ in log.drawn} == {"StreamTail"}, log.drawn


async def test_a_scrolling_transcript_draws_its_scrollbar_in_the_same_update():
    """Each new row that scrolls the transcript is one screen update: the moved rows and the
    scrollbar's new thumb together (the thumb used to follow in an update of its own, with the
    transcript and the screen drawing the scrollbar's whole column again behind it)."""
    app = StreamApp()
    async with app.run_test(size=(WIDTH, HEIGHT)) as pilot:
        count = 12 * (HEIGHT + 2)
        app.tail.set_text(words(count))  # overflows: the transcript scrolls
        await pilot.pause()
        await pilot.pause()
        assert app.transcript.max_scroll_y > 0
        scrollbar = app.transcript.vertical_scrollbar
        column = scrollbar.region.x
        for _ in range(3):
            previous = screen_rows(app)
            count += 12  # one more row
            with RepaintLog() as log, DrawLog() as drawn:
                app.tail.set_text(words(count))
                for _ in range(4):
                    await pilot.pause()
            rows = screen_rows(app)
            changed = {y for y, (old, new) in enumerate(zip(previous, rows, strict=True)) if old != new}
            assert changed <= log.rows
            assert len(log.updates) == 1, f"{len(log.updates)} screen updates for one new row"
            assert {row[column] for row in rows} != {" "}, "the scrollbar is drawn"
            assert ("Transcript", HEIGHT) not in drawn.drawn and ("MainScreen", HEIGHT) not in drawn.drawn
