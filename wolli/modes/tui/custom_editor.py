"""``ctx.ui.set_editor_component(factory)``: swap the prompt editor for an extension's own.

``factory(app, theme, keybindings)`` returns a :class:`CustomEditor` (or subclass). It is a
:class:`PromptEditor`, so the app's keys (Enter sends, Esc interrupts, history...) keep
working; a subclass overrides ``_on_key`` for its own keys and calls ``super()`` for the rest.
``None`` restores the built-in editor. A factory that raises keeps the current editor and
says why.
"""

from __future__ import annotations

from collections.abc import Callable

from ...config.keybindings import KeybindingsManager
from .app_view import TuiApp
from .widgets.prompt_editor import PromptEditor


class CustomEditor(PromptEditor):
    """The base class for extension editors (vim or emacs modes, ...)."""


def swap_editor(app: TuiApp, factory: Callable[..., object] | None) -> None:
    text = app.editor.text
    if factory is None:
        new = PromptEditor(app.history)
    else:
        try:
            made = factory(app, app.ui_theme, KeybindingsManager())
        except Exception as exc:
            host = app.controller.host  # the extension that defined the factory names the failure
            owner = host.extensions.owner_of(factory) if host is not None else "extension"
            app.add_notice(str(app.extension_failed(owner, "the custom editor", exc)), "error")
            return
        if not isinstance(made, PromptEditor):
            app.add_notice("set_editor_component: the factory must return a CustomEditor", "error")
            return
        new = made
        new.prompt_history = app.history
    old = app.editor
    app.editor = new
    app.editor_area.mount(new, before=old)  # in its place: below the completion menu
    old.remove()
    new.text = text
    new.move_cursor(new.document.end)
    new.focus()
