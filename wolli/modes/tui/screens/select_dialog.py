"""``ctx.ui.select(title, options)``: pick one option (arrows and Enter), Esc for None."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Unpack

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ....extensions.ui import option_label, option_value
from .dialog_base import DialogOptions, TimedDialog


class SelectDialog(TimedDialog[Any]):
    def __init__(self, title: str, options: Sequence[object], **kwargs: Unpack[DialogOptions]) -> None:
        super().__init__(title, **kwargs)
        self.options = list(options)
        # Text, not str: an option's label is shown as written ("[draft]" is no markup).
        self.choices = OptionList(*[Option(Text(option_label(o)), id=str(i)) for i, o in enumerate(self.options)],
                                  id="dialog-options")
        if self.options:
            self.choices.highlighted = 0

    def body(self):  # type: ignore[no-untyped-def]
        yield self.choices

    def first_focus(self) -> OptionList:
        return self.choices

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.close(option_value(self.options[int(event.option.id or 0)]))
