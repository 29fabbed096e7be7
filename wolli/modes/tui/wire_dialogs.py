"""Dialogs asked over a wire (a server's ``extension_ui_request``) as the app's own screens.

A client attached to a server shows a session's dialogs with the same screens ``ctx.ui``
uses in-process; when another client answers first, the copy here is closed unanswered.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from textual.screen import Screen

if TYPE_CHECKING:
    from .screens.confirm_dialog import ConfirmDialog
    from .screens.editor_dialog import EditorDialog
    from .screens.input_dialog import InputDialog
    from .screens.select_dialog import SelectDialog

DIALOG_METHODS = ("select", "confirm", "input", "editor")


def dialog_screen(method: str, record: Mapping[str, object]) -> SelectDialog | ConfirmDialog | InputDialog | EditorDialog:
    """The screen for a ``select``/``confirm``/``input``/``editor`` request record."""
    from .screens.confirm_dialog import ConfirmDialog
    from .screens.editor_dialog import EditorDialog
    from .screens.input_dialog import InputDialog
    from .screens.select_dialog import SelectDialog

    title = str(record.get("title", ""))
    timeout_ms = record.get("timeout")
    timeout = timeout_ms / 1000 if isinstance(timeout_ms, int | float) else None
    if method == "select":
        options = record.get("options")
        return SelectDialog(title, [str(o) for o in options] if isinstance(options, list) else [], timeout=timeout)
    if method == "confirm":
        return ConfirmDialog(title, str(record.get("message", "")), timeout=timeout)
    if method == "input":
        placeholder = record.get("placeholder")
        return InputDialog(title, placeholder if isinstance(placeholder, str) else None, timeout=timeout)
    prefill = record.get("prefill")
    return EditorDialog(title, prefill if isinstance(prefill, str) else None, timeout=timeout)


def close_answered(screen: object) -> None:
    """Close a dialog another client answered. Only the dialog on top can be dismissed; one
    under another dialog closes as soon as it is on top again (and the caller drops what it
    answers)."""
    from .screens.dialog_base import TimedDialog

    if not isinstance(screen, Screen) or not screen.is_attached:
        return
    if screen.app.screen is screen:
        screen.dismiss(None)
    elif isinstance(screen, TimedDialog):
        screen.close_when_shown()
