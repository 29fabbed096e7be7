"""The suggestions list above the editor (``/`` commands, ``@`` files, Tab paths)."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from ....base.text_safety import one_line_safe


class CompletionMenu(OptionList):
    DEFAULT_CSS = "CompletionMenu { height: auto; max-height: 10; }"
    can_focus = False

    def __init__(self) -> None:
        super().__init__(id="completion-menu")
        self.items: list[dict[str, Any]] = []
        self.prefix = ""
        self.display = False

    def show(self, prefix: str, items: list[dict[str, Any]], keep: object = None) -> None:
        """Show ``items``; the one whose value is ``keep`` is highlighted, else the first."""
        self.prefix, self.items = prefix, items
        self.clear_options()
        for index, item in enumerate(items):
            # a file name or an extension's text: one row per entry, whatever it holds
            label = Text(one_line_safe(str(item.get("label") or item["value"])))
            if item.get("description"):
                label.append("  " + one_line_safe(str(item["description"])), style="dim")
            self.add_option(Option(label, id=str(index)))
        self.display = bool(items)
        if items:
            values = [item["value"] for item in items]
            self.highlighted = values.index(keep) if keep is not None and keep in values else 0

    def hide(self) -> None:
        self.display = False
        self.items = []

    @property
    def open(self) -> bool:
        return bool(self.display and self.items)

    def move(self, delta: int) -> None:
        if self.items:
            self.highlighted = ((self.highlighted or 0) + delta) % len(self.items)

    def current(self) -> dict[str, Any] | None:
        if not self.items:
            return None
        return self.items[self.highlighted or 0]
