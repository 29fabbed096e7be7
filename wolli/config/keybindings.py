"""``WOLLI_HOME/keybindings.json``: the user's keys for the TUI's actions.

``{"<action>": "ctrl+k"}`` or ``{"<action>": ["ctrl+k", "alt+k"]}``. Problems (invalid JSON,
a value that is not a key or a list of keys, an unknown action) are reported one line each
with the file, line and action, and the rest of the file still applies. The TUI adds its
actions to :data:`ACTIONS` as it grows; extensions' shortcuts are registered separately.
"""

from __future__ import annotations

import difflib
import json
from pathlib import Path

from ..base.json_input import parse_json
from ..base.safe_files import CONFIG_FILE_LIMIT, read_text_capped
from .errors import config_error, json_syntax_error, locate
from .keys import KeySpecError, canonical, event_canonical, parse_key

# The app's actions by pi's ids, with their default keys (docs/tui.md). A keybindings.json
# may use these ids or the short names in ``ALIASES``.
DEFAULT_KEYS: dict[str, tuple[str, ...]] = {
    "tui.input.submit": ("enter",),
    "tui.input.newLine": ("shift+enter", "ctrl+j"),
    "app.message.followUp": ("alt+enter", "ctrl+enter"),
    "app.interrupt": ("escape",),
    "app.clear": ("ctrl+c",),
    "app.exit": ("ctrl+d",),
    "app.suspend": ("ctrl+z",),
    "app.thinking.cycle": ("shift+tab",),
    "app.model.cycleForward": ("ctrl+p",),
    "app.model.cycleBackward": ("ctrl+shift+p",),
    "app.model.select": ("ctrl+l",),
    "app.tools.expand": ("ctrl+o",),
    "app.thinking.toggle": ("ctrl+t",),
    "app.editor.external": ("ctrl+g",),
    "app.clipboard.pasteImage": ("ctrl+v",),
    "app.transcript.earlier": ("ctrl+home",),
    "app.transcript.pageUp": ("pageup",),
    "app.transcript.pageDown": ("pagedown",),
    "app.transcript.end": ("ctrl+end",),
    "app.commandPalette": ("ctrl+s", "f1"),
    # Not Shift+Tab as in Claude Code: that is pi's (and Wolli's) thinking-level key.
    "app.permissions.cycle": ("alt+m",),
    # Esc twice on an empty editor while the agent is idle opens /rewind (not a binding:
    # Esc alone interrupts; the app counts the second press).
    # Unbound until keybindings.json gives them keys (as in pi).
    "app.session.new": (),
    "app.session.tree": (),
    "app.session.fork": (),
    "app.session.resume": (),
    "tui.select.up": ("up",),
    "tui.select.down": ("down",),
    "tui.select.confirm": ("enter",),
    "tui.select.cancel": ("escape",),
}

# Short names (Wolli's first keybindings.json spelling) -> pi ids.
ALIASES: dict[str, str] = {
    "submit": "tui.input.submit", "newline": "tui.input.newLine", "followUp": "app.message.followUp",
    "interrupt": "app.interrupt", "clear": "app.clear", "exit": "app.exit", "suspend": "app.suspend",
    "cycleThinkingLevel": "app.thinking.cycle", "cycleModel": "app.model.cycleForward",
    "selectModel": "app.model.select", "expandTools": "app.tools.expand",
    "toggleThinking": "app.thinking.toggle", "externalEditor": "app.editor.external",
    "selectUp": "tui.select.up", "selectDown": "tui.select.down", "selectConfirm": "tui.select.confirm",
    "selectCancel": "tui.select.cancel", "cycleModelBackward": "app.model.cycleBackward",
    "commandPalette": "app.commandPalette", "cyclePermissionMode": "app.permissions.cycle",
    "newSession": "app.session.new", "tree": "app.session.tree",
    "fork": "app.session.fork", "resume": "app.session.resume", "pasteImage": "app.clipboard.pasteImage",
    "pageUp": "app.transcript.pageUp", "pageDown": "app.transcript.pageDown", "transcriptEnd": "app.transcript.end",
    "transcriptTop": "app.transcript.earlier",
}

# Everything a user may name in keybindings.json (some short names are for keys to come).
ACTIONS: tuple[str, ...] = (
    *DEFAULT_KEYS,
    "submit", "newline", "interrupt", "clear", "exit", "suspend", "cycleThinkingLevel", "cycleModel",
    "selectModel", "expandTools", "toggleThinking", "externalEditor", "followUp", "dequeue",
    "pasteImage", "newSession", "tree", "fork", "resume", "cursorUp", "cursorDown", "cursorLeft",
    "cursorRight", "cursorWordLeft", "cursorWordRight", "cursorLineStart", "cursorLineEnd",
    "deleteCharBackward", "deleteCharForward", "deleteWordBackward", "deleteWordForward",
    "deleteToLineStart", "deleteToLineEnd", "pageUp", "pageDown", "selectUp", "selectDown",
    "selectConfirm", "selectCancel",
    "cycleModelBackward", "commandPalette", "transcriptEnd", "transcriptTop", "cyclePermissionMode",
)


