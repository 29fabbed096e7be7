"""The model's thinking: in full (dimmed), or collapsed to its first line (Ctrl+T).

It draws like the tail of a streaming answer (:class:`StreamTail`: rows wrapped as text arrives,
only changed rows redrawn), so a long thought streams without laying out the screen per frame.
"""

from __future__ import annotations

from .stream_tail import StreamTail

PREVIEW_CHARS = 100


class ThinkingBlock(StreamTail):
    DEFAULT_CLASSES = "thinking"

    def __init__(self, text: str = "", expanded: bool = True) -> None:
        super().__init__()
        self.thinking = text
        self.expanded = expanded

    def on_mount(self) -> None:
        self._show()

    def append(self, delta: str) -> None:
        self.thinking += delta
        self._show()

    def set_expanded(self, expanded: bool) -> None:
        if expanded != self.expanded:
            self.expanded = expanded
            self._show()

    def _show(self) -> None:
        body = self.thinking.strip()
        if self.expanded or not body:
            self.set_text(body or "Thinking…")
        else:
            first = body.split("\n", 1)[0]
            more = " …" if "\n" in body or len(first) > PREVIEW_CHARS else ""
            self.set_text("Thinking: " + first[:PREVIEW_CHARS] + more)
