"""Driving the real line mode through prompt_toolkit's pipe input, on the scripted ``faux``
model: keys go in through the pipe, what the person would read comes out of a StringIO.
The real startup path runs (settings, extensions, session file); tests wait on state."""

from __future__ import annotations

import asyncio
import io
from collections.abc import AsyncIterator
from typing import Any

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from tests.mcp.conftest import browser, oauth_server  # noqa: F401 (fixtures for the MCP login tests)
from tests.support.waiting import wait_until
from wolli.runtime.startup.request import StartupRequest


class LineDriver:
    """A running line mode: ``type`` keys, read ``text``, ``wait_for`` what should appear."""

    def __init__(self, repl: Any, pipe: Any, stream: io.StringIO) -> None:
        self.repl = repl
        self.pipe = pipe
        self.stream = stream
        self.task: asyncio.Task[int] | None = None

    @property
    def text(self) -> str:
        return self.stream.getvalue()

    def type(self, keys: str) -> None:
        self.pipe.send_text(keys)

    async def wait_for(self, needle: str, timeout: float = 5.0) -> str:
        try:
            await wait_until(lambda: needle in self.text or (self.task is not None and self.task.done()), timeout,
                             f"{needle!r} in the output")
        except AssertionError:
            raise AssertionError(f"{needle!r} did not appear; the output so far:\n{self.text}") from None
        assert needle in self.text, f"the line mode ended before {needle!r}:\n{self.text}"
        return self.text

    async def wait_asked(self, title: str) -> None:
        """Until a dialog titled ``title`` waits for an answer (its question is drawn by
        prompt_toolkit, not into the scrollback this driver reads)."""
        await wait_until(lambda: self.repl.prompter.asking == title, 5.0, f"the dialog {title!r}")

    async def wait_idle_prompt(self) -> None:
        await wait_until(lambda: self.repl.prompter._main_running and self.repl._running is None, 5.0,
                         "the prompt waiting for input")

    async def send(self, line: str) -> None:
        """Type ``line`` at the prompt and Enter, once the prompt is there."""
        await self.wait_idle_prompt()
        read = self.repl.prompter.lines_read
        self.type(line + "\r")
        await wait_until(lambda: self.repl.prompter.lines_read > read, 5.0, "the prompt taking the line")


@pytest.fixture
async def line(faux, project, wolli_home) -> AsyncIterator[Any]:
    from wolli.modes.line.repl import LineRepl

    drivers: list[LineDriver] = []

    async def start(*, code: dict[str, str] | None = None, colour: bool = False, resume: bool = False,
                    extensions: list[str] | None = None, dumb: bool = False, **request: Any) -> LineDriver:
        """``code`` maps a file name to extension source, written beside the project and loaded."""
        paths = list(extensions or [])
        for name, source in (code or {}).items():
            path = project.parent / f"{name}.py"
            path.write_text(source)
            paths.append(str(path))
        fields: dict[str, Any] = {"cwd": str(project), "model": "faux/faux-1",
                  # Tests of other things run every tool as before; permission tests pass a mode.
                  "permission_mode": "yolo", **request}
        req = StartupRequest(mode="plain", require_model=False, extension_paths=paths, **fields)
        pipe_cm = create_pipe_input()
        pipe = pipe_cm.__enter__()
        stream = io.StringIO()
        # ``dumb``: no output given, as on a real terminal, so TERM=dumb gets prompt_toolkit's
        # basic prompt; the app session's output stands in for the terminal.
        repl = LineRepl(req, stream=stream, input=pipe, output=None if dumb else DummyOutput(), colour=colour,
                        width=80, resume=resume)
        driver = LineDriver(repl, pipe, stream)
        with create_app_session(input=pipe, output=DummyOutput()):
            driver.task = asyncio.create_task(repl.run())
        driver._pipe_cm = pipe_cm  # type: ignore[attr-defined]
        drivers.append(driver)
        await wait_until(lambda: repl.startup is not None or driver.task.done(), 10.0, "the session started")
        return driver

    yield start
    for driver in drivers:
        if driver.task is not None and not driver.task.done():
            driver.repl.quit_requested = True
            driver.repl.abort()
            driver.repl.prompter.close_main()
            try:
                await asyncio.wait_for(driver.task, 5)
            except (TimeoutError, Exception):
                driver.task.cancel()
        driver._pipe_cm.__exit__(None, None, None)  # type: ignore[attr-defined]
