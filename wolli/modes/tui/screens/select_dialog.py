"""``ctx.ui.select(title, options)``: pick one option (arrows and Enter), Esc for None."""

from __future__ import annotations

from typing import Any

from textual.containers import Vertical
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from .dialog_base import TimedDialog


def option_label(option: Any) -> str:
    if isinstance(option, dict):
        return str(option.get("label") or option.get("title") or option.get("value"))
    return str(option)


def option_value(option: Any) -> Any:
    if isinstance(option, dict) and "value" in option:
        return option["value"]
    return option


class SelectDialog(TimedDialog[Any]):
    def __init__(self, title: str, options: list[Any], **kwargs: Any) -> None:
        super().__init__(title, **kwargs)
        self.options = list(options)

    def compose(self):  # type: ignore[override]
        with Vertical(classes="dialog-box"):
            yield Static(self.title_text, classes="dialog-title", markup=False)
            yield OptionList(*[Option(option_label(o), id=str(i)) for i, o in enumerate(self.options)],
                             id="dialog-options")
            yield self.countdown

    def on_mount(self) -> None:
        super().on_mount()
        options = self.query_one(OptionList)
        options.focus()
        if self.options:
            options.highlighted = 0

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.close(option_value(self.options[int(event.option.id or 0)]))
