"""key_hint / key_text follow keybindings.json (pi's ids or the short names)."""

from __future__ import annotations

import json
import os

from wolli import key_hint, key_text, raw_key_hint
from wolli.config.keybindings import active_keys


def test_defaults_and_overrides_by_pi_id_or_short_name(wolli_home):
    assert key_text("app.tools.expand") == "Ctrl+O"
    assert key_hint("app.tools.expand", "to expand") == "Ctrl+O to expand"
    path = wolli_home / "keybindings.json"
    path.write_text(json.dumps({"app.tools.expand": ["ctrl+e", "f2"]}))
    assert key_text("app.tools.expand") == "Ctrl+E/F2"
    path.write_text(json.dumps({"expandTools": "ctrl+x"}))
    os.utime(path, (1, 1))  # a different mtime: the cache must notice
    assert key_hint("app.tools.expand", "to expand") == "Ctrl+X to expand"
    assert key_text("app.unknown") == "" and key_hint("app.unknown", "x") == "x"
    assert raw_key_hint("ctrl+s", "to save") == "Ctrl+S to save"


def test_active_keys_keep_every_default_not_overridden():
    keys = active_keys({"newline": ["ctrl+j"]})
    assert keys["tui.input.newLine"] == ("ctrl+j",) and keys["tui.input.submit"] == ("enter",)


def test_the_keybindings_manager_given_to_custom_components(wolli_home):
    from wolli.config.keybindings import KeybindingsManager

    keys = KeybindingsManager()
    assert keys.matches("enter", "tui.select.confirm") and not keys.matches("y", "tui.select.confirm")
    (wolli_home / "keybindings.json").write_text(json.dumps({"selectConfirm": ["y", "enter"]}))
    assert keys.keys("tui.select.confirm") == ("y", "enter") and keys.matches("y", "selectConfirm")
    assert keys.text("tui.select.confirm") == "Y/Enter"
