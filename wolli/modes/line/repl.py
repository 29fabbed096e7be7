"""The line mode's loop: start the session, read a prompt, run it, print, repeat.

Between runs the prompt waits for input. While the agent works there is no prompt: the
answer streams into scrollback and the keyboard is watched for Esc or Ctrl+C, which stop the
run (a dialog an extension opens meanwhile takes the keyboard until it is answered). Ctrl+D
on an empty prompt, ``/quit`` or ``wolli.shutdown()`` end the session.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
import time
from collections.abc import Awaitable, Callable, Iterator
from typing import IO, TYPE_CHECKING, Any, TypeVar

from ...runtime.startup.request import StartupError, StartupRequest
from ..interactive import completion as sources
from .completer import SharedHistory, StackCompleter
from .output import LineOutput
from .prompts import Prompter
from .slash_commands import LineCommands
from .terminal import Terminal
from .ui import LineUI

if TYPE_CHECKING:
    from prompt_toolkit.input import Input
    from prompt_toolkit.key_binding import KeyBindings
    from prompt_toolkit.output import Output

    from ...extensions.registry import Shortcut
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession
    from ...runtime.startup.start import Startup

R = TypeVar("R")

QUIT_WINDOW_S = 1.0  # a second Ctrl+C on an empty prompt within this quits
ESC_FLUSH_S = 0.05  # a lone Esc is told from the start of a key sequence after this


class LineRepl:
    def __init__(self, request: StartupRequest, *, stream: IO[str] | None = None, input: Input | None = None,
                 output: Output | None = None, colour: bool | None = None, width: int | None = None,
                 resume: bool = False) -> None:
        from ...config.paths import agent_home, wolli_home
        from ...config.settings import Settings
        from ...config.themes import discover_themes
        from ..interactive import highlighting
        from ..interactive.prompt_history import PromptHistory

        self.request = request
        self.resume_first = resume
        settings = Settings(request.agent)  # read again by the host; the theme is needed first
        home = agent_home(request.agent)
        themes, self.theme_problems = discover_themes([wolli_home() / "themes", home / "themes"])
        spec = themes.get(str(settings.get("theme") or "dark")) or themes["dark"]
        highlighting.active_theme = spec
        self.terminal = Terminal(stream, colour=colour, width=width)
        self.output = LineOutput(self.terminal, spec, show_thinking=not settings.get("hideThinkingBlock"))
        piped = None
        if input is None:
            from prompt_toolkit.input import DummyInput, create_input
            from prompt_toolkit.output import create_output

            if sys.stdin.isatty():
                input = create_input()
                if output is None and not sys.stdout.isatty():  # `| tee log`: questions on the terminal
                    output = create_output(always_prefer_tty=True)
                # Else no output is given, so on TERM=dumb prompt_toolkit uses its basic prompt.
            else:  # prompts come line by line from a pipe: no keys to watch
                piped, input = sys.stdin, DummyInput()
        self.input = input
        history = SharedHistory(PromptHistory(home / "prompt-history.jsonl"))
        self.prompter = Prompter(self.terminal, input=input, output=output, history=history,
                                 completer=StackCompleter(self._completion_stack, self._report), lines=piped,
                                 actions={"s-tab": self._cycle_thinking, "c-p": self._cycle_model,
                                          "escape m": self._cycle_permission_mode})
        self.ui = LineUI(self.output, self.prompter)
        self.commands = LineCommands(self)
        self.startup: Startup | None = None
        self.quit_requested = False
        self._running: asyncio.Task[Any] | None = None
        self._last_ctrl_c = 0.0
        self._files: sources.ProjectFiles | None = None
        self._stacked: tuple[object, sources.ProviderStack] | None = None
        self._observed: Callable[[], None] | None = None
        # (what the bindings were built from, the bindings) for extension shortcuts
        self._shortcut_keys: tuple[tuple[tuple[str, int], ...], Any] | None = None
        self._reported_keys: set[str] = set()
        self.prompter.extra_keys = self._extension_keys

    # ------------------------------------------------------------------ the session

    @property
    def host(self) -> AgentHost | None:
        return self.startup.host if self.startup is not None else None

    @property
    def session(self) -> LiveSession | None:
        host = self.host
        if host is not None and host.active is not None:
            return host.active
        return self.startup.session if self.startup is not None else None

    async def run(self) -> int:
        self.ui.loop = asyncio.get_running_loop()
        # The keyboard stays raw from start to quit, between prompts too: keys typed ahead
        # then arrive as keys. A cooked tty in a gap (before a prompt attaches: on a dumb
        # terminal the prompt is printed before its reader starts) echoes them, turns Enter
        # into Ctrl+J (a new line here) and swallows Ctrl+D as end-of-file.
        with self._plain_output(), self._raw_keyboard():
            return await self._run()

    async def _run(self) -> int:
        from ...runtime.startup.start import start

        def before_start(session: LiveSession) -> None:
            session.services.on_active_session(self._on_active)  # the host, which follows replacements

        try:
            startup = self.startup = await start(self.request, ui=self.ui, observers=[self.output],
                                                 before_start=before_start)
        except StartupError as exc:
            for warning in exc.warnings:
                print(f"wolli: {warning}", file=sys.stderr)
            print(f"wolli: {exc}", file=sys.stderr)
            return exc.exit_code
        self.output.session, self.output.cwd = startup.session, startup.session.cwd
        self._banner(startup)
        startup.host.start_auto_reload()
        self._mcp_start = asyncio.ensure_future(startup.host.start_mcp(interactive=True))  # in the background
        with self._signals():
            if self.resume_first:
                await self.submit("/resume")
            for prompt in startup.prompts:  # `wolli --plain "fix the test"` starts with that
                await self.submit(prompt.text, images=prompt.images, typed=False)
            while not self._should_quit():
                try:
                    text = await self.prompter.read()
                except EOFError:
                    break
                except KeyboardInterrupt:
                    if time.monotonic() - self._last_ctrl_c < QUIT_WINDOW_S:
                        break
                    self._last_ctrl_c = time.monotonic()
                    self.output.notice("Press Ctrl+C again (or Ctrl+D) to quit.")
                    continue
                await self.submit(text)
        await startup.host.shutdown("quit")
        return 0

    def _should_quit(self) -> bool:
        return self.quit_requested or (self.host is not None and self.host.shutdown_requested)

    def _banner(self, startup: Startup) -> None:
        from ...__about__ import __version__

        session, host = self.session or startup.session, startup.host
        model = session.model
        name = f"{model.provider}/{model.id}" if model is not None else "no model"
        keys = "Enter sends · Ctrl+J new line · Esc stops the agent · Ctrl+D quits · /help"
        self.terminal.line(self.output.fg("muted", f"wolli {__version__} · {name} · {session.cwd}"))
        if not host.settings.get("quietStartup"):
            from ..interactive.startup_summary import startup_summary

            # Its first line names the full-screen app's keys; the line mode's follow instead.
            for line in startup_summary(host, session).split("\n")[1:]:
                self.terminal.line(self.output.fg("dim", line))
        self.terminal.line(self.output.fg("dim", keys))
        for problem in [*self.theme_problems, *startup.warnings]:
            self.output.notice(problem, "warning")
        self._extension_keys()  # shortcuts that cannot fire here are said now
        if model is None:
            self.output.notice(host.no_model_help(), "warning")

    def _on_active(self, new: LiveSession | None, old: LiveSession | None) -> None:
        """Another session became active (new, resume, fork): print its events."""
        if self._observed is not None:
            self._observed()
            self._observed = None
        self.output.session = new
        if new is not None and old is not None:  # the first one is observed by start()
            self._observed = new.observe(self.output)
            self.output.cwd = new.cwd
            if new.messages:
                self.output.notice(f"Session {new.session_manager.get_session_name() or new.session_id[:8]}:")
                self.output.replay(list(new.messages))

    def apply_theme(self, name: str) -> None:
        from ...config.paths import agent_home, wolli_home
        from ...config.themes import discover_themes
        from ..interactive import highlighting

        themes, _ = discover_themes([wolli_home() / "themes", agent_home(self.request.agent) / "themes"])
        spec = themes.get(name)
        if spec is None:
            self.output.notice(f"No theme named {name!r}.", "warning")
            return
        highlighting.active_theme = spec
        self.output.set_theme(spec)

    # ------------------------------------------------------------------ input

    async def submit(self, text: str, *, images: list[Any] | None = None, typed: bool = True) -> None:
        """What the person sent: a built-in command, ``!cmd``, or a prompt (extension commands,
        templates and skills included). A failure is printed; the session goes on."""
        if not text.strip():
            return
        session = self.session
        try:
            if await self.commands.run(text):
                return
            if session is None:
                raise RuntimeError("the session has not started yet")
            stripped = text.strip()
            command = stripped.lstrip("!").strip()
            if stripped.startswith("!") and command:
                await self.while_working(session.run_bash(command, exclude_from_context=stripped.startswith("!!")))
                return
            self.output.typed = 1 if typed else 0
            await self.while_working(session.prompt(text, images))
        except Exception as exc:
            self.output.notice(str(exc) or type(exc).__name__, "error")
        finally:
            self.output.typed = 0

    async def while_working(self, work: Awaitable[R]) -> R:
        """Await ``work`` with Esc and Ctrl+C stopping the agent."""
        task = asyncio.ensure_future(work)
        self._running = task
        try:
            with self._abort_keys():
                return await task
        finally:
            self._running = None

    def abort(self) -> None:
        session = self.session
        if session is None:
            return
        steering, follow_up = session.clear_queue()
        session.abort()
        session.abort_bash()
        queued = [*steering, *follow_up]
        if queued:
            self.prompter.set_editor_text("\n".join(queued))

    @contextlib.contextmanager
    def _plain_output(self) -> Iterator[None]:
        """On TERM=dumb not one escape byte reaches the terminal: prompt_toolkit's basic
        prompt prints plain text, but making a PromptSession resets the cursor of its default
        output (ESC[?12l ESC[?25h) all the same, so the session's default output is a plain
        text one there."""
        import os

        if self.prompter.output is not None or self.prompter.lines is not None or \
                os.environ.get("TERM", "") not in ("dumb", "unknown"):
            yield
            return
        from prompt_toolkit.application import create_app_session
        from prompt_toolkit.output.plain_text import PlainTextOutput

        with create_app_session(input=self.input, output=PlainTextOutput(sys.stdout)):
            yield

    @contextlib.contextmanager
    def _raw_keyboard(self) -> Iterator[None]:
        try:
            raw = self.input.raw_mode()
        except Exception:  # no terminal to switch
            yield
            return
        with raw:
            yield

    @contextlib.contextmanager
    def _abort_keys(self) -> Iterator[None]:
        """While work runs, Esc and Ctrl+C stop it; every other key is typed ahead: the next
        prompt gets it as pressed (Backspace edits, Enter sends), as in a shell."""
        from prompt_toolkit.input.typeahead import store_typeahead
        from prompt_toolkit.keys import Keys

        inp = self.input
        loop = asyncio.get_running_loop()
        flush: list[asyncio.TimerHandle] = []

        def keys_pressed(keys: list[Any]) -> None:
            ahead = []
            for key in keys:
                if key.key in (Keys.Escape, Keys.ControlC):
                    self.abort()
                elif key.key != Keys.CPRResponse:  # a terminal's answer, not a key
                    ahead.append(key)
            if ahead:
                store_typeahead(inp, ahead)

        def flush_pending() -> None:
            keys_pressed(inp.flush_keys())

        def readable() -> None:
            keys_pressed(inp.read_keys())
            if inp.closed:
                return
            for handle in flush:
                handle.cancel()
            flush[:] = [loop.call_later(ESC_FLUSH_S, flush_pending)]

        try:
            raw, attached = inp.raw_mode(), inp.attach(readable)
        except Exception:  # no keyboard to watch (closed stdin): the run goes on without
            yield
            return
        with raw, attached:
            try:
                yield
            finally:
                for handle in flush:
                    handle.cancel()

    @contextlib.contextmanager
    def _signals(self) -> Iterator[None]:
        """SIGINT stops a run (or, idle, quits) instead of killing the loop; SIGTERM and SIGHUP
        stop the run and quit, saving the session. Whatever holds the process after a signal
        that quits cannot keep it past :data:`..common.signals.EXIT_GRACE_S`."""
        from ..common.signals import SignalRoute

        def terminate(number: int) -> None:
            route.arm_exit(number)
            self.quit_requested = True
            self.abort()
            self.prompter.close_main()

        def handle(number: int) -> None:
            if number != signal.SIGINT:
                terminate(number)
            elif self._running is not None:  # only when keys are not read raw (a piped stdin)
                self.abort()
            else:
                terminate(number)

        route = SignalRoute(asyncio.get_running_loop(), handle, quit_on=("SIGTERM", "SIGHUP"))
        with route:
            yield

    async def _cycle_thinking(self) -> None:
        """Shift+Tab: the next thinking level (printed by its event)."""
        from ..interactive.commands.model import cycle_thinking

        if self.session is not None and await cycle_thinking(self.session) is None:
            self.output.notice("This model does not think before answering.")

    async def _cycle_permission_mode(self) -> None:
        """Alt+M: the next permission mode (printed by its event)."""
        from ..interactive.commands.permissions import cycle_mode

        if self.session is not None:
            await cycle_mode(self.session)

    async def _cycle_model(self) -> None:
        """Ctrl+P: the next model of settings ``enabledModels`` (printed by its event)."""
        from ..interactive.commands.model import cycle_model

        if self.host is not None:
            await cycle_model(self.commands.context(), 1)

    # ------------------------------------------------------------------ extension shortcuts

    def _extension_keys(self) -> KeyBindings | None:
        """The prompt's bindings for extension shortcuts, built again when they change (a
        reload); each shortcut that cannot fire here is reported once."""
        host = self.host
        if host is None:
            return None
        shortcuts = host.extensions.registry.shortcuts
        stamp = tuple((key, id(s.handler)) for key, s in shortcuts.items())
        if self._shortcut_keys is None or self._shortcut_keys[0] != stamp:
            from ..interactive.hotkeys import builtin_keys, shortcut_problems
            from .shortcuts import shortcut_bindings

            bindings, problems = shortcut_bindings(shortcuts, builtin_keys(), self._run_shortcut)
            self._shortcut_keys = (stamp, bindings)
            for problem in [*shortcut_problems(shortcuts, kitty=False), *problems]:
                if problem not in self._reported_keys:
                    self._reported_keys.add(problem)
                    self.output.notice(problem, "warning")
        return self._shortcut_keys[1]

    async def _run_shortcut(self, shortcut: Shortcut) -> None:
        from ..interactive.hotkeys import run_shortcut

        session = self.session
        if session is None:
            return
        failed = await run_shortcut(shortcut, session.handler_context(), session.services.home)
        if failed is not None:
            self.output.notice(failed, "error")

    # ------------------------------------------------------------------ completion

    def _completion_stack(self) -> sources.ProviderStack:
        """The TUI's provider stack: built-in sources under the extensions' providers; built
        once per folder and set of providers (a factory may preload data)."""
        session = self.session
        cwd = session.cwd if session is not None else self.request.cwd
        factories = list(self.ui.autocomplete_providers)
        key = (cwd, tuple(id(f) for f in factories))
        if self._stacked is None or self._stacked[0] != key:
            if self._files is None or self._files.cwd != cwd:
                self._files = sources.ProjectFiles(cwd)
            builtin = sources.BuiltinCompletion(self._command_items, self._files, self._argument_items, cwd,
                                                lambda: self.host.mcp.resource_items() if self.host and self.host.mcp else [])
            self._stacked = (key, sources.stack(builtin, factories, self._provider_failed))
        return self._stacked[1]

    def _command_items(self) -> list[dict[str, Any]]:
        return self.commands.items() if self.host is not None else []

    async def _argument_items(self, name: str, prefix: str) -> object:
        return await self.commands.argument_items(name, prefix) if self.host is not None else None

    def _report(self, text: str) -> None:
        self.output.notice(text, "error")

    def _provider_failed(self, factory: object, exc: Exception) -> None:
        """An autocomplete provider factory raised: one line naming its extension, the
        traceback in the extension log."""
        from ...extensions.errors import failure_line, log_failure

        host = self.host
        owner = host.extensions.owner_of(factory) if host is not None else "extension"
        log_failure(host.home if host is not None else None, owner, sources.PROVIDER_FAILED, exc)
        self._report(failure_line(owner, sources.PROVIDER_FAILED, exc))


def run_line(request: StartupRequest, *, resume: bool = False) -> int:
    """``wolli --plain``: the line mode until the person quits."""
    return asyncio.run(LineRepl(request, resume=resume).run())
