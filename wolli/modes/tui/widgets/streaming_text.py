"""One text block of an answer while it streams: finished markdown blocks above, the
paragraph still being written below it as plain text.

Textual's Markdown widget lays out the whole screen again on every append, which made each
frame of a streaming answer cost 10-25 ms. Here the markdown widget only receives whole blocks
(text up to a blank line outside a code fence), and the growing tail is a :class:`StreamTail`,
which wraps incrementally and redraws only the rows that changed, laying out again only when it
gains a row. When the answer ends, the tail shows the last words at once and joins the markdown
once the markdown has parsed it: the swap is one frame (the answer neither blinks out nor waits
for the parse to show its end).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical

from .growing import KeepsRowsOnGrowth
from .stream_tail import StreamTail

if TYPE_CHECKING:
    from .markdown_view import ThemedMarkdown


def settled_length(text: str) -> int:
    """Where the finished blocks end: after the last blank line that is not inside a fence."""
    end = text.rfind("\n\n")
    while end > 0:
        if text.count("```", 0, end) % 2 == 0:
            return end + 2
        end = text.rfind("\n\n", 0, end)
    return 0


class StreamingText(KeepsRowsOnGrowth, Vertical):
    DEFAULT_CSS = "StreamingText { height: auto; }"

    def __init__(self) -> None:
        super().__init__()
        self.markdown: ThemedMarkdown | None = None
        self.settled = 0  # characters handed to the markdown widget
        self.text = ""
        self.tail = StreamTail()
        self.final = False
        self._ready = False
        self._pending: tuple[str, bool] | None = None

    def on_mount(self) -> None:
        self._ready = True
        if self._pending is not None:
            text, final = self._pending
            self._pending = None
            self.update_text(text, final)

    def compose(self):  # type: ignore[override]
        yield self.tail

    @property
    def source(self) -> str:
        return self.text

    def update_text(self, text: str, final: bool = False) -> None:
        self.text = text
        if not self._ready:  # children can only be mounted once this widget is
            self._pending = (text, final)
            return
        if self.final:
            return
        if final:  # the end on screen now, in the tail; the markdown takes it over below
            self.final = True
            self.tail.set_text(text[self.settled :].rstrip("\n"))
            self.tail.settle()
        cut = len(text) if final else settled_length(text)
        if cut > self.settled:
            if self.markdown is None:
                # Imported with the first finished block, not before the first frame (~50 ms).
                from .markdown_view import ThemedMarkdown

                self.markdown = ThemedMarkdown()
                self.mount(self.markdown, before=self.tail)
            self.markdown.append_text(text[self.settled : cut])
            self.settled = cut
        if not final:
            self.tail.set_text(text[self.settled :].rstrip("\n"))
        elif self.markdown is None:
            self.tail.remove()
        else:
            self.markdown.when_drained(self.tail.remove)
