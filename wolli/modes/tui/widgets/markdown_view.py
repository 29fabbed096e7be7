"""Markdown whose code blocks use the theme's ``syntax*`` colours."""

from __future__ import annotations

from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence

from ..theming import ThemedHighlight


class ThemedFence(MarkdownFence):
    @classmethod
    def highlight(cls, code: str, language: str, ansi: bool = False, dark: bool = False) -> Content:
        return highlight(code, language=language or None, theme=ThemedHighlight)


class ThemedMarkdown(Markdown):
    BLOCKS: dict[str, type[MarkdownBlock]] = {**Markdown.BLOCKS, "fence": ThemedFence, "code_block": ThemedFence}
