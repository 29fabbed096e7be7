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

from .errors import config_error, json_syntax_error, locate

# The actions a user can rebind (the TUI's defaults live with the TUI).
ACTIONS: tuple[str, ...] = (
    "submit", "newline", "interrupt", "clear", "exit", "suspend", "cycleThinkingLevel", "cycleModel",
    "selectModel", "expandTools", "toggleThinking", "externalEditor", "followUp", "dequeue",
    "pasteImage", "newSession", "tree", "fork", "resume", "cursorUp", "cursorDown", "cursorLeft",
    "cursorRight", "cursorWordLeft", "cursorWordRight", "cursorLineStart", "cursorLineEnd",
    "deleteCharBackward", "deleteCharForward", "deleteWordBackward", "deleteWordForward",
    "deleteToLineStart", "deleteToLineEnd", "pageUp", "pageDown", "selectUp", "selectDown",
    "selectConfirm", "selectCancel",
)


def load_keybindings(path: Path) -> tuple[dict[str, list[str]], list[str]]:
    """The bindings in ``path`` (action -> keys) and the problems found; a missing file is
    no bindings and no problems."""
    try:
        text = path.read_text("utf-8")
    except FileNotFoundError:
        return {}, []
    except (OSError, UnicodeDecodeError) as exc:
        return {}, [config_error(path, f"cannot read it ({exc})", hint="using the default keys")]
    if not text.strip():
        return {}, []
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        return {}, [json_syntax_error(path, exc, "using the default keys until it is fixed")]
    if not isinstance(data, dict):
        return {}, [config_error(path, 'expected an object like {"submit": "enter"}', line=1,
                                 hint="using the default keys")]
    bindings: dict[str, list[str]] = {}
    errors: list[str] = []
    for action, value in data.items():
        line = locate(text, action)
        if action not in ACTIONS:
            near = difflib.get_close_matches(action, ACTIONS, n=1, cutoff=0.6)
            hint = f"did you mean {near[0]!r}?" if near else "see docs/settings.md for the actions"
            errors.append(config_error(path, "unknown action", line=line, field=action, hint=hint))
            continue
        keys = [value] if isinstance(value, str) else value
        if not isinstance(keys, list) or not keys or not all(isinstance(k, str) and k.strip() for k in keys):
            errors.append(config_error(path, f"expected a key or a list of keys, got {json.dumps(value)}",
                                       line=line, field=action, hint="keeping the default for it"))
            continue
        bindings[action] = [k.strip().lower() for k in keys]
    return bindings, errors
