"""What ``ctx.ui`` changes on screen: statuses, widgets, footer, title, editor, tool rows,
themes and custom components. :mod:`.ui_bridge` gets calls onto the app's thread; this does
them. Kept apart from ``app.py`` so the app stays a root of layout and keys.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from rich.text import Text
from textual.widget import Widget
from textual.widgets import Static

from ...config.keybindings import KeybindingsManager
from ...config.themes import ThemeSpec
from ..interactive import highlighting
from ..interactive.highlighting import AnsiTheme
from .app_view import TuiApp
from .rendering import as_renderable, guard_widget


def owner_of(app: TuiApp, factory: object) -> str:
    """The extension that defined ``factory`` (a UI factory): the name its failure is shown
    and logged under (``"extension"`` when not known, as on a remote session)."""
    host = app.controller.host
    return host.extensions.owner_of(factory) if host is not None else "extension"


class ScreenSurface:
    def __init__(self, app: TuiApp) -> None:
        self.app = app

    def set_status(self, key: str, text: str | None) -> None:
        app = self.app
        statuses = app.footer.data.statuses
        if text:
            statuses[key] = text
        else:
            statuses.pop(key, None)
        app.footer.refresh_data()

    def set_extension_widget(self, key: str, content: object, placement: str) -> None:
        app = self.app
        slot = app.slot_below if placement == "below_editor" else app.slot_above
        other = app.slot_above if slot is app.slot_below else app.slot_below
        if key in other.widgets:
            other.set_widget(key, None, self._build_widget)
        slot.set_widget(key, content, self._build_widget)

    def _build_widget(self, key: str, factory: Callable[..., object]) -> Widget:
        """A widget factory's widget, or the one line saying it failed (traceback logged)."""
        app = self.app
        owner, what = owner_of(app, factory), f"the widget {key!r}"
        try:
            made = factory(app, app.ui_theme)
        except Exception as exc:
            return Static(app.extension_failed(owner, what, exc), classes="widget-error")
        if isinstance(made, Widget):
            return guard_widget(made, lambda exc: app.extension_failed(owner, what, exc))
        return Static(as_renderable(made, lambda exc: app.extension_failed(owner, what, exc)) or "",
                      classes="extension-widget")

    def set_custom_footer(self, factory: Callable[..., object] | None) -> None:
        """``set_footer``: the factory's footer instead of the built-in one; a factory that
        fails leaves the built-in footer with the error line under it."""
        app = self.app
        for child in list(app.footer_area.children):
            if child is not app.footer:
                child.remove()
        if factory is None:
            app.footer.display = True
            return
        owner, what = owner_of(app, factory), "the footer"
        try:
            made = factory(app, app.ui_theme)
        except Exception as exc:
            app.footer.display = True
            app.footer_area.mount(Static(app.extension_failed(owner, what, exc), classes="widget-error"))
            return
        widget = guard_widget(made, lambda exc: app.extension_failed(owner, what, exc)) if isinstance(
            made, Widget) else Static(as_renderable(made, lambda exc: app.extension_failed(owner, what, exc)) or "")
        app.footer.display = False
        app.footer_area.mount(widget)

    def reset_extension_ui(self) -> None:
        """Everything extensions put on screen goes (``/reload``): widgets, statuses, a custom
        footer or editor, the working row's message and indicator."""
        app = self.app
        app.slot_above.clear()
        app.slot_below.clear()
        if app.footer.data.statuses:
            app.footer.data.statuses.clear()
            app.footer.refresh_data()
        self.set_custom_footer(None)
        from .custom_editor import CustomEditor

        if isinstance(app.editor, CustomEditor):
            self.use_editor_factory(None)
        app.working.set_message(None)
        app.working.set_indicator(None, None)
        app.working.set_visible(None)

    def set_terminal_title(self, text: str) -> None:
        app = self.app
        app.title = text
        driver = getattr(app, "_driver", None)
        if driver is not None and hasattr(driver, "write"):
            # Written raw into an escape sequence: a control character would end it early.
            shown = "".join(char for char in str(text) if char.isprintable())
            driver.write(f"\x1b]2;{shown}\x07")

    def set_editor_text(self, text: str) -> None:
        """The editor's text, with the cursor at its end (where typing goes on)."""
        app = self.app
        app.editor.text = text
        app.editor.move_cursor(app.editor.document.end)

    def use_editor_factory(self, factory: Callable[..., object] | None) -> None:
        from .custom_editor import swap_editor

        swap_editor(self.app, factory)

    def set_tools_expanded(self, expanded: bool) -> None:
        from .widgets.tool_row import ToolRow

        app = self.app
        app.tools_expanded = expanded
        for row in app.query(ToolRow):
            row.set_expanded(expanded)

    def switch_theme(self, theme: object) -> dict[str, Any]:
        app = self.app
        spec = theme if isinstance(theme, ThemeSpec) else app.themes.get(str(theme))
        if spec is None:
            return {"success": False, "error": f"no theme named {theme!r} (known: {', '.join(sorted(app.themes))})"}
        if spec.name not in app.themes or app.themes[spec.name] is not spec:
            app.themes[spec.name] = spec
        app.register_theme_spec(spec)  # again: the file may have changed
        if app.theme == f"wolli-{spec.name}":
            app.theme = "textual-dark"  # setting the same name would not redraw
        app.theme_spec = spec
        app.ui_theme = AnsiTheme(spec)
        highlighting.active_theme = spec
        app.footer.token_colors = dict(spec.colors)
        app.theme = f"wolli-{spec.name}"
        app.footer.refresh_data()
        return {"success": True}

    def open_custom(self, factory: Callable[..., object], done: Callable[[object], None]) -> None:
        """``ctx.ui.custom``: the component takes the editor's place until ``done``."""
        app = self.app
        owner = owner_of(app, factory)

        def failed(exc: BaseException) -> Text:
            return app.extension_failed(owner, "a custom component", exc)

        try:
            made = factory(app, app.ui_theme, KeybindingsManager(), done)
            widget = guard_widget(made, failed) if isinstance(made, Widget) else Static(
                as_renderable(made, failed) or "")
        except Exception as exc:
            app.add_notice(str(failed(exc)), "error")
            done(None)
            return
        app.custom_widget = widget
        app.editor.display = False
        app.editor_area.mount(widget)
        if widget.can_focus:
            widget.focus()

    def close_custom(self) -> None:
        app = self.app
        if app.custom_widget is not None:
            app.custom_widget.remove()
            app.custom_widget = None
        app.editor.display = True
        app.editor.focus()


class AppWithSurface(TuiApp, Protocol):
    """The app as the helpers that change the screen through :class:`ScreenSurface` see it."""

    @property
    def surface(self) -> ScreenSurface: ...
