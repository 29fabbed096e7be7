"""One-shot delays in the TUI that always fire.

Textual's ``set_timer`` makes a one-shot timer that skips missed ticks: when its delay has
already passed the first time the timer's task reads the clock (a delay of a few ms, and a
thread holding the GIL for that long meanwhile) it counts its one tick as missed and ends
without calling back, and a delay of 0 raises ``ZeroDivisionError`` inside the task. Both fail
silently. :func:`after` uses the event loop's own timer instead and posts the callback to the
widget (or app), so it runs there like a timer's callback would.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Protocol


class Poster(Protocol):
    """A widget or the app: anything that runs a callback among its messages."""

    def call_later(self, callback: Callable[..., object], *args: object, **kwargs: object) -> bool: ...


def after(target: Poster, delay: float, callback: Callable[[], object]) -> asyncio.TimerHandle:
    """Run ``callback`` on ``target`` once ``delay`` seconds have passed (``cancel()`` the
    returned handle to drop it). Call it from the app's event loop."""
    return asyncio.get_running_loop().call_later(max(0.0, delay), target.call_later, callback)
