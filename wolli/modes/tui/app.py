"""The full-screen app: layout, keys, and the surface ``ctx.ui`` and the adapter draw on.

Thin by design: the runtime link is :mod:`.controller`, events become updates in
:mod:`.adapter`, ``ctx.ui`` is :mod:`.ui_bridge`, and each part of the screen is a widget
under ``widgets/``.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual import events
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widget import Widget

from ...config.themes import ThemeSpec, discover_themes
from ...runtime.startup.request import StartupRequest
from ..interactive import highlighting
from ..interactive.highlighting import AnsiTheme
from ..interactive.prompt_history import PromptHistory
from .adapter import EventAdapter
from .controller import TuiController
from .editor_completion import EditorCompletion
from .front import TuiFront
from .palette import WolliCommands
from .rendering import as_renderable, guard_widget
from .row_context import RenderContext
from .surface import ScreenSurface
from .terminal_keys import KeyboardProtocol
from .theming import to_textual_theme
from .ui_bridge import TuiUI
from .widgets.extension_slots import ExtensionSlot
from .widgets.footer_bar import FooterBar, git_branch
from .widgets.prompt_editor import PromptEditor
from .widgets.queued_messages import QueuedMessages
from .widgets.simple_messages import InfoView, NoticeView
from .widgets.transcript import Transcript
from .widgets.working_row import WorkingRow

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.driver import Driver
    from textual.notifications import SeverityLevel

    from ...agent.messages import AgentMessage, CustomMessage
    from ...runtime.events import SessionEvent
    from ..common.signals import SignalRoute
    from ..interactive.client_runtime import ClientRuntime
    from .compositor import MainScreen

# Makes the runtime the app drives (default: in this process, :class:`TuiController`).
RuntimeFactory = Callable[["WolliApp", StartupRequest], "ClientRuntime"]
QUIT_WINDOW_S = 1.0  # a second Ctrl+C within this quits
REWIND_WINDOW_S = 0.8  # a second Esc within this, on an empty editor while idle, opens /rewind
KEYMAP_IDS = ("app.interrupt", "app.clear", "app.exit", "app.tools.expand", "app.thinking.toggle",
              "app.thinking.cycle", "app.editor.external", "app.transcript.earlier", "app.transcript.pageUp",
              "app.transcript.pageDown", "app.transcript.end", "app.model.select", "app.model.cycleForward",
              "app.model.cycleBackward", "app.commandPalette", "app.session.new", "app.session.tree",
              "app.session.fork", "app.session.resume", "app.permissions.cycle")
# App keys that belong to the main screen: a dialog or picker on top gets the key instead.
MAIN_SCREEN_ACTIONS = {"clear_or_quit", "quit_if_empty", "toggle_tools", "toggle_thinking", "cycle_thinking",
                       "external_editor", "select_model", "cycle_model", "slash", "command_palette",
                       "show_earlier", "page_transcript", "follow_transcript", "cycle_permission_mode"}
KEYBOARD_ANSWER_S = 1.0  # how long the terminal may take to say whether it speaks the kitty protocol


class WolliApp(App[int]):
    CSS_PATH = "tui.tcss"
    COMMANDS = {WolliCommands}
    BINDINGS = [
        Binding("escape", "interrupt", "Interrupt", show=False, id="app.interrupt"),
        Binding("ctrl+c", "clear_or_quit", "Clear", show=False, priority=True, id="app.clear"),
        Binding("ctrl+d", "quit_if_empty", "Quit", show=False, priority=True, id="app.exit"),
        Binding("ctrl+o", "toggle_tools", "Expand tools", show=False, priority=True, id="app.tools.expand"),
        Binding("ctrl+t", "toggle_thinking", "Thinking", show=False, priority=True, id="app.thinking.toggle"),
        Binding("shift+tab", "cycle_thinking", "Thinking level", show=False, priority=True, id="app.thinking.cycle"),
        Binding("ctrl+g", "external_editor", "Editor", show=False, priority=True, id="app.editor.external"),
        # The transcript scrolls from the editor (which would take PageUp/PageDown itself).
        Binding("ctrl+home", "show_earlier", "Earlier", show=False, priority=True, id="app.transcript.earlier"),
        Binding("pageup", "page_transcript(-1)", "Page up", show=False, priority=True, id="app.transcript.pageUp"),
        Binding("pagedown", "page_transcript(1)", "Page down", show=False, priority=True,
                id="app.transcript.pageDown"),
        Binding("ctrl+end", "follow_transcript", "End", show=False, priority=True, id="app.transcript.end"),
        Binding("ctrl+l", "select_model", "Model", show=False, id="app.model.select"),
        Binding("ctrl+p", "cycle_model(1)", "Next model", show=False, id="app.model.cycleForward"),
        Binding("ctrl+shift+p", "cycle_model(-1)", "Previous model", show=False, id="app.model.cycleBackward"),
        Binding("ctrl+s,f1", "command_palette", "Commands", show=False, id="app.commandPalette"),
        Binding("alt+m", "cycle_permission_mode", "Permission mode", show=False, priority=True,
                id="app.permissions.cycle"),
        # No default keys (as in pi): keybindings.json gives them one; F21-F24 stand in until then.
        Binding("f21", "slash('/new')", show=False, id="app.session.new"),
        Binding("f22", "slash('/tree')", show=False, id="app.session.tree"),
        Binding("f23", "slash('/fork')", show=False, id="app.session.fork"),
        Binding("f24", "slash('/resume')", show=False, id="app.session.resume"),
    ]

    def __init__(self, request: StartupRequest, *, agent_home: Path | None = None,
                 themes_dirs: list[Path] | None = None, theme_name: str = "dark",
                 hide_thinking: bool = False, runtime: RuntimeFactory | None = None) -> None:
        super().__init__()
        from .terminal_guard import install

        install()  # no control character in any drawn text reaches the terminal
        self.request = request
        self.agent_home = agent_home  # logs/extensions.log takes the tracebacks of extension code
        self.keyboard = KeyboardProtocol()  # whether the terminal speaks the kitty keyboard protocol
        self._reported_keys: set[str] = set()  # shortcut problems already shown
        self.ui = TuiUI(self)
        self.front = TuiFront(self)
        # The runtime behind the screen: in this process, or a server's session (``wolli attach``).
        self.controller: ClientRuntime = (runtime or TuiController)(self, request)
        self.adapter = EventAdapter(self)
        self.render_context = RenderContext(self)
        self.themes_dirs = list(themes_dirs or [])
        self.themes, self.theme_problems = discover_themes(self.themes_dirs)
        self.theme_spec: ThemeSpec = self.themes.get(theme_name) or self.themes["dark"]
        self.ui_theme = AnsiTheme(self.theme_spec)
        self.tools_expanded = False
        # Thinking shows in full unless hideThinkingBlock starts it collapsed; Ctrl+T toggles.
        self.thinking_visible = not hide_thinking
        self.history = PromptHistory(agent_home / "prompt-history.jsonl" if agent_home else None)
        self.transcript = Transcript(id="transcript")
        self.working = WorkingRow()
        self.queued = QueuedMessages()
        self.slot_above = ExtensionSlot("above_editor")
        self.slot_below = ExtensionSlot("below_editor")
        self.editor: PromptEditor = PromptEditor(self.history)  # or an extension's CustomEditor
        self.completion = EditorCompletion(self)
        self.surface = ScreenSurface(self)
        self.editor_area = Vertical(id="editor-area")  # height: auto in tui.tcss
        self.footer = FooterBar()
        self.footer_area = Vertical(id="footer-area")
        self.custom_widget: Widget | None = None
        self._last_ctrl_c = 0.0
        self._last_escape = 0.0
        self._printed = ""  # a captured print line not yet ended
        self._signal_route: SignalRoute | None = None  # SIGINT/SIGTERM/SIGHUP while the app runs (on_mount)
        self.signal_exit_code: int | None = None
        for spec in self.themes.values():
            self.register_theme_spec(spec)
        self._start_with_theme(f"wolli-{self.theme_spec.name}")
        highlighting.active_theme = self.theme_spec
        self._apply_keymap()

    _theme_started = False  # the app's own theme is in force (_start_with_theme)

    def get_css_variables(self) -> dict[str, str]:
        # App.__init__ makes its stylesheet with the default theme's variables (a whole
        # colour system generated); _start_with_theme replaces them before anything is parsed.
        return super().get_css_variables() if self._theme_started else {}

    def get_driver_class(self) -> type[Driver]:
        from .terminal_driver import driver_for_this_terminal

        return driver_for_this_terminal(super().get_driver_class())

    def get_default_screen(self) -> MainScreen:
        from .compositor import MainScreen

        return MainScreen(id="_default")

    def notify(self, message: str, *, title: str = "", severity: SeverityLevel = "information", timeout: float | None = None,
               markup: bool = False) -> None:
        """A toast. Literal by default: its text often holds a model name, a path or an error
        message, where ``[`` is a character, not markup."""
        super().notify(message, title=title, severity=severity, timeout=timeout, markup=markup)

    def register_theme_spec(self, spec: ThemeSpec) -> None:
        self.register_theme(to_textual_theme(spec))

    def _start_with_theme(self, name: str) -> None:
        """The theme in force from the first frame. Setting ``self.theme`` would run Textual's
        watcher, which queues a second parse of every stylesheet (~6 % of the start-up's CPU)
        for a change nobody sees; nothing is parsed yet, so giving the stylesheet the theme's
        variables now is all the watcher's work that is needed. Later switches set
        ``self.theme`` as usual."""
        self.set_reactive(App.theme, name)
        dark = self.current_theme.dark
        classes = {c: False for c in self.classes if c.startswith("-theme-")}
        self.update_classes({**classes, f"-theme-{name}": True, "-dark-mode": dark, "-light-mode": not dark},
                            update=False)
        self._refresh_truecolor_filter(self.ansi_theme)
        self._theme_started = True
        self.stylesheet.set_variables(self.get_css_variables())

    def _apply_keymap(self) -> None:
        """Bindings follow keybindings.json (pi's ids or the short names; see docs/tui.md)."""
        from ...config.keybindings import current_keys

        keys = current_keys()
        self.set_keymap({action: ",".join(keys[action]) for action in KEYMAP_IDS if keys.get(action)})

    def compose(self) -> ComposeResult:
        yield self.transcript
        yield self.working
        yield self.queued
        yield self.slot_above
        with self.editor_area:  # the completion menu joins it with its first suggestions
            yield self.editor
        yield self.slot_below
        with self.footer_area:
            yield self.footer

    def on_mount(self) -> None:
        import asyncio

        from . import terminal_keys

        self.keyboard.bind(asyncio.get_running_loop())
        if not terminal_keys.ask(self):  # no terminal to ask (a test's headless driver)
            self.keyboard.attributes()
        self.footer.token_colors = dict(self.theme_spec.colors)
        self.footer.data.cwd = self.editor.cwd = os.path.abspath(self.request.cwd)
        self.footer.data.branch = git_branch(self.request.cwd)
        # The model asked for, until the session (started after this frame) names the real one.
        self.footer.data.model = self.request.model or "starting…"
        self.footer.refresh_data()
        self.editor.focus()
        for problem in self.theme_problems:
            self.add_notice(problem, "warning")
        # print() from extensions (or anything else in this process) must not scribble over
        # the screen: it arrives as Print events and becomes notices in the transcript.
        self.begin_capture_print(self, stdout=True, stderr=True)
        self._install_signal_handlers()
        # The runtime starts once the first frame is on screen (its import is the slow part);
        # anything typed meanwhile waits for it. Queued on the screen, behind its first layout
        # and paint (already asked for): call_after_refresh would wait for the next tick of the
        # frame timer as well, ~16 ms of nothing.
        self.screen.call_later(lambda: self.run_worker(self.controller.start(), name="startup"))
        if self.themes_dirs:
            from .theme_watch import watch_themes

            self.run_worker(watch_themes(self, self.themes_dirs, after=self.session_drawn), name="themes",
                            group="themes")

    async def session_drawn(self) -> None:
        """Returns once the session is up and the screen showing it has been drawn: work the
        first prompt does not need waits for this rather than delay the footer."""
        import asyncio

        await self.controller.ready.wait()
        drawn: asyncio.Future[None] = asyncio.get_running_loop().create_future()

        def done() -> None:
            if not drawn.done():
                drawn.set_result(None)

        self.call_after_refresh(done)
        await drawn

    def exit(self, result: Any = None, return_code: int = 0, message: Any = None) -> None:
        """Every way out (keys, /quit, a signal, an extension) comes here: the runtime
        settles first, since closing cancels the workers and a run among them would lose
        the part of its answer already on screen."""
        settling = self.controller.settle_before_exit()
        if settling is None:
            super().exit(result, return_code, message)
            return

        async def settle_then_exit() -> None:
            try:
                await settling
            finally:
                super(WolliApp, self).exit(result, return_code, message)

        self.run_worker(settle_then_exit(), group="exit")

    async def on_unmount(self) -> None:
        await self.controller.shutdown()
        if self._signal_route is not None:  # from here the default actions end the process
            self._signal_route.__exit__()

    def on_print(self, event: events.Print) -> None:
        self._printed += event.text
        *lines, self._printed = self._printed.split("\n")
        for line in lines:
            if line.strip():
                self.add_notice(line, "warning" if event.stderr else "info")

    def _install_signal_handlers(self) -> None:
        """SIGTERM, SIGHUP (a closed terminal) and a SIGINT sent from outside (Ctrl+C is a
        key here) end the run like Esc, save, then quit. After a hangup the terminal is gone
        and Textual's writer can block for good on it (seen under tmux kill-server), and a
        tool thread may be stuck in the kernel: the route ends the process regardless once
        its grace period is over (everything complete is on disk already)."""
        import asyncio

        from ..common.signals import SignalRoute

        self._signal_route = SignalRoute(asyncio.get_running_loop(), self._on_terminate).__enter__()

    def _on_terminate(self, number: int) -> None:
        self.signal_exit_code = 128 + number  # the process's status, whatever exits the app after
        self.controller.abort()
        self.exit(128 + number)

    # ------------------------------------------------------------------ input

    def on_prompt_editor_submitted(self, message: PromptEditor.Submitted) -> None:
        self._send(message.text, follow_up=False, images=message.images)

    def on_prompt_editor_follow_up(self, message: PromptEditor.FollowUp) -> None:
        self._send(message.text, follow_up=True, images=message.images)

    def on_prompt_editor_image_pasted(self, message: PromptEditor.ImagePasted) -> None:
        from .image_attach import attach_pasted_image

        self.run_worker(attach_pasted_image(self, message.path), group="image")

    def on_prompt_editor_completion_wanted(self, message: PromptEditor.CompletionWanted) -> None:
        self.completion.wanted(message.force)

    async def on_prompt_editor_completion_key(self, message: PromptEditor.CompletionKey) -> None:
        await self.completion.key(message.action)

    def _send(self, text: str, follow_up: bool, images: list[Any] | None = None) -> None:
        if text.strip() in ("/quit", "/exit"):  # at once, even before the session is up
            self.exit(0)
            return
        self.transcript.follow()  # what was sent, and its answer, are what to see now
        self.run_worker(self.controller.send(text, follow_up=follow_up, images=images or None), group="prompt")

    def run_slash_command(self, text: str) -> None:
        """A command chosen in the palette or by a key: as if typed, editor untouched."""
        self.transcript.follow()
        self.run_worker(self.controller.run_command(text), group="prompt")

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in MAIN_SCREEN_ACTIONS and len(self.screen_stack) > 1:
            return False  # a dialog is open: its keys first (Ctrl+D deletes in a picker, ...)
        return True

    async def on_event(self, event: events.Event) -> None:
        # Extension shortcuts are looked at before the app's bindings and the editor see the
        # key, so Alt+letter fires instead of typing the letter and F6 is not the editor's.
        if isinstance(event, events.Key) and not event.is_forwarded and self._run_shortcut(event.key):
            return
        await super().on_event(event)

    def _run_shortcut(self, key: str) -> bool:
        if len(self.screen_stack) > 1:  # a dialog or picker is open: its keys first
            return False
        shortcut = self.controller.shortcut(key)
        if shortcut is None:
            return False
        self.run_worker(self.controller.run_shortcut(shortcut), group="shortcut")
        return True

    async def check_shortcuts(self) -> None:
        """Report each extension shortcut that will not fire as written: a built-in key has it
        (the built-in wins) or this terminal cannot send it (without the kitty protocol)."""
        from ..interactive.hotkeys import shortcut_problems

        host = self.controller.host
        if host is None:
            return
        kitty = await self.keyboard.known(KEYBOARD_ANSWER_S)
        for problem in shortcut_problems(host.extensions.registry.shortcuts, kitty=kitty):
            if problem not in self._reported_keys:
                self._reported_keys.add(problem)
                self.add_notice(problem, "warning")

    # ------------------------------------------------------------------ actions

    def action_interrupt(self) -> None:
        session = self.controller.session
        if session is None:
            return
        if session.is_idle() and not self.queued.display:
            if self.controller.stop_user_command():  # a !cmd, not the first Esc of Esc Esc
                self._last_escape = 0.0
                return
            now = time.monotonic()
            if not self.editor.text and now - self._last_escape < REWIND_WINDOW_S:
                self._last_escape = 0.0
                self.run_slash_command("/rewind")
            else:
                self._last_escape = now
            return
        restored = self.controller.abort()
        if restored:
            current = self.editor.text
            self.surface.set_editor_text("\n".join([*restored, current] if current else restored))

    def action_clear_or_quit(self) -> None:
        now = time.monotonic()
        if self.editor.text:
            self.editor.clear_all()
            self._last_ctrl_c = 0.0
        elif now - self._last_ctrl_c < QUIT_WINDOW_S:
            self.exit(0)
        else:
            self.notify("Press Ctrl+C again to quit", timeout=QUIT_WINDOW_S)
            self._last_ctrl_c = now

    def action_quit_if_empty(self) -> None:
        if not self.editor.text:
            self.exit(0)

    def action_toggle_tools(self) -> None:
        self.surface.set_tools_expanded(not self.tools_expanded)

    def action_toggle_thinking(self) -> None:
        self.set_thinking_visible(not self.thinking_visible)

    def set_thinking_visible(self, visible: bool) -> None:
        from .widgets.assistant_message import AssistantMessageView

        self.thinking_visible = visible
        for view in self.query(AssistantMessageView):
            view.set_thinking_visible(visible)

    def action_select_model(self) -> None:
        self.run_slash_command("/model")

    async def action_cycle_model(self, step: int) -> None:
        self.run_worker(self.controller.cycle_model(step), group="prompt")

    def action_slash(self, text: str) -> None:
        self.run_slash_command(text)

    def action_cycle_permission_mode(self) -> None:
        self.run_worker(self.controller.cycle_permission_mode(), group="prompt")

    async def action_cycle_thinking(self) -> None:
        level = await self.controller.cycle_thinking_level()
        if level is None:
            self.notify("This model has no thinking levels", severity="warning")
        self.refresh_footer()

    def action_show_earlier(self) -> None:
        self.transcript.to_top()

    def action_page_transcript(self, pages: int) -> None:
        self.transcript.page(pages)

    def action_follow_transcript(self) -> None:
        self.transcript.follow()

    async def action_external_editor(self) -> None:
        from .external_editor import edit_in_external_editor

        text = await edit_in_external_editor(self, self.editor.text)
        if text is not None:
            self.surface.set_editor_text(text)

    # ------------------------------------------------------------------ what the adapter calls

    def add_notice(self, text: str, level: str = "info") -> None:
        build = partial(NoticeView, text, level)
        self.transcript.add(build(), build)

    def add_info(self, title: str, text: str) -> None:
        build = partial(InfoView, title, text)
        self.transcript.add(build(), build)

    def refresh_footer(self) -> None:
        from .footer_data import fill_footer

        fill_footer(self.footer.data, self.controller.figures())
        self.footer.refresh_data()

    def on_session_started(self, event: SessionEvent) -> None:
        self.refresh_footer()
        if getattr(event, "reason", None) == "reload":  # new versions may bring new shortcuts
            self.run_worker(self.check_shortcuts(), group="keys")

    def reload_transcript(self) -> None:
        """Show the active session's conversation from the start (resume, switch, tree)."""
        session = self.controller.session
        self.adapter.reset()
        self.transcript.clear_all()
        if session is not None:
            self.transcript.add_lazy(self.adapter.history_builders(list(session.messages)))
        self.refresh_footer()

    def fill_in_history(self, first: object) -> None:
        """The whole context of a session shown from its last messages is built: the
        messages before ``first`` (the oldest row shown) go above the rows there."""
        session = self.controller.session
        if session is None:
            return
        messages = session.messages
        start = next((index for index, message in enumerate(messages) if message is first), None)
        if start is None:  # the conversation changed under the rows: show it again
            self.reload_transcript()
        elif start:
            self.prepend_history(list(messages[:start]))

    def expect_history(self, count: int, fetch: Callable[[], None]) -> None:
        """``count`` older messages of the shown conversation are still elsewhere (an attached
        client has the tail); ``fetch`` asks for a page of them, scrolling up calls it."""
        self.transcript.expect_earlier(count, fetch)

    def prepend_history(self, messages: list[AgentMessage], *, unfetched: int = 0) -> None:
        """Older messages of the shown conversation arrived (an attached client pages them in):
        they go above the rows already there, built when scrolled to; ``unfetched`` are still
        to come."""
        self.transcript.prepend_lazy(self.adapter.history_builders(messages), unfetched=unfetched)

    def extension_failed(self, owner: str, what: str, exc: BaseException) -> Text:
        """Extension code failed while drawing: the traceback goes to the extension log, the
        one line returned is shown in place of what it would have drawn."""
        from ...extensions.errors import failure_line, log_failure

        log_failure(self.agent_home, owner, what, exc)
        return Text(failure_line(owner, what, exc), style=self.theme_spec.color("error") or "red")

    def render_custom_message(self, message: CustomMessage) -> tuple[RenderableType | Widget | None, Text | None]:
        """A custom message by its extension's renderer: (what it drew, or None for the
        built-in look; the error line when the renderer failed)."""
        host = self.controller.host
        renderer = host.extensions.registry.renderers.get(message.custom_type) if host is not None else None
        if host is None or renderer is None:
            return None, None
        owner = host.extensions.registry.renderer_owners.get(message.custom_type, "extension")
        what = f"the renderer of {message.custom_type!r} messages"
        try:
            value = renderer(message, {"expanded": self.tools_expanded}, self.ui_theme)
        except Exception as exc:
            return None, self.extension_failed(owner, what, exc)
        if isinstance(value, Widget):
            return guard_widget(value, lambda exc: self.extension_failed(owner, what, exc)), None
        return as_renderable(value, lambda exc: self.extension_failed(owner, what, exc)), None
