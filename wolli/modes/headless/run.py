"""The headless run shared by print and json mode: start, send the prompts, shut down.

Both modes start through :func:`wolli.runtime.startup.start`, send each message in turn,
end with ``session_shutdown {reason: "quit"}``, and turn SIGINT/SIGTERM/SIGHUP into an
abort (the partial answer is saved, a tool's process tree is killed) rather than a kill.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from ...ai.types import AssistantMessage
from ...runtime.startup.request import PROMPT_INPUT_LIMIT
from ...runtime.startup.start import Startup, StartupRequest, start
from ..common.run import say
from ..common.signals import Interrupt

if TYPE_CHECKING:
    from ...runtime.events import SessionEvent
    from ...runtime.live.live_session import LiveSession, Observer
    pass

# The status a shell reports for a process ended by SIGPIPE.
BROKEN_PIPE = 141


class HeadlessRun:
    """One print/json run. ``observers`` see every event from ``session_start`` on;
    ``stopped()`` tells the loop to send no further prompt (a closed json reader)."""

    def __init__(
        self, request: StartupRequest, observers: list[Observer], stopped: Callable[[], bool] | None = None,
        before_start: Callable[[LiveSession], object] | None = None,
    ) -> None:
        self.request = request
        self.observers = observers
        self.before_start = before_start
        self.stopped = stopped or (lambda: False)
        self.startup: Startup | None = None
        self.interrupt: Interrupt | None = None
        self.last_answer: AssistantMessage | None = None

    def _watch(self, event: SessionEvent) -> None:
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
