"""The TUI's completion sources and prompt history, as prompt_toolkit wants them.

Completion asks the same provider stack as the TUI's editor (``/`` commands with their
argument completions, ``@`` files, paths on Tab, and every provider an extension added with
``ctx.ui.add_autocomplete_provider``), and only where completion applies, so typing plain
text costs nothing. History reads and appends ``<agent home>/prompt-history.jsonl``, the
file the TUI uses.
"""

from __future__ import annotations

import re
from collections.abc import AsyncGenerator, Callable, Iterable
from typing import Any

from prompt_toolkit.completion import CompleteEvent, Completer, Completion
from prompt_toolkit.document import Document
from prompt_toolkit.history import History

from ..interactive import completion as sources
from ..interactive.prompt_history import PromptHistory

_LAST_WORD = re.compile(r"(?:^|\s)(\S*)$")


class SharedHistory(History):
    def __init__(self, store: PromptHistory) -> None:
        self.store = store
        super().__init__()

    def load_history_strings(self) -> Iterable[str]:
        return list(reversed(self.store.entries))  # newest first

    def store_string(self, string: str) -> None:
        self.store.add(string)


class StackCompleter(Completer):
    """``provider()`` gives the top of the provider stack and its trigger characters;
    ``report`` shows a provider's failure (typing goes on)."""

    def __init__(self, provider: Callable[[], sources.ProviderStack], report: Callable[[str], None]) -> None:
        self.provider = provider
        self.report = report

    def get_completions(self, document: Document, complete_event: CompleteEvent) -> Iterable[Completion]:
        return []  # only ever asked asynchronously (PromptSession.prompt_async)

    async def get_completions_async(self, document: Document,
                                    complete_event: CompleteEvent) -> AsyncGenerator[Completion, None]:
        force = complete_event.completion_requested  # Tab
        row, col = document.cursor_position_row, document.cursor_position_col
        lines = document.text.split("\n")
        provider, triggers = self.provider()
        if not force and not applies(lines[row][:col], row, triggers):
            return
        try:
            found = await sources.suggestions(provider, lines, row, col, {"force": force})
        except Exception as exc:  # a provider's bug must not break typing
            self.report(f"autocomplete failed: {type(exc).__name__}: {exc}")
            return
        if found is None:
            return
        prefix = found["prefix"]
        for item in found["items"]:
            try:
                text = inserted_text(provider, lines, row, col, item, prefix)
            except Exception as exc:
                self.report(f"autocomplete failed: {type(exc).__name__}: {exc}")
                return
            yield Completion(text, start_position=-len(prefix), display=str(item.get("label") or item["value"]),
                             display_meta=str(item.get("description") or ""))


def applies(before: str, row: int, triggers: set[str]) -> bool:
    """Completion runs on a ``/`` first line and on a word holding a trigger character."""
    if row == 0 and before.startswith("/"):
        return True
    word = _LAST_WORD.search(before)
    token = word.group(1) if word else ""
    return bool(token) and any(t in token for t in triggers if t != "/")


def inserted_text(provider: sources.CompletionProvider, lines: list[str], row: int, col: int, item: dict[str, Any], prefix: str) -> str:
    """What replaces ``prefix`` when ``item`` is taken: the provider's own edit when it only
    changes the prefix (a space after a command, a folder's slash), else the item's value."""
    result = provider.apply_completion(lines, row, col, item, prefix)
    new_lines = result["lines"]
    before, after = lines[row][: col - len(prefix)], lines[row][col:]
    line = new_lines[result["cursor_line"]] if len(new_lines) == len(lines) else None
    if line is not None and line.startswith(before) and line.endswith(after) and new_lines[:row] == lines[:row]:
        return line[len(before): len(line) - len(after)] if after else line[len(before):]
    return str(item["value"])
