"""An assistant message: thinking blocks and markdown text, appended to as it streams.

``sync(message)`` is called at most ~30 times a second (the frame batcher) with the partial
message; only the text that arrived since the last call is appended (the markdown widget
re-parses just its last block), so the cost per frame does not grow with the answer. The
model's text is :func:`terminal_safe` before it reaches a widget: escape sequences in it are
shown (``␛[2J``), never obeyed.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from textual.containers import Vertical
from textual.widget import Widget
from textual.widgets import Static

from ....base.text_safety import terminal_safe
from .growing import KeepsRowsOnGrowth
from .streaming_text import StreamingText
from .thinking_block import ThinkingBlock

if TYPE_CHECKING:
    from ....agent.messages import AgentMessage
    from ....ai.types import AssistantMessage
    from .markdown_view import ThemedMarkdown


class AssistantMessageView(KeepsRowsOnGrowth, Vertical):
    DEFAULT_CSS = "AssistantMessageView { height: auto; }"
    DEFAULT_CLASSES = "message assistant-message"

    def __init__(self, show_thinking: bool = True) -> None:
        super().__init__()
        self.show_thinking = show_thinking
        # content index -> (widget, length of its text already shown)
        self._blocks: dict[int, tuple[Any, int]] = {}
        self.error: Static | None = None
        # Set before mounting (a row rebuilt from history): shown once mounted.
        self.pending_message: AssistantMessage | None = None
        self._final = False
        self._ready = False  # mounted: children can be mounted into it
        self._composing: list[Widget] | None = None  # blocks made while composing: yielded, not mounted

    def compose(self) -> Iterator[Widget]:
        """A row rebuilt from history (finished before it was mounted) comes with its blocks,
        their markdown parsed: one mount and one layout, not the row first and its blocks
        mounted into it afterwards."""
        if self.pending_message is None or not self._final:
            return
        message, self.pending_message = self.pending_message, None
        self._ready = True
        self._composing = []
        try:
            self.finish(message)
        finally:
            widgets, self._composing = self._composing, None
        yield from widgets

    def on_mount(self) -> None:
        self._ready = True
        if self.pending_message is not None:
            message, self.pending_message = self.pending_message, None
            self.finish(message) if self._final else self.sync(message)

    @property
    def drawn(self) -> bool:
        """Mounted with all of its message, the markdown parsed (a history row is drawn in
        full at the next frame)."""
        return self._ready and self.pending_message is None and all(
            getattr(widget, "parsed", True) for widget, _ in self._blocks.values())

    def sync(self, message: AssistantMessage, final: bool = False) -> None:
        if not self._ready:
            self.pending_message = message
            return
        content = getattr(message, "content", []) or []
        for index, block in enumerate(content):
            kind = getattr(block, "type", None)
            if kind == "text":
                self._sync_text(index, block.text, final)
            elif kind == "thinking":
                self._sync_thinking(index, block.thinking)
        # A thinking block followed by another block (or the end) is complete: its rows kept
        # for growth go.
        for index, (widget, _) in self._blocks.items():
            if isinstance(widget, ThinkingBlock) and (final or index < len(content) - 1):
                widget.settle()

    def _sync_text(self, index: int, text: str, final: bool = False) -> None:
        known = self._blocks.get(index)
        if known is None:
            if not text.strip():
                return
            if final:  # history, or an answer that arrived in one piece: plain markdown
                from .markdown_view import ThemedMarkdown  # markdown-it and Textual's Markdown: ~50 ms

                widget: ThemedMarkdown | StreamingText = ThemedMarkdown(terminal_safe(text))
            else:
                widget = StreamingText()
            self._blocks[index] = (widget, len(text))
            self._add(widget)
            if isinstance(widget, StreamingText):  # not final
                widget.update_text(terminal_safe(text))  # applied once it is mounted
            return
        widget, shown = known
        if isinstance(widget, StreamingText):
            if len(text) > shown or final:
                widget.update_text(terminal_safe(text), final=final)
        elif len(text) > shown:
            widget.append_text(terminal_safe(text[shown:]))
        self._blocks[index] = (widget, len(text))

    def _sync_thinking(self, index: int, text: str) -> None:
        known = self._blocks.get(index)
        if known is None:
            if not text.strip():
                return
            widget = ThinkingBlock(terminal_safe(text), expanded=self.show_thinking)
            self._blocks[index] = (widget, len(text))
            self._add(widget)
            return
        widget, shown = known
        if len(text) > shown:
            widget.append(terminal_safe(text[shown:]))
            self._blocks[index] = (widget, len(text))

    def finish(self, message: AssistantMessage) -> None:
        """The final message: show whatever is left, and an error or abort line."""
        if not self._ready:
            self.pending_message, self._final = message, True
            return
        if self._diverged(message):
            # A ``message_end`` handler replaced the message (a redaction, a rewrite): what
            # streamed is not the start of it, so the row is drawn again from the final one.
            for widget, _ in self._blocks.values():
                widget.remove()
            self._blocks.clear()
        self.sync(message, final=True)
        stop = getattr(message, "stop_reason", "stop")
        if stop in ("error", "aborted") and self.error is None:
            text = "Interrupted" if stop == "aborted" else f"Error: {message.error_message or 'the request failed'}"
            self.error = Static(terminal_safe(text), markup=False, classes="message-error")
            self._add(self.error)

    def _add(self, widget: Widget) -> None:
        if self._composing is not None:
            self._composing.append(widget)
        else:
            self.mount(widget)

    def _diverged(self, message: AgentMessage) -> bool:
        """Whether a block shown so far is not the start of the same block of ``message``."""
        content = getattr(message, "content", []) or []
        for index, (widget, _) in self._blocks.items():
            block = content[index] if index < len(content) else None
            kind = getattr(block, "type", None)
            if isinstance(widget, ThinkingBlock):
                shown, final = widget.thinking, getattr(block, "thinking", None) if kind == "thinking" else None
            else:
                shown, final = getattr(widget, "source", ""), getattr(block, "text", None) if kind == "text" else None
            if final is None or not terminal_safe(final).startswith(shown):
                return True
        return False

    def set_thinking_visible(self, visible: bool) -> None:
        self.show_thinking = visible
        for widget, _ in self._blocks.values():
            if isinstance(widget, ThinkingBlock):
                widget.set_expanded(visible)

    @property
    def markdown_text(self) -> str:
        return "".join(getattr(w, "source", "") for w, _ in self._blocks.values()
                       if not isinstance(w, ThinkingBlock))
