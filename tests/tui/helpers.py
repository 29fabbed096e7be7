"""Small waits for Pilot tests (state, not time)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from tests.support.waiting import wait_until


async def ready(app: Any) -> None:
    await wait_until(lambda: app.controller.ready.is_set(), 10, "the session to start")


@asynccontextmanager
async def running(app: Any, size: tuple[int, int] = (80, 24), *, notifications: bool = False) -> AsyncIterator[Any]:
    """The app under Pilot, once its session is up (``notifications``: toasts are drawn)."""
    async with app.run_test(size=size, notifications=notifications) as pilot:
        await ready(app)
        yield pilot


async def idle_after(app: Any, pilot: Any, count: int) -> None:
    """Wait until the session holds ``count`` messages and is idle, then let the screen settle."""
    await wait_until(lambda: len(app.controller.session.messages) >= count and app.controller.session.is_idle(),
                     10, f"{count} messages and an idle session")
    await pilot.pause()


async def type_and_send(pilot: Any, text: str) -> None:
    await pilot.press(*text)
    await pilot.press("enter")


def mounted(app: Any, cls: type) -> list[Any]:
    return list(app.query(cls))


def attached_app(socket_path: Any, session_ref: str | None, cwd: Any, agent_home: Any, *,
                 connect: Any = None, ahead: Any = None) -> Any:
    """The full-screen app attached to the ``wolli serve`` on ``socket_path`` (the session
    ``session_ref``, or a new one in ``cwd``), as ``wolli attach`` builds it."""
    from wolli.modes.server import attach_tui
    from wolli.modes.server.link import ServerLink
    from wolli.modes.tui.app import WolliApp
    from wolli.runtime.startup.request import StartupRequest

    async def unix(on_record: Any) -> Any:
        return await ServerLink.unix(socket_path, on_record)

    def runtime(app: Any, startup: Any) -> Any:
        return attach_tui.RemoteRuntime(app, startup, connect or unix, session_ref, ahead=ahead)

    request = StartupRequest(mode="tui", cwd=str(cwd), require_model=False)
    return WolliApp(request, agent_home=agent_home, runtime=runtime)
