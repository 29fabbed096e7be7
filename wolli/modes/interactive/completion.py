"""Editor completion: ``/`` commands and their arguments, ``@`` files, Tab paths.

Pure logic (no Textual): the editor asks the provider stack for suggestions from the text
before the cursor and applies the one picked. The built-in provider is the bottom of the
stack; extensions wrap it with ``ctx.ui.add_autocomplete_provider(lambda current: ...)`` and
delegate to ``current`` for anything they do not handle (docs/extensions.md, UI factories).

A provider has ``get_suggestions(lines, cursor_line, cursor_col, options)`` returning
``{"prefix": str, "items": [{"value", "label", "description"}]}`` or None (sync or async),
``apply_completion(lines, cursor_line, cursor_col, item, prefix)`` returning ``{"lines",
"cursor_line", "cursor_col"}``, and optionally ``trigger_characters``. Dicts work as well as
objects.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import time
from collections.abc import Callable
from typing import Any, Protocol

from .fuzzy import MAX_ITEMS, rank

FILE_LIST_TTL_S = 10.0
MAX_FILES = 200_000
CANDIDATES = 400  # files ranked in full per keystroke


# --------------------------------------------------------------------------- files


class ProjectFiles:
    """The project's files for ``@`` completion, gitignore-aware, listed at most every few
    seconds (in a thread, so a large tree never blocks typing): ``rg --files`` or ``fd`` when
    installed, else a walk that skips hidden folders and the usual build output."""

    SKIP = {".git", "node_modules", "__pycache__", ".venv", "venv", "dist", "build", "target", ".mypy_cache"}

    def __init__(self, cwd: str) -> None:
        self.cwd = cwd
        self.names: list[str] = []
        self.lowered: list[str] = []  # kept beside the names: matching runs per keystroke
        self._listed_at = 0.0

    async def refresh(self) -> None:
        if not self.names or time.monotonic() - self._listed_at > FILE_LIST_TTL_S:
            import asyncio

            self.names = await asyncio.to_thread(self._list)
            self.lowered = [name.lower() for name in self.names]
            self._listed_at = time.monotonic()

    def _list(self) -> list[str]:
        from ...tools.supervisor import run_supervised  # with the first listing: it loads the process tree

        # Names end with NUL, not a newline: a file name may hold a newline, and split there
        # it became two entries that name no file.
        for command in (["rg", "--files", "--null", "--hidden", "-g", "!.git"],
                        ["fdfind", "--type", "f", "--hidden", "--print0"], ["fd", "--type", "f", "--hidden", "--print0"]):
            if shutil.which(command[0]) is None:
                continue
            try:
                out = run_supervised(command, cwd=self.cwd, capture_output=True, timeout=5, stdin=subprocess.DEVNULL)
            except (OSError, subprocess.SubprocessError):
                continue
            if out.returncode in (0, 1):
                names = (name.removeprefix(b"./") for name in out.stdout.split(b"\0"))  # fd -0 adds "./"
                return sorted(os.fsdecode(name) for name in names if name)[:MAX_FILES]
        found: list[str] = []
        for root, dirs, files in os.walk(self.cwd):
            dirs[:] = [d for d in dirs if d not in self.SKIP and not d.startswith(".")]
            rel = os.path.relpath(root, self.cwd)
            for name in files:
                found.append(name if rel == "." else f"{rel}/{name}")
                if len(found) >= MAX_FILES:
                    return sorted(found)
        return sorted(found)

    def best(self, query: str) -> list[str]:
        """The best matches for ``query`` without scoring every file: names containing it
        (shortest first), then names holding its letters in order, and only those few hundred
        are ranked with :func:`fuzzy_score`. About 10 ms on 50,000 files."""
        q = query.lower()
        if not q:
            return sorted(self.names, key=len)[:MAX_ITEMS]
        hits = [i for i, name in enumerate(self.lowered) if q in name]
        hits.sort(key=lambda i: len(self.lowered[i]))
        candidates = hits[:CANDIDATES]
        if len(hits) < MAX_ITEMS:  # few names contain it whole: look for its letters in order
            # "[^c]*c" steps never backtrack, unlike ".*?c".
            pattern = re.compile("".join(f"[^{re.escape(c)}]*{re.escape(c)}" for c in q))
            found = set(hits)
            extra = [i for i, name in enumerate(self.lowered) if i not in found and pattern.match(name)]
            extra.sort(key=lambda i: len(self.lowered[i]))
            candidates += extra[: CANDIDATES - len(candidates)]
        names = [self.names[i] for i in candidates]
        return [item["value"] for item in rank(query, [{"value": n} for n in names])]


def path_items(cwd: str, partial: str) -> list[dict[str, Any]]:
    """Entries of the folder ``partial`` points into, starting with its last part (Tab)."""
    expanded = os.path.expanduser(partial)
    folder, start = os.path.split(expanded)
    base = folder if os.path.isabs(folder) else os.path.join(cwd, folder)
    try:
        names = sorted(os.listdir(base or cwd))
    except OSError:
        return []
    items = []
    for name in names:
        if not name.startswith(start) or (name.startswith(".") and not start.startswith(".")):
            continue
        shown = os.path.join(os.path.split(partial)[0], name)
        is_dir = os.path.isdir(os.path.join(base or cwd, name))
        items.append({"value": shown + ("/" if is_dir else ""), "label": name + ("/" if is_dir else "")})
    return items[:MAX_ITEMS]


# --------------------------------------------------------------------------- commands


def command_items(entries: list[Any]) -> list[dict[str, Any]]:
    """Completion items for slash commands (``registry.command_entries``): the usage and,
    for a disabled command, why, in the description."""
    items = []
    for entry in entries:
        description = entry.description + (f"  {entry.usage}" if entry.usage else "")
        if entry.availability == "disabled":
            description = f"(disabled: {entry.reason or 'not available right now'}) {description}"
        items.append({"value": "/" + entry.name, "label": "/" + entry.name, "description": description})
    return items


# --------------------------------------------------------------------------- built-in provider

_AT_TOKEN = re.compile(r"(?:^|\s)(@[^\s]*)$")
_WORD = re.compile(r"(?:^|\s)([^\s]*)$")


class CompletionProvider(Protocol):
    """An autocomplete provider: the built-in one, an extension's (``ctx.ui.add_autocomplete_provider``,
    each wrapping the one below), or a dict of such functions."""

    def get_suggestions(self, lines: list[str], cursor_line: int, cursor_col: int,
                        options: dict[str, Any]) -> object:
        """``{"prefix", "items"}`` or None, or an awaitable of it (an extension's may be async)."""

    def apply_completion(self, lines: list[str], cursor_line: int, cursor_col: int, item: dict[str, Any],
                         prefix: str) -> dict[str, Any]:
        """``{"lines", "cursor_line", "cursor_col"}`` once ``item`` replaced ``prefix``."""


# (the provider on top, every trigger character of the stack)
ProviderStack = tuple[CompletionProvider, set[str]]


class BuiltinCompletion:
    """``/`` commands (name, then the command's argument completions), ``@`` files, and
    paths on Tab (``options["force"]``)."""

    trigger_characters = ("/", "@")

    def __init__(self, commands: Callable[[], list[dict[str, Any]]], files: ProjectFiles,
                 argument_completions: Callable[[str, str], Any], cwd: str,
                 resources: Callable[[], list[dict[str, Any]]] | None = None) -> None:
        self.commands = commands  # [{"value": "/name", "label": ..., "description": ...}]
        self.resources = resources  # MCP resources: [{"value": "@server:uri", "label", "description"}]
        self.project_files = files
        self.argument_completions = argument_completions  # (command name, prefix) -> items | None
        self.cwd = cwd

    async def get_suggestions(self, lines: list[str], cursor_line: int, cursor_col: int,
                              options: dict[str, Any] | None = None) -> dict[str, Any] | None:
        before = lines[cursor_line][:cursor_col]
        force = bool((options or {}).get("force"))
        if cursor_line == 0 and before.startswith("/"):
            if " " not in before:
                return {"prefix": before, "items": rank(before[1:], self.commands(), "label")}
            name, _, arg = before[1:].partition(" ")
            items = await _maybe_await(self.argument_completions(name, arg))
            if items:
                return {"prefix": arg, "items": [_as_item(i) for i in items][:MAX_ITEMS]}
            return None
        match = _AT_TOKEN.search(before)
        if match:
            token = match.group(1)
            await self.project_files.refresh()
            items = [{"value": "@" + f, "label": f} for f in self.project_files.best(token[1:])]
            if self.resources is not None and ":" in token:  # @server:uri (MCP resources)
                items = rank(token[1:], self.resources(), "label") + items
            return {"prefix": token, "items": items[:MAX_ITEMS]}
        if force:
            word = _WORD.search(before)
            partial = word.group(1) if word else ""
            items = path_items(self.cwd, partial)
            return {"prefix": partial, "items": items} if items else None
        return None

    def apply_completion(self, lines: list[str], cursor_line: int, cursor_col: int, item: dict[str, Any],
                         prefix: str) -> dict[str, Any]:
        line = lines[cursor_line]
        start = cursor_col - len(prefix)
        value = str(item["value"])
        # A finished command or file gets a space after it; a folder keeps the cursor inside.
        suffix = "" if value.endswith("/") else " "
        new_line = line[:start] + value + suffix + line[cursor_col:]
        out = list(lines)
        out[cursor_line] = new_line
        return {"lines": out, "cursor_line": cursor_line, "cursor_col": start + len(value) + len(suffix)}

    def should_trigger_file_completion(self, lines: list[str], cursor_line: int, cursor_col: int) -> bool:
        return True


def _as_item(item: object) -> dict[str, Any]:
    if isinstance(item, dict):
        value = item.get("value", item.get("label", ""))
        return {"value": value, "label": item.get("label", value), "description": item.get("description")}
    return {"value": str(item), "label": str(item)}


class _DictProvider:
    """A provider given as a dict of functions: attribute access like an object."""

    def __init__(self, spec: dict[str, Any], below: CompletionProvider) -> None:
        self._spec = spec
        self._below = below
        self.trigger_characters = tuple(spec.get("trigger_characters", ()))

    def get_suggestions(self, lines: list[str], cursor_line: int, cursor_col: int,
                        options: dict[str, Any]) -> object:
        fn = self._spec.get("get_suggestions")
        args = (lines, cursor_line, cursor_col, options)
        return fn(*args) if fn else self._below.get_suggestions(*args)

    def apply_completion(self, lines: list[str], cursor_line: int, cursor_col: int, item: dict[str, Any],
                         prefix: str) -> dict[str, Any]:
        fn = self._spec.get("apply_completion")
        args = (lines, cursor_line, cursor_col, item, prefix)
        return fn(*args) if fn else self._below.apply_completion(*args)


# What an autocomplete provider factory that raised is reported as (``<extension>: the
# autocomplete provider failed: <Type>: <message>``).
PROVIDER_FAILED = "the autocomplete provider"


def stack(builtin: BuiltinCompletion, factories: list[Callable[[Any], Any]],
          failed: Callable[[Callable[[Any], Any], Exception], None]) -> ProviderStack:
    """The provider on top after each factory wrapped the one below (a failing one is
    skipped and handed to ``failed`` with its exception), and every trigger character of
    the stack."""
    current: CompletionProvider = builtin
    triggers = set(builtin.trigger_characters)
    for factory in factories:
        try:
            made = factory(current)
        except Exception as exc:
            failed(factory, exc)
            continue
        current = _DictProvider(made, current) if isinstance(made, dict) else made
        triggers.update(getattr(current, "trigger_characters", ()) or ())
    return current, triggers


async def _maybe_await(value: object) -> Any:
    import inspect

    return await value if inspect.isawaitable(value) else value


async def suggestions(provider: CompletionProvider, lines: list[str], cursor_line: int, cursor_col: int,
                      options: dict[str, Any] | None = None) -> dict[str, Any] | None:
    found = await _maybe_await(provider.get_suggestions(lines, cursor_line, cursor_col, options or {}))
    if not found or not found.get("items"):
        return None
    return {"prefix": str(found.get("prefix", "")), "items": [_as_item(i) for i in found["items"]]}
