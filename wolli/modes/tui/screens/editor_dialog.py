"""``ctx.ui.editor(title, prefill)``: multi-line text; Ctrl+S (or Ctrl+Enter) answers, Esc None."""

from __future__ import annotations

from typing import Any

from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Static, TextArea

from .dialog_base import TimedDialog


class EditorDialog(TimedDialog[str | None]):
    BINDINGS = [
        *TimedDialog.BINDINGS,
        Binding("ctrl+s,ctrl+enter", "save", "Done", show=False, priority=True),
    ]

    def __init__(self, title: str, prefill: str | None = None, **kwargs: Any) -> None:
        super().__init__(title, **kwargs)
        self.prefill = prefill or ""

    def compose(self):  # type: ignore[override]
        with Vertical(classes="dialog-box dialog-wide"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield TextArea(self.prefill, id="dialog-editor", soft_wrap=True)
            yield Static("Ctrl+S done · Esc cancel", classes="dialog-hint")
            yield self.countdown

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(TextArea).focus()

    def action_save(self) -> None:
        self.close(self.query_one(TextArea).text)
