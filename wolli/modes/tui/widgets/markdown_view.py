"""Markdown whose code blocks use the theme's ``syntax*`` colours."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from markdown_it import MarkdownIt
from textual import events
from textual.content import Content
from textual.highlight import highlight
from textual.widgets import Markdown
from textual.widgets._markdown import MarkdownBlock, MarkdownFence

from .code_theme import ThemedHighlight

# A text up to this size is parsed as the widget is composed, so it mounts with its blocks;
# a longer one is parsed by Markdown itself, in a thread, after it is mounted.
COMPOSE_LIMIT = 64 * 1024
_parser: MarkdownIt | None = None


def new_parser() -> MarkdownIt:
    """Markdown's own parser (gfm-like) with HTML off: Textual has no widget for HTML, so a
    tag in an answer (``<details>``, ``List<String>``) or an HTML block would vanish from
    the screen; off, it is shown as the text the model wrote."""
    return MarkdownIt("gfm-like", {"html": False})


def _shared_parser() -> MarkdownIt:
    """One parser for the texts parsed on the UI thread (making one costs ~0.5 ms)."""
    global _parser
    if _parser is None:
        _parser = new_parser()
    return _parser


def warm_parser() -> None:
    """Parse a text with each kind of link in it, for the TUI's warm-up thread: linkify's
    patterns (long alternations over Unicode classes) are compiled by ``re`` the first time
    a text is scanned for links, ~4 ms of the first answer's last frame otherwise."""
    _shared_parser().parse("see https://example.com/a, www.example.com or user@example.com")


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
        super().__init__(markdown, parser_factory=new_parser)
        self._parsed = False  # Markdown's first parse is done: appends can start
        self._appending = False
        self._held = ""  # text waiting for the append in progress
        self._whole = bool(markdown)  # made with text: more text re-parses the whole
        self._when_drained: list[Callable[[], object]] = []
        self._composed = False  # the first text's blocks came with compose

    def compose(self) -> Iterator[MarkdownBlock]:
        """The blocks of a finished text, parsed now: a history row mounts with its blocks in
        the same pass, one layout, instead of mounting empty and being parsed (in a thread),
        then mounted and laid out again."""
        text = self._initial_markdown
        if not text or len(text) > COMPOSE_LIMIT:
            return
        blocks = list(self._parse_markdown(_shared_parser().parse(text)))
        self._initial_markdown = None
        self._composed = True
        self._markdown = text
        lines = text.splitlines()  # where an append would start parsing again, as Markdown.update sets it
        self._last_parsed_line = len(lines) - (1 if lines and lines[-1] else 0)
        yield from blocks

    def on_mount(self, event: events.Mount) -> None:
        if self._composed:
            event.prevent_default()  # Markdown's own handler would parse and mount it all again
        # Markdown's own mount handler has parsed the first text by now (or compose did).
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
