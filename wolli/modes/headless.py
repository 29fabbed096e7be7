"""The headless run shared by print and json mode: start, send the prompts, shut down.

Both modes start through :func:`wolli.runtime.startup.start`, send each message in turn,
end with ``session_shutdown {reason: "quit"}``, and turn SIGINT/SIGTERM/SIGHUP into an
abort (the partial answer is saved, a tool's process tree is killed) rather than a kill.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from typing import Any

from ..ai.types import AssistantMessage
from ..runtime.startup import Startup, StartupError, StartupRequest, start

# The status a shell reports for a process ended by SIGPIPE.
BROKEN_PIPE = 141


class Interrupt:
    """SIGINT/SIGTERM/SIGHUP abort the session instead of killing the process mid-write.

    The abort takes the normal path: the partial answer is saved as an ``aborted`` message,
    a running tool's process tree is killed, and the session file stays whole. A second
    signal cancels everything at once.
    """

    SIGNALS = ("SIGINT", "SIGTERM", "SIGHUP")

    def __init__(self, abort: Any) -> None:
        self.abort = abort
        self.signal_number: int | None = None
        self._installed: list[int] = []
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> Interrupt:
        loop = asyncio.get_running_loop()
        self._task = asyncio.current_task()
        for name in self.SIGNALS:
            number = getattr(signal, name, None)
            if number is None:
                continue
            try:
                loop.add_signal_handler(number, self._on_signal, int(number))
            except (NotImplementedError, RuntimeError, ValueError):  # not the main thread, or Windows
                continue
            self._installed.append(int(number))
        return self

    def _on_signal(self, number: int) -> None:
        if self.signal_number is None:
            self.signal_number = number
            self.abort()
        elif self._task is not None:
            self._task.cancel()  # a second signal: stop waiting for a clean abort

    def __exit__(self, *exc: object) -> None:
        loop = asyncio.get_running_loop()
        for number in self._installed:
            loop.remove_signal_handler(number)


class HeadlessRun:
    """One print/json run. ``observers`` see every event from ``session_start`` on;
    ``stopped()`` tells the loop to send no further prompt (a closed json reader)."""

    def __init__(
        self, request: StartupRequest, observers: list[Any], stopped: Any = None, before_start: Any = None
    ) -> None:
        self.request = request
        self.observers = observers
        self.before_start = before_start
        self.stopped = stopped or (lambda: False)
        self.startup: Startup | None = None
        self.interrupt: Interrupt | None = None
        self.last_answer: AssistantMessage | None = None

    def _watch(self, event: Any) -> None:
        if event.type == "message_end" and isinstance(event.message, AssistantMessage):
            self.last_answer = event.message

    async def run(self) -> int | None:
        """None when every prompt ran; else the exit code of an interruption."""
        self.startup = await start(
            self.request, observers=[self._watch, *self.observers], before_start=self.before_start
        )
        for warning in self.startup.warnings:
            print(f"wolli: {warning}", file=sys.stderr)
        session = self.startup.session
        # MCP servers first: the first request needs their tools.
        await self.startup.host.start_mcp(interactive=False, wait=True)
        self.interrupt = Interrupt(session.abort)
        try:
            with self.interrupt:
                for prompt in self.startup.prompts:
                    if self.interrupt.signal_number is not None or self.stopped():
                        break
                    await session.prompt(prompt.text, prompt.images)
        finally:
            await self.startup.host.shutdown("quit")
        if self.interrupt.signal_number is not None:
            print("wolli: interrupted", file=sys.stderr)
            return 128 + self.interrupt.signal_number
        return None


def read_piped_stdin() -> str:
    """Piped stdin (``pytest 2>&1 | wolli -p "why?"``) joins the prompt; a terminal does not."""
    if sys.stdin is None or sys.stdin.closed:
        return ""
    try:
        if sys.stdin.isatty():
            return ""
        return sys.stdin.read()
    except (OSError, ValueError):
        return ""


def run_sync(main: Any) -> int:
    """Run a headless coroutine: clear errors for startup problems, 130 on Ctrl+C."""
    import gc

    try:
        return asyncio.run(main)
    except StartupError as exc:
        for warning in exc.warnings:
            print(f"wolli: {warning}", file=sys.stderr)
        print(f"wolli: {exc}", file=sys.stderr)
        return exc.exit_code
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("wolli: interrupted", file=sys.stderr)
        return 130
    finally:
        # The process ends next: spare the interpreter's shutdown a scan of every object
        # (measured ~30 ms of a ~300 ms print-mode run).
        gc.freeze()
