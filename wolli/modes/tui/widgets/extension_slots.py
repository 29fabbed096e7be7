"""Where extensions' widgets go: one slot above the editor, one below.

``set_widget(key, lines_or_factory, placement=...)``: lines are shown as text (literally: no
markup); a factory is called with ``(app, theme)`` and returns a Textual widget (or anything
displayable). A factory that raises shows one error line in place of its widget.
"""

from __future__ import annotations

from collections.abc import Callable

from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from ..rendering import as_renderable


class ExtensionSlot(Vertical):
    DEFAULT_CSS = "ExtensionSlot { height: auto; }"
    DEFAULT_CLASSES = "extension-slot"

    def __init__(self, placement: str) -> None:
        super().__init__(id=f"slot-{placement.replace('_', '-')}")
        self.widgets: dict[str, Widget] = {}
        self.display = False

    def set_widget(self, key: str, content: object, build: Callable[[str, Callable[..., object]], Widget]) -> None:
        old = self.widgets.pop(key, None)
        if old is not None:
            old.remove()
        if content is not None:
            widget = self._make(key, content, build)
            self.widgets[key] = widget
            self.mount(widget)
        self.display = bool(self.widgets)

    def _make(self, key: str, content: object, build: Callable[[str, Callable[..., object]], Widget]) -> Widget:
        if callable(content):
            return build(key, content)  # a failing factory becomes its error line
        return Static(as_renderable(content) or "", classes="extension-widget")

    def clear(self) -> None:
        for widget in self.widgets.values():
            widget.remove()
        self.widgets.clear()
        self.display = False
