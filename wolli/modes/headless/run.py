"""The headless run shared by print and json mode: start, send the prompts, shut down.

Both modes start through :func:`wolli.runtime.startup.start`, send each message in turn,
end with ``session_shutdown {reason: "quit"}``, and turn SIGINT/SIGTERM/SIGHUP into an
abort (the partial answer is saved, a tool's process tree is killed) rather than a kill.
"""

from __future__ import annotations

import asyncio
import sys
from typing import Any

from ...ai.types import AssistantMessage
from ...base.text_safety import terminal_safe
from ...runtime.request import PROMPT_INPUT_LIMIT
from ...runtime.startup import Startup, StartupError, StartupRequest, start
from ..common.signals import SignalRoute

# The status a shell reports for a process ended by SIGPIPE.
BROKEN_PIPE = 141


class Interrupt:
    """SIGINT/SIGTERM/SIGHUP abort the session instead of killing the process mid-write.

    The abort takes the normal path: the partial answer is saved as an ``aborted`` message,
    a running tool's process tree is killed, and the session file stays whole. A second
    signal cancels everything at once, and whatever still holds the process (a tool thread
    stuck in the kernel, a loop blocked by an extension) cannot keep it past
    :data:`~..common.signals.EXIT_GRACE_S` (:class:`~..common.signals.SignalRoute`).
    """

    def __init__(self, abort: Any) -> None:
        self.abort = abort
        self.signal_number: int | None = None
        self._route: SignalRoute | None = None
        self._task: asyncio.Task[Any] | None = None

    def __enter__(self) -> Interrupt:
        self._task = asyncio.current_task()
        self._route = SignalRoute(asyncio.get_running_loop(), self._on_signal).__enter__()
        return self

    def _on_signal(self, number: int) -> None:
        if self.signal_number is None:
            self.signal_number = number
            self.abort()
        elif self._task is not None:
            self._task.cancel()  # a second signal: stop waiting for a clean abort

    def __exit__(self, *exc: object) -> None:
        if self._route is not None:
            self._route.__exit__()


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
            say(warning)
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


# Piped input joins the prompt up to this size; the rest is not read (said on stderr).
STDIN_LIMIT = PROMPT_INPUT_LIMIT


def read_piped_stdin() -> str:
    """Piped stdin (``pytest 2>&1 | wolli -p "why?"``) joins the prompt; a terminal does not.

    At most :data:`STDIN_LIMIT` bytes are read. Bytes that are not UTF-8 become U+FFFD.
    Either is said on stderr: nothing is cut or changed without a word.
    """
    stream = getattr(sys.stdin, "buffer", None)
    if sys.stdin is None or sys.stdin.closed or stream is None:
        return ""
    try:
        if sys.stdin.isatty():
            return ""
        data = stream.read(STDIN_LIMIT + 1)
    except (OSError, ValueError):
        return ""
    if len(data) > STDIN_LIMIT:
        data = data[:STDIN_LIMIT]
        _note(f"piped input is over {STDIN_LIMIT // (1024 * 1024)} MB: only its first "
              f"{STDIN_LIMIT // (1024 * 1024)} MB joins the prompt")
    return decode_input(data, "piped input")


def decode_input(data: bytes, what: str) -> str:
    """UTF-8 text of ``data``; undecodable bytes become U+FFFD, with a note on stderr."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        text = data.decode("utf-8", "replace")
        _note(f"{what} is not valid UTF-8: undecodable bytes were replaced with U+FFFD (\ufffd)")
        return text


def _note(text: str) -> None:
    say(text)


def say(text: str, stream: Any = None) -> None:
    """One ``wolli: ...`` line on stderr. On a terminal the text is made terminal-safe first:
    it may quote a server, a file name or a model, whose escape sequences must not act."""
    out = stream or sys.stderr
    try:
        if out.isatty():
            text = terminal_safe(text)
        print(f"wolli: {text}", file=out, flush=True)
    except (OSError, ValueError, AttributeError):
        pass


def run_sync(main: Any) -> int:
    """Run a headless coroutine: clear errors for startup problems, 130 on Ctrl+C."""
    import gc

    try:
        return asyncio.run(main)
    except StartupError as exc:
        for warning in exc.warnings:
            say(warning)
        say(str(exc))
        return exc.exit_code
    except (KeyboardInterrupt, asyncio.CancelledError):
        print("wolli: interrupted", file=sys.stderr)
        return 130
    finally:
        # The process ends next: spare the interpreter's shutdown a scan of every object
        # (measured ~30 ms of a ~300 ms print-mode run).
        gc.freeze()
