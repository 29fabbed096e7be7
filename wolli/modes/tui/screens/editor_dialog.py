"""``ctx.ui.editor(title, prefill)``: multi-line text; Ctrl+S (or Ctrl+Enter) answers, Esc None."""

from __future__ import annotations

from typing import Unpack

from textual.binding import Binding
from textual.widgets import Static, TextArea

from .dialog_base import DialogOptions, TimedDialog


class EditorDialog(TimedDialog[str | None]):
    BINDINGS = [
        *TimedDialog.BINDINGS,
        Binding("ctrl+s,ctrl+enter", "save", "Done", show=False, priority=True),
    ]
    BOX_CLASSES = "dialog-box dialog-wide"

    def __init__(self, title: str, prefill: str | None = None, **kwargs: Unpack[DialogOptions]) -> None:
        super().__init__(title, **kwargs)
        self.field = TextArea(prefill or "", id="dialog-editor", soft_wrap=True)

    def body(self):  # type: ignore[no-untyped-def]
        yield self.field
        yield Static("Ctrl+S done · Esc cancel", classes="dialog-hint")

    def first_focus(self) -> TextArea:
        self.field.move_cursor(self.field.document.end)  # typing goes on after the prefill
        return self.field

    def action_save(self) -> None:
        self.close(self.field.text)
