"""Waiting on state (never on a fixed sleep): poll a predicate until it holds or a deadline passes."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")


async def wait_until(condition: Callable[[], bool], timeout: float = 5.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        await asyncio.sleep(0.005)


def wait_until_sync(condition: Callable[[], bool], timeout: float = 15.0, what: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.01)


def wait_for_value_sync(read: Callable[[], T], accept: Callable[[T], bool], timeout: float,
                        failure: Callable[[T], str], interval: float = 0.01) -> T:
    """Read ``read()`` until ``accept`` takes it; returns that value. At the deadline the
    error is ``failure(last value)``, so it can show what was seen instead (a screen, a page)."""
    deadline = time.monotonic() + timeout
    while True:
        value = read()
        if accept(value):
            return value
        if time.monotonic() > deadline:
            raise AssertionError(failure(value))
        time.sleep(interval)
