"""LoopTurns: a burst that never waits gives the loop a turn; paced work pays nothing."""

from __future__ import annotations

import asyncio
import time

from wolli.base.loop_turns import LoopTurns


async def test_a_burst_that_never_waits_lets_other_tasks_run_every_few_milliseconds():
    ran: list[float] = []
    stop = False

    async def other() -> None:
        while not stop:
            ran.append(time.monotonic())
            await asyncio.sleep(0)

    task = asyncio.get_running_loop().create_task(other())
    await asyncio.sleep(0)
    turns = LoopTurns()
    started = time.monotonic()
    slept = 0
    ran.clear()
    while time.monotonic() - started < 0.05:  # 50 ms of work, no await that suspends
        sum(range(200))
        slept += await turns.give()
    stop = True
    await task
    assert slept >= 10, slept
    assert len(ran) >= 10, "the other task did not run during the burst"


async def test_work_paced_by_waits_does_not_sleep_again():
    turns = LoopTurns()
    slept = 0
    for _ in range(20):
        await asyncio.sleep(0.003)  # a network read that waited: the loop ran meanwhile
        slept += await turns.give()
    assert slept == 0
