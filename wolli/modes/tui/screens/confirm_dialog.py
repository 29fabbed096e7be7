"""``ctx.ui.confirm(title, message)``: ``y`` / Enter on Yes answers True, ``n`` or Esc False."""

from __future__ import annotations

from typing import Unpack

from textual.binding import Binding
from textual.containers import Horizontal
from textual.widgets import Button, Static

from .dialog_base import DialogOptions, TimedDialog


class ConfirmDialog(TimedDialog[bool]):
    BINDINGS = [
        *TimedDialog.BINDINGS,
        Binding("y", "answer(True)", "Yes", show=False),
        Binding("n", "answer(False)", "No", show=False),
        Binding("left,right", "toggle_focus", show=False),
    ]

    def __init__(self, title: str, message: str = "", **kwargs: Unpack[DialogOptions]) -> None:
        super().__init__(title, cancel_value=False, **kwargs)
        self.message = message

    def body(self):  # type: ignore[no-untyped-def]
        if self.message:
            yield Static(self.message, classes="dialog-message", markup=False)
        with Horizontal(classes="dialog-buttons"):
            yield Button("Yes (y)", id="yes", variant="primary")
            yield Button("No (n)", id="no")

    def first_focus(self) -> Button:
        return self.query_one("#yes", Button)

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        self.close(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.close(value)

    def action_toggle_focus(self) -> None:
        target = "#no" if self.focused is not None and self.focused.id == "yes" else "#yes"
        self.query_one(target, Button).focus()
