"""``ctx.ui.input(title, placeholder)``: one line of text; Enter answers it, Esc None."""

from __future__ import annotations

from typing import Unpack

from textual.widgets import Input

from .dialog_base import DialogOptions, TimedDialog


class InputDialog(TimedDialog[str | None]):
    def __init__(self, title: str, placeholder: str | None = None, *, value: str = "", password: bool = False,
                 **kwargs: Unpack[DialogOptions]) -> None:
        super().__init__(title, **kwargs)
        self.field = Input(value=value, placeholder=placeholder or "", password=password, id="dialog-input")

    def body(self):  # type: ignore[no-untyped-def]
        yield self.field

    def first_focus(self) -> Input:
        return self.field

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.close(event.value)
