"""A search field over a list: what the model, session and tree pickers share.

Typing filters (the subclass decides how), Up/Down/PageUp/PageDown move while the cursor
stays in the search field, Enter picks the highlighted row, Esc cancels. Long lists are
cut to ``MAX_ROWS`` rows: a picker is for finding, and the search narrows it.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.binding import Binding
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from .dialog_base import TimedDialog

MAX_ROWS = 500


class PickerScreen(TimedDialog[Any]):
    BINDINGS = [
        *TimedDialog.BINDINGS,
        Binding("down", "move(1)", show=False, priority=True),
        Binding("up", "move(-1)", show=False, priority=True),
        Binding("pagedown", "move(10)", show=False, priority=True),
        Binding("pageup", "move(-10)", show=False, priority=True),
    ]
    BOX_CLASSES = "dialog-box dialog-wide picker"
    HINT = "↑↓ move · Enter choose · Esc cancel"

    def __init__(self, title: str, search: str = "") -> None:
        super().__init__(title)
        self.search = Input(value=search, placeholder="type to search", id="picker-search")
        self.results = OptionList(id="picker-results")
        self.hint = Static(self.HINT, classes="dialog-hint", markup=False)
        self.values: list[Any] = []

    def body(self):  # type: ignore[no-untyped-def]
        yield self.search
        yield self.results
        yield self.hint

    def first_focus(self) -> Input:
        return self.search

    def on_mount(self) -> None:
        super().on_mount()
        self.refill()

    # ------------------------------------------------------------------ for subclasses

    def rows(self, query: str) -> list[tuple[Text | str, Any]]:
        """(label, value) for the rows matching ``query``, in display order."""
        raise NotImplementedError

    def initial_index(self) -> int:
        """The row highlighted after a refill (e.g. the current model)."""
        return 0

    # ------------------------------------------------------------------ list

    def refill(self, keep: object = None) -> None:
        rows = self.rows(self.search.value)[:MAX_ROWS]
        self.values = [value for _, value in rows]
        self.results.clear_options()
        self.results.add_options([Option(Text(label) if isinstance(label, str) else label, id=str(i))
                                  for i, (label, _) in enumerate(rows)])
        if rows:
            index = self.values.index(keep) if keep is not None and keep in self.values else self.initial_index()
            self.results.highlighted = max(0, min(index, len(rows) - 1))

    def highlighted_value(self) -> object:
        index = self.results.highlighted
        return self.values[index] if index is not None and 0 <= index < len(self.values) else None

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        self.refill()

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.choose(self.highlighted_value())

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.choose(self.values[int(event.option.id or 0)])

    def choose(self, value: object) -> None:
        if value is not None:
            self.close(value)

    def action_move(self, step: int) -> None:
        if not self.values:
            return
        current = self.results.highlighted or 0
        self.results.highlighted = max(0, min(len(self.values) - 1, current + step))
