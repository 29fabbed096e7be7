"""``ctx.ui.input(title, placeholder)``: one line of text; Enter answers it, Esc None."""

from __future__ import annotations

from typing import Any

from textual.containers import Vertical
from textual.widgets import Input, Static

from .dialog_base import TimedDialog


class InputDialog(TimedDialog[str | None]):
    def __init__(self, title: str, placeholder: str | None = None, **kwargs: Any) -> None:
        super().__init__(title, **kwargs)
        self.placeholder = placeholder or ""

    def compose(self):  # type: ignore[override]
        with Vertical(classes="dialog-box"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield Input(placeholder=self.placeholder, id="dialog-input")
            yield self.countdown

    def on_mount(self) -> None:
        super().on_mount()
        self.query_one(Input).focus()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.close(event.value)
