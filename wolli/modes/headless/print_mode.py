"""``-p``: answer once and print the final text; ``--mode json``: every event as a JSON line.

Print mode writes the final assistant text to stdout. What happens on the way is said on
stderr as it happens: each retry (attempt, delay, reason), a provider that keeps failing
(its last error and the number of attempts), extension errors and notices. Errors end
with exit code 1.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING, TextIO

from ...base.text_safety import terminal_safe
from ...runtime.startup.start import StartupRequest
from ..common.run import run_sync, say
from ..common.stdout_divert import answer_stdout
from .run import BROKEN_PIPE, HeadlessRun

if TYPE_CHECKING:
    from ...runtime.events import SessionEvent
    pass


class StderrReporter:
    """Print mode's observer: the events a person should see while waiting for the answer."""

    def __init__(self, out: TextIO | None = None) -> None:
        self.out = out or sys.stderr
        self.attempts = 0
        # The error already said with the give-up line, so the run's end does not repeat it.
        self.final_error_said: str | None = None

    def __call__(self, event: SessionEvent) -> None:
        match event.type:
            case "auto_retry_start":
                self.attempts = event.attempt
                self._say(
                    f"retrying in {event.delay_ms / 1000:.1f}s (attempt {event.attempt} of {event.max_attempts}): "
                    f"{_one_line(event.error_message)}"
                )
            case "auto_retry_end" if not event.success:
                retries = f"{event.attempt} {'retry' if event.attempt == 1 else 'retries'}"
                self._say(f"giving up after {event.attempt + 1} attempts ({retries}): {event.final_error}")
                self.final_error_said = event.final_error
            case "compaction_start" if event.reason != "manual":
                self._say("the context is full: compacting older messages" if event.reason == "overflow"
                          else "compacting older messages to make room")
            case "compaction_end" if event.error_message and not event.aborted:
                self._say(f"compaction failed: {event.error_message}")
            case "extension_error":
                self._say(f"{event.extension_path}: {event.event} handler failed: {event.error}")
            case "notice":
                self._say(event.message)

    def _say(self, text: str) -> None:
        say(text, self.out)


def _one_line(text: str, limit: int = 300) -> str:
    flat = " ".join((text or "").split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


async def _print(request: StartupRequest) -> int:
    with answer_stdout() as out:
        return await _print_to(request, out)


async def _print_to(request: StartupRequest, out: TextIO) -> int:
    reporter = StderrReporter()
    run = HeadlessRun(request, [reporter])
    interrupted = await run.run()
    if interrupted is not None:
        return interrupted
    last = run.last_answer
    if last is None:
        print("wolli: the model gave no answer", file=sys.stderr)
        return 1
    if last.stop_reason in ("error", "aborted"):
        if last.error_message is None or last.error_message != reporter.final_error_said:
            say(last.error_message or last.stop_reason)
        return 1
    text = last.text()
    if out.isatty():  # the answer is data: on a terminal its escape sequences are shown, not obeyed
        text = terminal_safe(text)
    try:
        out.write(text if text.endswith("\n") else text + "\n")
        out.flush()
    except BrokenPipeError:  # ``wolli -p ... | head -1``: the reader has what it wanted
        from .json_mode import silence

        silence(out)
        return BROKEN_PIPE
    except OSError as exc:  # ``> /dev/full``, a disk that filled up: the answer is only in the session
        from .json_mode import silence

        say(f"cannot write the answer to stdout: {exc.strerror or exc}")
        silence(out)
        return 1
    return 0


async def _json(request: StartupRequest, full_updates: bool) -> int:
    with answer_stdout() as out:
        return await _json_to(request, full_updates, out)


async def _json_to(request: StartupRequest, full_updates: bool, out: TextIO) -> int:
    from .json_mode import JsonEventWriter

    writer = JsonEventWriter(out, full_updates=full_updates)
    # Nobody reads the events any more (``| head``): stop the run like an interrupt.
    run = HeadlessRun(request, [writer], stopped=lambda: writer.closed,
                      before_start=lambda session: writer.write(session.session_manager.get_header()))
    writer.on_closed = lambda: run.startup.session.abort() if run.startup else None
    interrupted = await run.run()
    if interrupted is not None:
        return interrupted
    if writer.failure is not None:
        say(f"cannot write events to stdout: {writer.failure}")
        return 1
    if writer.closed:
        return BROKEN_PIPE
    last = run.last_answer
    if last is None or last.stop_reason in ("error", "aborted"):
        if last is not None:
            say(last.error_message or last.stop_reason)
        return 1
    return 0


def run_print(request: StartupRequest) -> int:
    return run_sync(_print(request))


def run_json(request: StartupRequest, *, full_updates: bool = False) -> int:
    return run_sync(_json(request, full_updates))