def active_keys(bindings: dict[str, list[str]]) -> dict[str, tuple[str, ...]]:
    """Every action id with its keys: the defaults, overridden by ``bindings`` (ids or aliases)."""
    keys = dict(DEFAULT_KEYS)
    for name, value in bindings.items():
        keys[ALIASES.get(name, name)] = tuple(value)
    return keys


_cache: dict[str, tuple[float, dict[str, tuple[str, ...]]]] = {}


def current_keys() -> dict[str, tuple[str, ...]]:
    """The active keys from ``WOLLI_HOME/keybindings.json`` (re-read when the file changes)."""
    from .paths import keybindings_path

    path = keybindings_path()
    try:
        stamp = path.stat().st_mtime
    except OSError:
        stamp = -1.0
    cached = _cache.get(str(path))
    if cached is None or cached[0] != stamp:
        cached = (stamp, active_keys(load_keybindings(path)[0]))
        _cache[str(path)] = cached
    return cached[1]


class KeybindingsManager:
    """What custom components and custom editors get as ``keybindings``: the active keys of
    each action id (pi's ids or the short names), following keybindings.json."""

    def keys(self, action: str) -> tuple[str, ...]:
        return current_keys().get(ALIASES.get(action, action), ())

    def matches(self, key: str, action: str) -> bool:
        """Whether a pressed ``key`` (Textual's name, e.g. ``"ctrl+o"``) triggers ``action``."""
        return event_canonical(key) in self.keys(action)

    def text(self, action: str) -> str:
        return key_text(action)


def _shown(key: str) -> str:
    try:
        return parse_key(key).shown()
    except KeySpecError:
        return key


def key_text(keybinding: str) -> str:
    """The configured keys of an action id (``"app.tools.expand"`` -> ``"Ctrl+O"``), or ""."""
    keys = current_keys().get(ALIASES.get(keybinding, keybinding), ())
    return "/".join(_shown(k) for k in keys)


def key_hint(keybinding: str, description: str) -> str:
    """``"Ctrl+O to expand"`` for an action id, following the user's keybindings.json."""
    text = key_text(keybinding)
    return f"{text} {description}" if text else description


def raw_key_hint(key: str, description: str) -> str:
    """The same for a key given as it is (``raw_key_hint("ctrl+s", "to save")``)."""
    return f"{_shown(key)} {description}"


def load_keybindings(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The bindings in ``path`` (action -> keys) and the problems found; a missing file is
    no bindings and no problems."""
    try:
        text = read_text_capped(path, CONFIG_FILE_LIMIT)
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [config_error(path, f"cannot read it ({exc})", hint="using the default keys")]
    if not text.strip():
        return {}, []
    try:
        data = parse_json(text)
    except json.JSONDecodeError as exc:
        return {}, [json_syntax_error(path, exc, "using the default keys until it is fixed")]
    if not isinstance(data, dict):
        return {}, [config_error(path, 'expected an object like {"submit": "enter"}', line=1,
                                 hint="using the default keys")]
    bindings: dict[str, list[str]] = {}
    errors: list[str] = []
    for action, value in data.items():
        line = locate(text, action)
        shown = action if action.isprintable() else json.dumps(action)  # one line per problem
        if action not in ACTIONS:
            near = difflib.get_close_matches(action, ACTIONS, n=1, cutoff=0.6)
            hint = f"did you mean {near[0]!r}?" if near else "see docs/settings.md for the actions"
            errors.append(config_error(path, "unknown action", line=line, field=shown, hint=hint))
            continue
        keys = [value] if isinstance(value, str) else value
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k.strip() for k in keys):
            errors.append(config_error(path, f"expected a key or a list of keys, got {json.dumps(value)}",
                                       line=line, field=shown, hint="keeping the default for it"))
            continue
        parsed: list[str] = []
        for key in keys:
            try:  # one spelling for every key (keys.py): "ctrl+alt+p" is the "alt+ctrl+p" the app sees
                parsed.append(canonical(key))
            except KeySpecError as exc:
                errors.append(config_error(path, str(exc), line=line, field=shown, hint="keeping the default for it"))
                break
        else:
            bindings[action] = parsed
    return bindings, errors
