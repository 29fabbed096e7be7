"""Configuration problems point at the line: the locator and keybindings.json."""

from __future__ import annotations

from pathlib import Path

from wolli.config.errors import locate
from wolli.config.keybindings import load_keybindings

TEXT = '{\n  "providers": {\n    "local": {\n      "api": "x",\n      "models": [\n        {"id": "a"},\n        {"id": "b"}\n      ]\n    }\n  }\n}'


def test_locate_walks_the_dotted_path() -> None:
    assert locate(TEXT, "providers") == 2
    assert locate(TEXT, "providers.local.api") == 4
    assert locate(TEXT, "providers.local.models[1].id") == 7
    assert locate(TEXT, "providers.local.models[0]") == 6
    assert locate(TEXT, "nothing.here") is None
    assert locate(TEXT, "providers.local.nope") == 3  # the deepest step found


def test_keybindings_keep_the_good_entries_and_report_the_rest(tmp_path: Path) -> None:
    path = tmp_path / "keybindings.json"
    path.write_text('{\n  "submit": ["Ctrl+S", "enter"],\n  "interupt": "escape",\n  "clear": []\n}')
    bindings, errors = load_keybindings(path)
    assert bindings == {"submit": ["ctrl+s", "enter"]}
    assert errors == [
        f"{path}:3: interupt: unknown action; did you mean 'interrupt'?",
        f"{path}:4: clear: expected a key or a list of keys, got []; keeping the default for it",
    ]
    assert load_keybindings(tmp_path / "missing.json") == ({}, [])
    path.write_text("[1]")
    assert load_keybindings(path)[1][0].startswith(f"{path}:1: expected an object")


def test_a_keybinding_name_with_a_line_break_is_reported_on_one_line(tmp_path):
    path = tmp_path / "keybindings.json"
    path.write_text('{"\\n": "ctrl+x"}')
    bindings, errors = load_keybindings(path)
    assert bindings == {} and len(errors) == 1 and "\n" not in errors[0] and '"\\n"' in errors[0]
