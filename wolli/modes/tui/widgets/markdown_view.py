"""Markdown whose code blocks use the theme's ``syntax*`` colours."""

from __future__ import annotations

from collections.abc import Callable

from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence

from .code_theme import ThemedHighlight


class ThemedFence(MarkdownFence):
    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        return highlight(code, language=language or None, theme=ThemedHighlight)


class ThemedMarkdown(Markdown):
    BLOCKS: dict[str, type[MarkdownBlock]] = {**Markdown.BLOCKS, "fence": ThemedFence, "code_block": ThemedFence}

    def __init__(self, markdown: str | None = None) -> None:
        # A finished text (history, an answer that arrived whole) is parsed by Markdown itself
        # as it mounts (in a thread). A streamed one starts empty and grows through ``append``:
        # an append after Markdown's own first parse mistakes the first new block for the
        # continuation of the last one (a list after a paragraph took the paragraph's place).
        super().__init__(markdown)
        self._parsed = False  # Markdown's first parse is done: appends can start
        self._appending = False
        self._held = ""  # text waiting for the append in progress
        self._whole = bool(markdown)  # made with text: more text re-parses the whole
        self._when_drained: list[Callable[[], object]] = []

    def on_mount(self) -> None:
        # Markdown's own mount handler has parsed the first text by now.
        self._parsed = True
        self._drain_later()

    @property
    def parsed(self) -> bool:
        """The text it was made with is parsed, its blocks mounted and laid out."""
        return self._parsed and self.size.height > 0

    def append_text(self, text: str) -> None:
        """Append, one ``append`` at a time: Markdown.append works out what to parse again
        when it is called but parses later, so a second call before the first one was done
        parsed the same lines twice (a fast stream showed a paragraph twice)."""
        self._held += text
        self._drain_later()

    def when_drained(self, callback: Callable[[], object]) -> None:
        """Call ``callback`` once everything appended so far is parsed and mounted (at once
        when it is), with no frame drawn in between."""
        if self._parsed and not self._held and not self._appending:
            callback()
        else:
            self._when_drained.append(callback)

    def _drain_later(self) -> None:
        if self._parsed and self._held and not self._appending:
            self._appending = True
            self.call_later(self._drain)

    async def _drain(self) -> None:
        try:
            while self._held:
                held, self._held = self._held, ""
                if self._whole:
                    await self.update(super().source + held)
                else:
                    await self.append(held)
        finally:
            self._appending = False
            callbacks, self._when_drained = self._when_drained, []
            for callback in callbacks:
                callback()
