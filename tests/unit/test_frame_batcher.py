"""The TUI's frame batcher: at most one flush a frame, and none held back after a quiet spell."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from wolli.modes.tui.frame_batcher import FrameBatcher


class Timers:
    """The app's ``set_timer`` as the batcher sees it: the delays asked for, fired by hand."""

    def __init__(self) -> None:
        self.now = 100.0
        self.delays: list[float] = []
        self.due: list[Callable[[], None]] = []

    def schedule(self, delay: float, fn: Callable[[], None]) -> None:
        self.delays.append(delay)
        self.due.append(fn)

    def fire(self) -> None:
        due, self.due = self.due, []
        for fn in due:
            fn()


def make() -> tuple[FrameBatcher, Timers]:
    timers = Timers()
    return FrameBatcher(timers.schedule, fps=20, clock=lambda: timers.now), timers


def test_the_first_mark_after_a_quiet_spell_is_flushed_at_once():
    batcher, timers = make()
    drawn: list[str] = []
    batcher.mark("row", lambda: drawn.append("first token"))
    assert timers.delays == [0.0]
    timers.fire()
    assert drawn == ["first token"]


def test_while_pieces_keep_coming_a_mark_waits_a_frame_and_draws_once():
    batcher, timers = make()
    drawn: list[str] = []
    batcher.mark("row", lambda: drawn.append("a"))
    timers.fire()
    timers.now += 0.06  # a frame after that flush, two more pieces for the same row
    batcher.mark("row", lambda: drawn.append("b"))
    batcher.mark("row", lambda: drawn.append("c"))
    assert timers.delays[1:] == [pytest.approx(0.05)]  # one timer, a frame long
    timers.fire()
    assert drawn == ["a", "c"]  # the later mark replaced the earlier one: one draw a frame
    timers.now += 0.2  # a pause in the stream of several frames
    batcher.mark("row", lambda: drawn.append("d"))
    assert timers.delays[-1] == 0.0


def test_a_dropped_key_is_not_drawn_and_an_empty_flush_is_not_counted():
    batcher, timers = make()
    drawn: list[str] = []
    batcher.mark("row", lambda: drawn.append("x"))
    batcher.drop("row")
    timers.fire()
    assert drawn == [] and batcher.flushes == 0
