"""One key language (wolli/config/keys.py): an author's spelling and the terminal's key event
name parse to the same key, whatever the modifier order, case or separator."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wolli.config.keys import (
    Key,
    KeySpecError,
    canonical,
    event_canonical,
    event_key,
    legacy_problem,
    parse_key,
)

# How an author may spell each modifier (case-insensitive words, case-sensitive Emacs letters).
SPELLINGS = {
    "ctrl": ["ctrl", "Ctrl", "CTRL", "control", "Control", "ctl", "C"],
    "alt": ["alt", "Alt", "ALT", "option", "opt", "meta", "Meta", "M"],
    "shift": ["shift", "Shift", "SHIFT", "S"],
}
LETTERS = "abcdefgjklnopqrstuvwxyz"  # not i/m/h: Ctrl+I/M/H are other keys in a terminal


def _textual_name(modifiers: set[str], name: str) -> str:
    """How Textual names the key event: modifiers in alphabetical order, then the key."""
    return "+".join([*sorted(modifiers), name])


@st.composite
def spelled_keys(draw):
    """(what an author wrote, the modifiers, the key name)."""
    modifiers = draw(st.sets(st.sampled_from(sorted(SPELLINGS)), min_size=1))
    if modifiers == {"shift"}:
        modifiers = {"shift", "ctrl"}
    name = draw(st.one_of(st.sampled_from(LETTERS), st.sampled_from([f"f{n}" for n in range(1, 13)]),
                          st.sampled_from(["pageup", "home", "left", "delete", "comma", "slash"])))
    emacs = draw(st.booleans())
    words = []
    for modifier in draw(st.permutations(sorted(modifiers))):
        choices = [s for s in SPELLINGS[modifier] if (len(s) == 1) == emacs] or SPELLINGS[modifier][:1]
        words.append(draw(st.sampled_from(choices)))
    key_text = draw(st.sampled_from([name, name.upper()])) if len(name) == 1 else draw(
        st.sampled_from([name, name.capitalize(), name.upper()]))
    separator = "-" if emacs and all(len(w) == 1 for w in words) else draw(st.sampled_from(["+", " + "]))
    return separator.join([*words, key_text]), modifiers, name


@settings(max_examples=300)
@given(spelled_keys())
def test_any_spelling_and_modifier_order_is_one_key(case):
    spec, modifiers, name = case
    key = parse_key(spec)
    assert key == Key(name, frozenset(modifiers))
    assert str(key) == _textual_name(modifiers, name)
    # the terminal's name for the same key (and Textual's upper-case Shift+letter) match it
    assert event_canonical(_textual_name(modifiers, name)) == str(key)
    if "shift" in modifiers and len(name) == 1:
        legacy = _textual_name(modifiers - {"shift"}, name.upper())
        assert event_canonical(legacy) == str(key)
    assert parse_key(str(key)) == key  # the canonical spelling parses to itself


@pytest.mark.parametrize(("spec", "expected"), [
    ("ctrl+alt+p", "alt+ctrl+p"), ("alt+ctrl+p", "alt+ctrl+p"), ("Alt+P", "alt+p"), ("C-M-p", "alt+ctrl+p"),
    ("shift+f5", "shift+f5"), ("ctrl+shift+k", "ctrl+shift+k"), ("^p", "ctrl+p"), ("F6", "f6"),
    ("ctrl++", "ctrl+plus"), ("ctrl+-", "ctrl+minus"), ("ctrl+,", "ctrl+comma"), ("Esc", "escape"),
    ("Return", "enter"), ("PgUp", "pageup"), ("shift+page-down", "shift+pagedown"), ("ctrl+@", "ctrl+space"),
    ("cmd+k", "super+k"), ("s-k", "super+k"), ("S-k", "shift+k"),
])
def test_spellings(spec, expected):
    assert canonical(spec) == expected


@pytest.mark.parametrize(("spec", "said"), [
    ("", "a key is needed"), ("ctrl+alt", "ends with the modifier"), ("ctrl+pgup2", "did you mean 'pgup'"),
    ("ctrl+foo", "'foo' is not a key name"), ("hyperx+p", "is not a modifier"),
])
def test_what_is_not_a_key_says_why(spec, said):
    with pytest.raises(KeySpecError, match=said):
        parse_key(spec)


def test_textual_event_names():
    assert event_canonical("alt+ctrl+p") == "alt+ctrl+p"
    assert event_canonical("P") == "shift+p"  # Textual's Shift+P
    assert event_canonical("alt+ctrl+shift+P") == "alt+ctrl+shift+p"  # kitty reports the shifted letter
    assert event_canonical("ctrl+@") == "ctrl+space"
    assert event_canonical("meta+x") == "alt+x"
    assert event_key("question_mark") == Key("question_mark")


def test_what_a_terminal_without_the_kitty_protocol_cannot_send():
    def problem(spec):
        return legacy_problem(parse_key(spec))

    assert problem("ctrl+alt+p") is None and problem("alt+p") is None and problem("f6") is None
    assert problem("ctrl+p") is None and problem("shift+f5") is None and problem("ctrl+space") is None
    assert "arrives as Ctrl+K" in problem("ctrl+shift+k") and "use Ctrl+Alt+K" in problem("ctrl+shift+k")
    assert "same key as Tab" in problem("ctrl+i")
    assert "use Alt+1" in problem("ctrl+1")
    assert "kitty keyboard protocol" in problem("super+k")
    assert "Enter" in problem("shift+enter")


def test_shown_for_people():
    assert parse_key("alt+ctrl+p").shown() == "Ctrl+Alt+P"
    assert parse_key("ctrl+comma").shown() == "Ctrl+,"
    assert parse_key("pagedown").shown() == "PageDown"
    assert parse_key("alt+x").types_text is False and parse_key("shift+x").types_text is True


def test_keybindings_json_speaks_the_same_language(wolli_home):
    from wolli.config.keybindings import KeybindingsManager, current_keys, load_keybindings

    path = wolli_home / "keybindings.json"
    path.write_text(json.dumps({"app.tools.expand": "Ctrl+Alt+E", "app.thinking.toggle": "ctrl+bogus"}))
    bindings, errors = load_keybindings(path)
    assert bindings == {"app.tools.expand": ["alt+ctrl+e"]}
    assert len(errors) == 1 and "'bogus' is not a key name" in errors[0] and "app.thinking.toggle" in errors[0]
    assert current_keys()["app.tools.expand"] == ("alt+ctrl+e",)
    assert KeybindingsManager().matches("alt+ctrl+e", "app.tools.expand")  # the event's spelling
