"""Every question the line mode asks: the main prompt and the dialogs, on prompt_toolkit.

One question is on the screen at a time. A dialog asked while the main prompt waits for the
person (an extension working in the background) takes the prompt off the screen, keeping
what was typed, and the prompt comes back with it once the dialog is answered. Dialogs
honour a ``timeout`` (the seconds left are shown in the question) and an abort ``signal``;
both, like Esc and Ctrl+C, answer with the dialog's cancel value.

Pickers are numbered lists printed into scrollback: the answer is a number, or words that
narrow the list (the narrowed list is printed again when more than one entry is left).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Callable, Coroutine, Iterator
from typing import IO, Any

from prompt_toolkit import PromptSession
from prompt_toolkit.completion import Completer
from prompt_toolkit.formatted_text import ANSI
from prompt_toolkit.history import History
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPressEvent
from prompt_toolkit.output import Output

from ...ai.abort import AbortSignal
from ...base.daemon_threads import run_blocking
from ...runtime.startup.request import PROMPT_INPUT_LIMIT
from .terminal import Terminal

LIST_LIMIT = 30  # entries of a numbered list printed at once; words narrow a longer one
MAIN_PROMPT = "› "
PLAIN_PROMPT = "> "


class _TakenOff(Exception):
    """The main prompt made room for a dialog."""


def main_key_bindings(actions: dict[str, Callable[[], Coroutine[Any, Any, None]]] | None = None) -> KeyBindings:
    """Enter sends (or takes the highlighted completion), Ctrl+J and Alt+Enter insert a
    newline (the TUI's keys), Ctrl+C clears the line or, on an empty line, asks to quit.
    ``actions`` bind more keys to work run beside the prompt (Shift+Tab, Ctrl+P, Alt+M)."""
    keys = KeyBindings()
    for key, action in (actions or {}).items():
        def run(event: KeyPressEvent, action: Callable[[], Coroutine[Any, Any, None]] = action) -> None:
            event.app.create_background_task(action())

        keys.add(*key.split())(run)  # "escape m" is Alt+M: two keys in a row

    @keys.add("enter")
    def _send(event: KeyPressEvent) -> None:
        buffer = event.current_buffer
        state = buffer.complete_state
        if state is not None and state.current_completion is not None:
            buffer.apply_completion(state.current_completion)
            return
        if state is not None and state.completions:
            # A menu is open and nothing chosen: Enter takes the first suggestion unless the
            # word is already it (as in the TUI), so "/sess" runs /session, not a prompt.
            first = state.completions[0]
            typed = buffer.document.text_before_cursor[len(buffer.document.text_before_cursor) + first.start_position:]
            if first.text.rstrip() != typed:
                buffer.apply_completion(first)
                return
        buffer.validate_and_handle()

    @keys.add("c-j")
    @keys.add("escape", "enter")
    def _newline(event: KeyPressEvent) -> None:
        event.current_buffer.insert_text("\n")

    @keys.add("c-c")
    def _clear(event: KeyPressEvent) -> None:
        if event.current_buffer.text:
            event.current_buffer.reset()
        else:
            event.app.exit(exception=KeyboardInterrupt())

    return keys


class Prompter:
    def __init__(self, terminal: Terminal, *, input: Input | None = None, output: Output | None = None,
                 history: History | None = None, completer: Completer | None = None, lines: IO[str] | None = None,
                 actions: dict[str, Callable[[], Coroutine[Any, Any, None]]] | None = None) -> None:
        self.terminal = terminal
        self.actions = actions or {}
        self.lines = lines  # stdin when it is not a terminal: prompts and answers are read line by line
        self.input = input  # None: the terminal (tests pass a pipe)
        self.output = output
        self.history = history
        self.completer = completer
        self.prefill = ""  # ``ctx.ui.set_editor_text``: what the next main prompt starts with
        # More keys for the main prompt, asked for at each key press (extension shortcuts).
        self.extra_keys: Callable[[], KeyBindings | None] = lambda: None
        self._main: PromptSession[str] | None = None
        self._main_running = False
        self._main_task: asyncio.Future[str | type[BaseException]] | None = None
        self._main_stop: type[BaseException] | None = None  # why the main prompt was cancelled: _TakenOff or EOFError
        self.lines_read = 0  # prompts answered at the main prompt
        self.asking: str | None = None  # the title of the open dialog
        self._main_done = asyncio.Event()
        self._dialog_lock = asyncio.Lock()

    @property
    def prompt_text(self) -> str:
        return MAIN_PROMPT if self.terminal.colour else PLAIN_PROMPT

    def _session(self, **kwargs: Any) -> PromptSession[str]:
        return PromptSession(input=self.input, output=self.output, **kwargs)

    @contextlib.contextmanager
    def _above(self) -> Iterator[None]:
        """While a question is open, what the session prints goes above it."""
        if self.terminal.writes_stdout:
            from prompt_toolkit.patch_stdout import patch_stdout

            with patch_stdout(raw=True):
                yield
        else:
            yield

    # ------------------------------------------------------------------ the main prompt

    def main_session(self) -> PromptSession[str]:
        if self._main is None:
            from prompt_toolkit.key_binding import DynamicKeyBindings, merge_key_bindings

            keys = merge_key_bindings([main_key_bindings(self.actions), DynamicKeyBindings(lambda: self.extra_keys())])
            self._main = self._session(
                multiline=True, key_bindings=keys, history=self.history, completer=self.completer,
                complete_while_typing=True, prompt_continuation=lambda width, line, wrap: " " * width,
                enable_history_search=False)
        return self._main

    async def read(self) -> str:
        """What the person sends next. Ctrl+D on an empty line raises EOFError, Ctrl+C on an
        empty line KeyboardInterrupt."""
        if self.lines is not None:
            answer = await self._read_line(self.prompt_text)
            self.lines_read += 1
            return answer
        session = self.main_session()
        while True:
            async with self._dialog_lock:  # a dialog in progress keeps the prompt away
                pass
            text, self.prefill = self.prefill, ""
            self._main_running = True
            self._main_done.clear()
            self._main_stop = None
            # A task, so a dialog or quitting can end it: cancelling works for the full
            # prompt and for the dumb terminal's (whose Application is not ``session.app``).
            task = asyncio.ensure_future(self._prompt_main(session, text))
            self._main_task = task
            try:
                got = await task
                if not isinstance(got, str):
                    raise got()
            except asyncio.CancelledError:
                if self._main_stop is None:
                    raise  # the line mode itself is being cancelled
                if self._main_stop is _TakenOff:
                    continue
                raise self._main_stop() from None
            finally:
                self._main_task = None
                self._main_running = False
                self._main_done.set()
                self.terminal.moved_to_new_line()
            self.lines_read += 1
            return got

    async def _prompt_main(self, session: PromptSession[str], text: str) -> str | type[BaseException]:
        """The prompt's answer, or the exception class of Ctrl+C/Ctrl+D: a KeyboardInterrupt
        must not escape a task (asyncio would stop the whole loop for it)."""
        try:
            with self._above():
                return await session.prompt_async(ANSI(self._style_prompt()), default=text)
        except (KeyboardInterrupt, EOFError) as exc:
            return type(exc)

    def _stop_main(self, why: type[BaseException]) -> bool:
        task = self._main_task
        if task is None or task.done():
            return False
        self._main_stop = why
        task.cancel()
        return True

    async def _read_line(self, question: str) -> str:
        """The next line of a piped stdin (no editing, no completion); EOFError at its end."""
        lines = self.lines
        assert lines is not None
        self.terminal.write(question)
        # A daemon thread: a quit while the pipe stays open must not wait for its next line.
        line, cut = await run_blocking(_capped_line, lines)
        if cut:
            self.terminal.write(f"\n(this line is over {PROMPT_INPUT_LIMIT // (1024 * 1024)} MB: only its "
                                "start is used)\n")
        if not line:
            self.terminal.write("\n")
            raise EOFError
        self.terminal.write(line if line.endswith("\n") else line + "\n")
        return line.rstrip("\n")

    def _style_prompt(self) -> str:
        return f"\x1b[1m{self.prompt_text}\x1b[22m" if self.terminal.colour else self.prompt_text

    def close_main(self) -> None:
        """End the main prompt as Ctrl+D would (the session is quitting)."""
        self._stop_main(EOFError)

    def editor_text(self) -> str:
        if self._main is not None and self._main_running:
            return self._main.default_buffer.text
        return self.prefill

    def set_editor_text(self, text: str) -> None:
        if self._main is not None and self._main_running:
            self._main.default_buffer.text = text
            self._main.default_buffer.cursor_position = len(text)
            self._main.app.invalidate()
        else:
            self.prefill = text

    def paste(self, text: str) -> None:
        if self._main is not None and self._main_running:
            self._main.default_buffer.insert_text(text)
            self._main.app.invalidate()
        else:
            self.prefill += text

    @contextlib.asynccontextmanager
    async def dialog(self) -> AsyncIterator[None]:
        """Room on the screen for one dialog: the main prompt steps aside if it is open."""
        async with self._dialog_lock:
            if self._main is not None and self._main_running:
                self.prefill = self._main.default_buffer.text
                if self._stop_main(_TakenOff):
                    await self._main_done.wait()
            yield

    # ------------------------------------------------------------------ dialogs

    async def _ask(self, session: PromptSession[Any], message: Callable[[], str], *, default: str = "",
                   timeout: float | None, signal: AbortSignal | None, cancel: object, title: str) -> object:
        """Run one question until it is answered, times out, or ``signal`` aborts it."""
        if signal is not None and getattr(signal, "aborted", False):
            return cancel
        if self.lines is not None:
            return await self._piped_answer(session, message(), default, cancel)
        self.asking = title
        loop = asyncio.get_running_loop()
        stopped = False

        async def ask() -> object:
            try:
                with self._above():
                    return await session.prompt_async(lambda: ANSI(message()), default=default,
                                                      refresh_interval=0.5 if timeout else 0)
            except (KeyboardInterrupt, EOFError):  # never out of a task: asyncio would stop the loop
                return cancel

        task = asyncio.ensure_future(ask())

        def stop() -> None:  # cancelled, not exited: the dumb terminal's prompt runs another Application
            nonlocal stopped
            if not task.done():
                stopped = True
                task.cancel()

        timer = loop.call_later(timeout, stop) if timeout else None
        unsubscribe = signal.add_listener(lambda: loop.call_soon_threadsafe(stop)) if signal is not None and hasattr(
            signal, "add_listener") else None
        try:
            return await task
        except asyncio.CancelledError:
            if not stopped:
                raise
            return cancel
        finally:
            self.asking = None
            if timer is not None:
                timer.cancel()
            if unsubscribe is not None:
                unsubscribe()
            self.terminal.moved_to_new_line()

    async def _piped_answer(self, session: PromptSession[Any], question: str, default: str, cancel: object) -> object:
        """A dialog answered by the next line of a piped stdin (an empty line or its end cancels)."""
        try:
            answer = await self._read_line(question)
        except EOFError:
            return cancel
        if session.app.key_bindings is not None and question.rstrip().endswith("[y/N]"):
            return answer.strip().lower() in ("y", "yes")
        return answer or default or cancel

    def _countdown(self, timeout: float | None) -> Callable[[], str]:
        if not timeout:
            return lambda: ""
        deadline = time.monotonic() + timeout
        return lambda: f"({max(0, round(deadline - time.monotonic()))}s) "

    def _question(self, title: str, tail: str, timeout: float | None) -> Callable[[], str]:
        countdown = self._countdown(timeout)
        bold = self.terminal.colour
        return lambda: (f"\x1b[1m{title}\x1b[22m" if bold else title) + f" {countdown()}{tail}"

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None) -> bool:
        """One key: y answers yes; n, Enter, Esc and Ctrl+C answer no."""
        async with self.dialog():
            if message:
                self.terminal.separate()
                self.terminal.line(message.rstrip("\n"))
            keys = KeyBindings()

            @keys.add("y")
            @keys.add("Y")
            def _yes(event: KeyPressEvent) -> None:
                event.current_buffer.text = "yes"  # stays on the screen after the question
                event.app.exit(result=True)

            @keys.add("n")
            @keys.add("N")
            @keys.add("enter")
            @keys.add("escape", eager=True)
            @keys.add("c-c")
            @keys.add("c-d")
            def _no(event: KeyPressEvent) -> None:
                event.current_buffer.text = "no"
                event.app.exit(result=False)

            @keys.add("<any>")
            def _ignore(event: KeyPressEvent) -> None:
                pass

            session = self._session(key_bindings=keys)
            answer = await self._ask(session, self._question(title, "[y/N] ", timeout), timeout=timeout,
                                     signal=signal, cancel=False, title=title)
            return bool(answer)

    async def text(self, title: str, *, default: str = "", placeholder: str | None = None, multiline: bool = False,
                   secret: bool = False, timeout: float | None = None, signal: AbortSignal | None = None) -> str | None:
        """A line (or, ``multiline``, several: Alt+Enter or Esc Enter ends them). Esc or Ctrl+C
        cancels with None."""
        async with self.dialog():
            keys = KeyBindings()

            @keys.add("escape", eager=not multiline)
            @keys.add("c-c")
            def _cancel(event: KeyPressEvent) -> None:
                event.app.exit(result=None)

            if multiline:
                @keys.add("escape", "enter")
                def _done(event: KeyPressEvent) -> None:
                    event.current_buffer.validate_and_handle()

                self.terminal.line(f"{title}  (Alt+Enter or Esc Enter to finish, Ctrl+C to cancel)")
                question = self._question("", "", timeout)
            else:
                hint = f"[{placeholder}] " if placeholder else ""
                question = self._question(title, hint, timeout)
            session = self._session(key_bindings=keys, multiline=multiline, is_password=secret)
            answer = await self._ask(session, question, default=default, timeout=timeout, signal=signal, cancel=None,
                                     title=title)
            return answer if isinstance(answer, str) else None

    async def choose(self, title: str, labels: list[str], *, timeout: float | None = None, signal: AbortSignal | None = None,
                     current: int | None = None, narrow: Callable[[str, list[int]], list[int]] | None = None,
                     limit: int = LIST_LIMIT) -> int | None:
        """The index of one of ``labels``, picked by number or narrowed by words (``narrow``:
        a search of the caller's own, default every word in the label); None when cancelled
        (Esc, Ctrl+C, an empty answer, the timeout or the signal)."""
        if not labels:
            return None
        narrow = narrow or _words_in(labels)
        shown = list(range(len(labels)))
        deadline = time.monotonic() + timeout if timeout else None
        while True:
            self._print_choices(title, labels, shown[:limit], current, len(shown) - limit)
            left = max(0.0, deadline - time.monotonic()) if deadline else None
            answer = await self.text("Number, or words to narrow the list:", timeout=left, signal=signal)
            if answer is None or not answer.strip():
                return None
            answer = answer.strip()
            if answer.isdigit():
                number = int(answer)
                if 1 <= number <= min(len(shown), limit):
                    return shown[number - 1]
                self.terminal.line(f"Choose 1 to {min(len(shown), limit)}.")
                continue
            narrowed = narrow(answer, shown)
            if len(narrowed) == 1:
                return narrowed[0]
            if not narrowed:
                self.terminal.line(f"Nothing matches {answer!r}.")
                continue
            shown = narrowed

    def _print_choices(self, title: str, labels: list[str], shown: list[int], current: int | None, more: int) -> None:
        self.terminal.separate()
        self.terminal.line(f"\x1b[1m{title}\x1b[22m" if self.terminal.colour else title)
        digits = len(str(len(shown)))
        for number, index in enumerate(shown, 1):
            mark = "  (current)" if index == current else ""
            self.terminal.line(f"  {number:>{digits}}. {labels[index]}{mark}")
        if more > 0:
            self.terminal.line(f"  … {more} more: type words to narrow the list")


def _words_in(labels: list[str]) -> Callable[[str, list[int]], list[int]]:
    def narrow(query: str, shown: list[int]) -> list[int]:
        words = query.lower().split()
        return [i for i in shown if all(w in labels[i].lower() for w in words)]

    return narrow


def _capped_line(stream: IO[str]) -> tuple[str, bool]:
    """The next line of ``stream`` up to :data:`PROMPT_INPUT_LIMIT` characters, and whether
    it was longer (the rest of it is read and dropped, so the next line starts clean)."""
    line = stream.readline(PROMPT_INPUT_LIMIT + 1)
    if len(line) <= PROMPT_INPUT_LIMIT or line.endswith("\n"):
        return line, False
    while True:
        rest = stream.readline(1 << 20)
        if not rest or rest.endswith("\n"):
            return line[:PROMPT_INPUT_LIMIT] + "\n", True
