"""``modes/tui/timers.after``: a one-shot delay that fires however short it is, and can be dropped."""

from __future__ import annotations

from tests.support.waiting import wait_until
from wolli.modes.tui.timers import after

from .helpers import running


async def test_a_delay_of_zero_or_less_than_a_clock_read_still_calls_back(make_app):
    # Textual's set_timer never calls back for either delay (a missed tick is skipped, 0 divides
    # by zero); the frame batcher asks for 0 after a quiet spell.
    app = make_app()
    async with running(app, (80, 24)):
        called: list[str] = []
        after(app, 0.0, lambda: called.append("zero"))
        after(app, 1e-7, lambda: called.append("tiny"))
        after(app.transcript, 0.02, lambda: called.append("widget"))
        await wait_until(lambda: len(called) == 3, 5, "three callbacks")
        assert sorted(called) == ["tiny", "widget", "zero"]


async def test_a_cancelled_delay_does_not_call_back(make_app):
    app = make_app()
    async with running(app, (80, 24)):
        called: list[str] = []
        after(app, 0.05, lambda: called.append("dropped")).cancel()
        after(app, 0.1, lambda: called.append("kept"))
        await wait_until(lambda: called == ["kept"], 5, "the kept callback")
        assert called == ["kept"]
