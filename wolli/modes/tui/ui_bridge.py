"""``ctx.ui`` in the full-screen app: every member of :class:`~wolli.extensions.context.ExtensionUI`, on Textual.

Dialogs are modal screens answered one at a time (a second extension asking while a dialog
is open waits its turn instead of overlapping). Calls may come from a tool's worker thread:
everything that touches the screen hops onto the app's thread first, and a dialog asked from
another thread is awaited there through the app's loop.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, TypeVar, TypeVarTuple

from ...ai.abort import AbortSignal
from ...config.themes import ThemeSpec
from .surface import AppWithSurface

if TYPE_CHECKING:
    from textual.screen import Screen

    from ...extensions.context import ExtensionUI
    from ...permissions.prompt import PermissionAnswer, PermissionRequest
    from ..interactive.highlighting import AnsiTheme

R = TypeVar("R")
Args = TypeVarTuple("Args")


class TuiUI:
    has_ui = True

    def __init__(self, app: AppWithSurface) -> None:
        self.app = app
        self._dialog_lock = asyncio.Lock()
        self.autocomplete_providers: list[Callable[..., Any]] = []
        self.editor_factory: Callable[..., object] | None = None

    # ------------------------------------------------------------------ threads

    def _on_app_thread(self) -> bool:
        return threading.get_ident() == getattr(self.app, "_thread_id", threading.get_ident())

    def _call(self, fn: Callable[[*Args], R], *args: *Args) -> R:
        """Run ``fn`` on the app's thread (at once when already there)."""
        if self._on_app_thread():
            return fn(*args)
        result: R = self.app.call_from_thread(fn, *args)
        return result

    async def dialog(self, make_screen: Callable[[], Screen[R]]) -> R:
        loop = getattr(self.app, "_loop", None)
        running = asyncio.get_running_loop()
        if loop is not None and running is not loop:  # asked from another loop/thread
            return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(self.dialog(make_screen), loop))
        async with self._dialog_lock:
            future: asyncio.Future[R] = running.create_future()

            def answered(value: R) -> None:
                if not future.done():
                    future.set_result(value)

            self.app.push_screen(make_screen(), callback=answered)
            return await future

    # ------------------------------------------------------------------ dialogs

    async def select(self, title: str, options: Sequence[R], *, timeout: float | None = None, signal: AbortSignal | None = None) -> R | None:
        from .screens.select_dialog import SelectDialog

        if signal is not None and getattr(signal, "aborted", False):
            return None
        return await self.dialog(lambda: SelectDialog(title, options, timeout=timeout, signal=signal))

    async def confirm(self, title: str, message: str = "", *, timeout: float | None = None, signal: AbortSignal | None = None) -> bool:
        from .screens.confirm_dialog import ConfirmDialog

        if signal is not None and getattr(signal, "aborted", False):
            return False
        confirmed: bool | None = await self.dialog(lambda: ConfirmDialog(title, message, timeout=timeout, signal=signal))
        return bool(confirmed)

    async def input(self, title: str, placeholder: str | None = None, *, timeout: float | None = None,
                    signal: AbortSignal | None = None) -> str | None:
        from .screens.input_dialog import InputDialog

        if signal is not None and getattr(signal, "aborted", False):
            return None
        return await self.dialog(lambda: InputDialog(title, placeholder, timeout=timeout, signal=signal))

    async def editor(self, title: str, prefill: str | None = None, *, timeout: float | None = None,
                     signal: AbortSignal | None = None) -> str | None:
        from .screens.editor_dialog import EditorDialog

        if signal is not None and getattr(signal, "aborted", False):
            return None
        return await self.dialog(lambda: EditorDialog(title, prefill, timeout=timeout, signal=signal))

    async def ask_permission(self, request: PermissionRequest, *, signal: AbortSignal | None = None) -> PermissionAnswer:
        from ...permissions.prompt import PermissionAnswer
        from .screens.permission_dialog import PermissionDialog

        if signal is not None and getattr(signal, "aborted", False):
            return PermissionAnswer.cancelled()
        return await self.dialog(lambda: PermissionDialog(request, signal=signal))

    async def custom(self, factory: Callable[..., object], *, overlay: bool = False) -> object:
        """Replace the editor with ``factory(app, theme, keybindings, done)`` until ``done(value)``."""
        loop = asyncio.get_running_loop()
        future: asyncio.Future[object] = loop.create_future()

        def done(value: object = None) -> None:
            def finish() -> None:
                if not future.done():
                    future.set_result(value)
                self.app.surface.close_custom()

            self._call(finish)

        self._call(self.app.surface.open_custom, factory, done)
        return await future

    # ------------------------------------------------------------------ notices and state

    def notify(self, message: str, level: str = "info") -> None:
        severity = {"warn": "warning"}.get(level, level)
        if severity not in ("information", "warning", "error"):
            severity = "information"
        # Literally: "saved [draft]" stays as written, and "[/x]" is text, not a closing tag.
        self._call(lambda: self.app.notify(str(message), severity=severity, markup=False))  # type: ignore[arg-type]

    def set_status(self, key: str, text: str | None) -> None:
        self._call(self.app.surface.set_status, key, text)

    def set_working_message(self, text: str | None = None) -> None:
        self._call(lambda: self.app.working.set_message(text))

    def set_working_visible(self, visible: bool) -> None:
        self._call(lambda: self.app.working.set_visible(visible))

    def set_working_indicator(self, frames: list[str] | None = None, interval_ms: int | None = None) -> None:
        self._call(lambda: self.app.working.set_indicator(frames, interval_ms))

    def set_widget(self, key: str, content: object, *, placement: str = "above_editor") -> None:
        placement = "below_editor" if placement in ("below_editor", "belowEditor") else "above_editor"
        self._call(self.app.surface.set_extension_widget, key, content, placement)

    def set_footer(self, factory: Callable[..., object] | None) -> None:
        self._call(self.app.surface.set_custom_footer, factory)

    def set_title(self, text: str) -> None:
        self._call(self.app.surface.set_terminal_title, text)

    # ------------------------------------------------------------------ the editor

    def set_editor_text(self, text: str) -> None:
        self._call(self.app.surface.set_editor_text, text)

    def get_editor_text(self) -> str:
        return self._call(lambda: self.app.editor.text)

    def paste_to_editor(self, text: str) -> None:
        self._call(lambda: self.app.editor.insert(text))

    def add_autocomplete_provider(self, factory: Callable[..., Any]) -> None:
        self.autocomplete_providers.append(factory)

    def set_editor_component(self, factory: Callable[..., object] | None) -> None:
        self.editor_factory = factory
        self._call(self.app.surface.use_editor_factory, factory)

    def get_editor_component(self) -> Callable[..., object] | None:
        return self.editor_factory

    # ------------------------------------------------------------------ tools and themes

    def get_tools_expanded(self) -> bool:
        return self.app.tools_expanded

    def set_tools_expanded(self, expanded: bool) -> None:
        self._call(self.app.surface.set_tools_expanded, bool(expanded))

    def get_all_themes(self) -> list[dict[str, Any]]:
        return [{"name": spec.name, "path": spec.path} for spec in self.app.themes.values()]

    def get_theme(self, name: str) -> ThemeSpec | None:
        return self.app.themes.get(name)

    def set_theme(self, theme: object) -> dict[str, Any]:
        return self._call(self.app.surface.switch_theme, theme)

    @property
    def theme(self) -> AnsiTheme:
        return self.app.ui_theme

    def open_url(self, url: str) -> None:
        from ..interactive.open_url import open_in_browser

        # Off the app's thread: a browser can take a while to start.
        def work() -> None:
            if not open_in_browser(url):  # no browser here: the URL stays readable in the transcript
                self._call(self.app.add_notice, f"Open this link in a browser: {url}", "info")

        threading.Thread(target=work, name="open-url", daemon=True).start()

    def reset(self) -> None:
        """Extensions are being loaded again (``/reload``): forget what the old versions put
        on screen, so the new versions start from the built-in look."""
        self.autocomplete_providers.clear()
        self.editor_factory = None
        self._call(self.app.surface.reset_extension_ui)



class AppWithUI(AppWithSurface, Protocol):
    """The app as the helpers that ask through its ``ctx.ui`` (dialogs, autocomplete) see it."""

    @property
    def ui(self) -> TuiUI: ...


if TYPE_CHECKING:
    _conforms: type[ExtensionUI] = TuiUI
