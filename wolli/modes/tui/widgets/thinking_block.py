"""The model's thinking: in full (dimmed), or collapsed to its first line (Ctrl+T).

While it streams, its height comes from a line estimate plus a spare line, so a frame repaints
this widget without laying out the screen again (see streaming_text.py); ``done()`` returns it
to its natural height.
"""

from __future__ import annotations

from textual.widgets import Static

from .streaming_text import estimated_lines


class ThinkingBlock(Static):
    DEFAULT_CLASSES = "thinking"

    def __init__(self, text: str = "", expanded: bool = True) -> None:
        super().__init__("", markup=False)
        self.text = text
        self.expanded = expanded
        self.streaming = False
        self._lines = 0
        self._refresh_text()

    def append(self, delta: str) -> None:
        self.text += delta
        self.streaming = True
        self._refresh_text()

    def done(self) -> None:
        if self.streaming:
            self.streaming = False
            self.styles.height = "auto"
            self._refresh_text()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            if not self.streaming:
                self.styles.height = "auto"
            self._refresh_text()

    def _refresh_text(self) -> None:
        body = self.text.strip()
        if self.expanded or not body:
            shown = body or "Thinking…"
        else:
            first = body.split("\n", 1)[0]
            more = " …" if "\n" in body or len(first) > 100 else ""
            shown = "Thinking: " + first[:100] + more
        if self.streaming and self.expanded:
            width = max(1, (self.size.width or 80) - 2)
            lines = estimated_lines(shown, width) + 1
            if lines != self._lines:
                self._lines = lines
                self.styles.height = lines
            self.update(shown, layout=False)
        else:
            self.update(shown)
