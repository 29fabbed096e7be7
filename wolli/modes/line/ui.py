"""``ctx.ui`` in the line mode.

Dialogs are prompts (``select`` a numbered list, ``confirm`` one key, ``input`` a line,
``editor`` several lines), with ``timeout`` and abort signals honoured; ``notify`` prints a
line; statuses join the status line printed after each run; the editor text is the next
prompt's text; extension autocomplete providers join the prompt's completion. What has no
place in scrollback (custom components, widgets, footers, the editor component, themes
switched at run time) behaves as in the other non-TUI modes: ignored, ``custom()`` -> None.
Calls may come from a tool's worker thread: they hop onto the line mode's loop first.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ...ai.abort import AbortSignal
from ...extensions.ui import PLAIN_THEME, NullUI, option_label, option_value
from ..interactive.highlighting import AnsiTheme
from .output import LineOutput
from .prompts import Prompter

if TYPE_CHECKING:
    from ...extensions.context import ExtensionUI, UITheme
    from ...permissions.prompt import PermissionAnswer, PermissionRequest

R = TypeVar("R")


class LineUI:
    has_ui = True

    def __init__(self, output: LineOutput, prompter: Prompter) -> None:
        self.output = output
        self.prompter = prompter
        self.loop: asyncio.AbstractEventLoop | None = None  # set when the line mode starts
        self.autocomplete_providers: list[Callable[..., Any]] = []
        self._theme = AnsiTheme(output.spec)

    # ------------------------------------------------------------------ threads

    def _elsewhere(self) -> bool:
        try:
            return asyncio.get_running_loop() is not self.loop and self.loop is not None
        except RuntimeError:  # a plain worker thread
            return self.loop is not None

    def _call(self, fn: Callable[..., Any], *args: object) -> None:
        if self._elsewhere() and self.loop is not None:
            self.loop.call_soon_threadsafe(fn, *args)
        else:
            fn(*args)

    async def _on_loop(self, make: Callable[[], Coroutine[Any, Any, R]]) -> R:
        if self._elsewhere() and self.loop is not None:
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(make(), self.loop))
        return await make()

    # ------------------------------------------------------------------ dialogs

    async def select(self, title: str, options: Sequence[R], *, timeout: float | None = None, signal: AbortSignal | None = None) -> R | None:
        options = list(options)

        async def ask() -> R | None:
            index = await self.prompter.choose(title, [option_label(o) for o in options], timeout=timeout,
                                               signal=signal)
            return None if index is None else cast(R, option_value(options[index]))  # a dict option answers its value

        return await self._on_loop(ask)

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None) -> bool:
        return bool(await self._on_loop(lambda: self.prompter.confirm(title, message, timeout=timeout, signal=signal)))

    async def input(self, title: str, placeholder: str | None = None, *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        return await self._on_loop(lambda: self.prompter.text(title, placeholder=placeholder, timeout=timeout,
                                                              signal=signal))

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        return await self._on_loop(lambda: self.prompter.text(title, default=prefill or "", multiline=True,
                                                              timeout=timeout, signal=signal))

    async def ask_permission(self, request: PermissionRequest, *, signal: AbortSignal | None = None) -> PermissionAnswer:
        """The call printed in full, then a numbered choice; "always" asks for the rule to
        save (pre-filled, editable), "deny with a message" for the message."""
        from .permission_prompt import ask_permission

        return await self._on_loop(lambda: ask_permission(self.output, self.prompter, request, signal=signal))

    # ------------------------------------------------------------------ notices and state

    def notify(self, message: str, level: str = "info") -> None:
        self._call(self.output.notice, str(message), {"warn": "warning"}.get(level, level))

    def set_status(self, key: str, text: str | None) -> None:
        if text:
            self.output.statuses[key] = str(text)
        else:
            self.output.statuses.pop(key, None)

    def set_title(self, text: str) -> None:
        if self.output.terminal.colour:
            self._call(self.output.terminal.write, f"\x1b]0;{text}\x07")

    def set_editor_text(self, text: str) -> None:
        self._call(self.prompter.set_editor_text, str(text))

    def get_editor_text(self) -> str:
        return self.prompter.editor_text()

    def paste_to_editor(self, text: str) -> None:
        self._call(self.prompter.paste, str(text))

    def add_autocomplete_provider(self, factory: Callable[..., Any]) -> None:
        self.autocomplete_providers.append(factory)

    def open_url(self, url: str) -> None:
        from ..interactive.open_url import open_in_browser

        if not open_in_browser(url):
            self.notify(f"Open this link in a browser: {url}")

    def reset(self) -> None:
        """``/reload``: the old versions' completion providers and statuses go."""
        self.autocomplete_providers.clear()
        self.output.statuses.clear()

    @property
    def theme(self) -> UITheme:
        return self._theme if self.output.terminal.colour else PLAIN_THEME

    def set_theme(self, theme: object) -> dict[str, Any]:
        return {"success": False, "error": "the line mode uses the theme from settings; it cannot switch at run time"}

    # No place for these in scrollback: the headless modes' inert answers, on purpose.
    custom = NullUI.custom
    set_widget = NullUI.set_widget
    set_footer = NullUI.set_footer
    set_working_message = NullUI.set_working_message
    set_working_visible = NullUI.set_working_visible
    set_working_indicator = NullUI.set_working_indicator
    get_tools_expanded = NullUI.get_tools_expanded
    set_tools_expanded = NullUI.set_tools_expanded
    set_editor_component = NullUI.set_editor_component
    get_editor_component = NullUI.get_editor_component
    get_all_themes = NullUI.get_all_themes
    get_theme = NullUI.get_theme


if TYPE_CHECKING:
    _conforms: type[ExtensionUI] = LineUI
