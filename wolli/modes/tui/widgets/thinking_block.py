"""The model's thinking: collapsed to its first line unless thinking is shown (Ctrl+T)."""

from __future__ import annotations

from textual.widgets import Static


class ThinkingBlock(Static):
    DEFAULT_CLASSES = "thinking"

    def __init__(self, text: str = "", expanded: bool = False) -> None:
        super().__init__("", markup=False)
        self.text = text
        self.expanded = expanded
        self._refresh_text()

    def append(self, delta: str) -> None:
        self.text += delta
        self._refresh_text()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self._refresh_text()

    def _refresh_text(self) -> None:
        body = self.text.strip()
        if self.expanded or not body:
            self.update(body or "Thinking…")
        else:
            first = body.split("\n", 1)[0]
            more = " …" if "\n" in body or len(first) > 100 else ""
            self.update("Thinking: " + first[:100] + more)
