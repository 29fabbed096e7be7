"""Suggestions for the editor: asks the provider stack, shows the menu, applies a choice.

Queries run as one exclusive worker (a newer keystroke cancels an older query), and only
where completion applies (a ``/`` line, an ``@`` word, a trigger character of an extension
provider, Tab), so typing plain text costs nothing.
"""

from __future__ import annotations

import re
from functools import partial
from typing import Any

from ..interactive import registry
from . import completion
from .widgets.completion_menu import CompletionMenu

_LAST_WORD = re.compile(r"(?:^|\s)(\S*)$")


class EditorCompletion:
    def __init__(self, app: Any) -> None:
        self.app = app
        self.menu = CompletionMenu()
        self._files: completion.ProjectFiles | None = None
        self._stacked: tuple[Any, tuple[Any, set[str]]] | None = None
        self._applied = False  # the next text change is our own insertion: no new menu for it

    # ------------------------------------------------------------------ the provider stack

    def provider(self) -> Any:
        return self._stack()[0]

    def _stack(self) -> tuple[Any, set[str]]:
        """Built once per folder and set of providers (a factory may preload data)."""
        cwd = self._cwd()
        factories = list(self.app.ui.autocomplete_providers)
        key = (cwd, tuple(id(f) for f in factories))
        if self._stacked is None or self._stacked[0] != key:
            if self._files is None or self._files.cwd != cwd:
                self._files = completion.ProjectFiles(cwd)
            builtin = completion.BuiltinCompletion(self._commands, self._files, self._argument_completions, cwd)
            made = completion.stack(builtin, factories, lambda text: self.app.add_notice(text, "error"))
            self._stacked = (key, made)
        return self._stacked[1]

    def _cwd(self) -> str:
        session = self.app.controller.session
        return session.cwd if session is not None else self.app.request.cwd

    def _commands(self) -> list[dict[str, Any]]:
        """Built-ins (also before the session is up), extension commands, templates, skills."""
        controller = self.app.controller
        items = []
        for entry in registry.command_entries(controller.host, controller.session):
            description = entry.description + (f"  {entry.usage}" if entry.usage else "")
            if entry.availability == "disabled":
                description = f"(disabled: {entry.reason or 'not available right now'}) {description}"
            items.append({"value": "/" + entry.name, "label": "/" + entry.name, "description": description})
        return items

    async def _argument_completions(self, name: str, prefix: str) -> Any:
        controller = self.app.controller
        if controller.session is None:
            return None
        return await registry.argument_completions(controller.command_context(), name, prefix)

    # ------------------------------------------------------------------ driving

    def wanted(self, force: bool) -> None:
        if self._applied and not force:
            self._applied = False
            return
        editor = self.app.editor
        row, col = editor.cursor_location
        lines = editor.text.split("\n")
        before = lines[row][:col] if row < len(lines) else ""
        if not force and not self.menu.open and not self._applies(before, row, self._stack()[1]):
            return
        # A callable, not a coroutine: a query cancelled by the next keystroke before it
        # started is then never created (no "coroutine was never awaited" on the screen).
        self.app.run_worker(partial(self._suggest, lines, row, col, force), group="completion", exclusive=True)

    @staticmethod
    def _applies(before: str, row: int, triggers: set[str]) -> bool:
        if row == 0 and before.startswith("/"):
            return True
        word = _LAST_WORD.search(before)
        token = word.group(1) if word else ""
        return bool(token) and any(t in token for t in triggers if t != "/")

    async def _suggest(self, lines: list[str], row: int, col: int, force: bool) -> None:
        provider = self.provider()
        try:
            found = await completion.suggestions(provider, lines, row, col, {"force": force})
        except Exception as exc:  # a provider's bug must not break typing
            self.app.add_notice(f"autocomplete failed: {type(exc).__name__}: {exc}", "error")
            found = None
        if found is None:
            self.close()
            return
        if force and len(found["items"]) == 1:  # Tab with one candidate completes at once
            self._apply(provider, lines, row, col, found["items"][0], found["prefix"])
            return
        self.menu.show(found["prefix"], found["items"])
        self.app.editor.menu_open = self.menu.open

    def key(self, action: str) -> None:
        if action in ("up", "down"):
            self.menu.move(-1 if action == "up" else 1)
        elif action == "close":
            self.close()
        elif action in ("accept", "enter"):
            item = self.menu.current()
            editor = self.app.editor
            row, col = editor.cursor_location
            if action == "enter" and (item is None or str(item["value"]) == self.menu.prefix):
                self.close()  # the word is complete already: Enter sends
                editor.submit()
                return
            if item is not None:
                self._apply(self.provider(), editor.text.split("\n"), row, col, item, self.menu.prefix)
            else:
                self.close()

    def _apply(self, provider: Any, lines: list[str], row: int, col: int, item: dict[str, Any], prefix: str) -> None:
        self.close()
        result = provider.apply_completion(lines, row, col, item, prefix)
        editor = self.app.editor
        self._applied = True
        editor.text = "\n".join(result["lines"])
        editor.move_cursor((result["cursor_line"], result["cursor_col"]))

    def close(self) -> None:
        self.menu.hide()
        self.app.editor.menu_open = False
