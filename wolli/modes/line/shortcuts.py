"""Extension shortcuts at the line mode's prompt: each key as prompt_toolkit names it.

prompt_toolkit reads a terminal's keys the legacy way (no kitty keyboard protocol), so a key
such a terminal cannot send as itself is reported like in the TUI, and a few keys it has no
name for (Shift+F5, Ctrl+Alt+Home) are reported as not available here. Shortcuts fire while
the prompt waits for input; while the agent works the keyboard only stops the run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from prompt_toolkit.key_binding import KeyBindings
from prompt_toolkit.key_binding.key_processor import KeyPressEvent
from prompt_toolkit.keys import ALL_KEYS

from ...config.keys import NAMED_KEYS, Key, character_of, event_key, legacy_problem

_NAVIGATION = ("up", "down", "left", "right", "home", "end", "pageup", "pagedown", "delete", "insert")
_CTRL_PUNCTUATION = "\\]^_"


def _base(key: Key, modifiers: set[str]) -> str | None:
    """The prompt_toolkit name of ``key`` without Alt, or None when it has none."""
    name = key.name
    if len(name) == 1 and name.isalnum():
        if not modifiers:
            return name
        if modifiers == {"ctrl"} and name.isalpha():
            return f"c-{name}"
        if modifiers == {"shift"} and name.isalpha():
            return name.upper()
        return None
    if name in _NAVIGATION:
        prefix = {frozenset(): "", frozenset({"ctrl"}): "c-", frozenset({"shift"}): "s-",
                  frozenset({"ctrl", "shift"}): "c-s-"}.get(frozenset(modifiers))
        return None if prefix is None else prefix + name
    if name.startswith("f") and name[1:].isdigit():
        return name if not modifiers else f"c-{name}" if modifiers == {"ctrl"} else None
    if name == "space":
        return " " if not modifiers else "c-@" if modifiers == {"ctrl"} else None
    if name in ("enter", "tab", "escape", "backspace"):
        if not modifiers:
            return name
        return "s-tab" if name == "tab" and modifiers == {"shift"} else None
    char = character_of(name) if name not in NAMED_KEYS else None
    if char is None:
        return None
    if not modifiers:
        return char
    return f"c-{char}" if modifiers == {"ctrl"} and char in _CTRL_PUNCTUATION else None


def prompt_keys(key: Key) -> tuple[str, ...] | None:
    """``key`` as a prompt_toolkit key sequence (Alt is Escape first), or None."""
    modifiers = set(key.modifiers)
    alt = "alt" in modifiers
    modifiers.discard("alt")
    if modifiers & {"super", "hyper"}:
        return None
    base = _base(key, modifiers)
    if base is None or (len(base) > 1 and base not in ALL_KEYS):
        return None
    return ("escape", base) if alt else (base,)


def shortcut_bindings(shortcuts: dict[str, Any], taken: dict[str, str],
                      run: Callable[[Any], Any]) -> tuple[KeyBindings, list[str]]:
    """Bindings for every shortcut no built-in key has, and a line per shortcut that cannot be
    bound here (the TUI's own report covers the rest)."""
    bindings = KeyBindings()
    problems: list[str] = []
    for canonical, shortcut in shortcuts.items():
        key = event_key(canonical)
        keys = prompt_keys(key) if key is not None else None
        if key is None or canonical in taken:
            continue
        if keys is None:
            if legacy_problem(key) is not None:
                continue  # said already: no terminal without the kitty protocol sends it
            problems.append(f"{shortcut.owner}: shortcut {key.shown()} cannot be pressed in the line mode; "
                            "it works in the full-screen app")
            continue

        def fire(event: KeyPressEvent, shortcut: object = shortcut) -> None:
            event.app.create_background_task(run(shortcut))

        bindings.add(*keys)(fire)
    return bindings, problems
