"""One key language for every key Wolli reads: extension shortcuts, keybindings.json, and the
key events of the full-screen app.

An author may write a key many ways (``ctrl+alt+p``, ``alt+ctrl+p``, ``Alt+P``, ``C-M-p``,
``Shift+F5``); the terminal reports it in Textual's spelling (``alt+ctrl+p``: modifiers in
alphabetical order, ``P`` for Shift+P). Both are parsed into one :class:`Key` whose text
(``str(key)``) is the canonical spelling, so "is this the shortcut?" is a string comparison.

Spellings accepted in a key spec:

- modifiers, any case and any order: ``ctrl`` (``control``, ``ctl``), ``alt`` (``option``,
  ``opt``, ``meta``), ``shift``, ``super`` (``cmd``, ``command``, ``win``), ``hyper``; Emacs
  style single letters are case-sensitive: ``C-`` ctrl, ``M-`` alt, ``S-`` shift, ``s-``
  super, ``H-`` hyper; ``^x`` is ctrl+x;
- separators ``+`` or ``-`` (``ctrl+-`` and ``ctrl++`` name the minus and plus keys);
- keys: a letter or digit (case does not matter in a spec), ``f1``..``f24``, the named keys
  (``enter``/``return``, ``escape``/``esc``, ``tab``, ``space``, ``backspace``, ``delete``/
  ``del``, ``insert``, ``home``, ``end``, ``pageup``/``pgup``, ``pagedown``/``pgdn``, the
  arrows ``up``/``down``/``left``/``right``), or a punctuation character (``,``) or its name
  (``comma``).

This module also knows which keys a terminal *without* the kitty keyboard protocol cannot
send distinctly (Ctrl+Shift+letter arrives as Ctrl+letter, Ctrl+I as Tab, ...), so a
shortcut on such a key can be reported with a key to use instead.
"""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass
from functools import lru_cache

# Textual's modifier names, in the order Textual writes them (alphabetical).
MODIFIERS = ("alt", "ctrl", "hyper", "shift", "super")

_MODIFIER_WORDS = {
    "ctrl": "ctrl", "control": "ctrl", "ctl": "ctrl",
    "alt": "alt", "option": "alt", "opt": "alt", "meta": "alt",
    "shift": "shift",
    "super": "super", "cmd": "super", "command": "super", "win": "super", "windows": "super",
    "hyper": "hyper",
}
# Emacs' one-letter modifiers; case matters (S- is shift, s- is super).
_MODIFIER_LETTERS = {"C": "ctrl", "M": "alt", "S": "shift", "s": "super", "H": "hyper"}

NAMED_KEYS = frozenset({
    "enter", "escape", "tab", "space", "backspace", "delete", "insert", "home", "end", "pageup", "pagedown",
    "up", "down", "left", "right", *(f"f{n}" for n in range(1, 25)),
})
_KEY_ALIASES = {
    "return": "enter", "ret": "enter", "cr": "enter", "esc": "escape", "spacebar": "space",
    "bs": "backspace", "bksp": "backspace", "del": "delete", "ins": "insert",
    "pgup": "pageup", "page_up": "pageup", "page-up": "pageup", "prior": "pageup",
    "pgdn": "pagedown", "pgdown": "pagedown", "page_down": "pagedown", "page-down": "pagedown", "next": "pagedown",
    "arrowup": "up", "arrow_up": "up", "uparrow": "up", "arrowdown": "down", "arrow_down": "down",
    "downarrow": "down", "arrowleft": "left", "arrow_left": "left", "leftarrow": "left",
    "arrowright": "right", "arrow_right": "right", "rightarrow": "right",
    # Textual's spellings of a few keys, and names people use for punctuation
    "@": "at", "newline": "ctrl+j", "dash": "minus", "hyphen": "minus", "period": "full_stop", "dot": "full_stop",
    "question": "question_mark", "backquote": "grave_accent", "backtick": "grave_accent",
    "quote": "apostrophe", "equals": "equals_sign", "equal": "equals_sign", "pipe": "vertical_line",
    "caret": "circumflex_accent", "hash": "number_sign",
}
# Unicode names Textual shortens (the same replacements, so names match its key events).
_SHORT_NAMES = {"solidus": "slash", "reverse_solidus": "backslash", "commercial_at": "at",
                "hyphen_minus": "minus", "plus_sign": "plus", "low_line": "underscore"}


class KeySpecError(ValueError):
    """A key spec that does not name a key; the message says what is wrong."""


@dataclass(frozen=True)
class Key:
    """A key with its modifiers; ``str(key)`` is the canonical spelling (``alt+ctrl+p``)."""

    name: str
    modifiers: frozenset[str] = frozenset()

    def __str__(self) -> str:
        return "+".join([*(m for m in MODIFIERS if m in self.modifiers), self.name])

    @property
    def is_character(self) -> bool:
        """A key that types a character (a letter, digit, punctuation, space)."""
        return self.name not in NAMED_KEYS or self.name == "space"

    @property
    def types_text(self) -> bool:
        """Pressed in the editor, this key would type text: no modifier but Shift."""
        return self.is_character and not (self.modifiers - {"shift"})

    def shown(self) -> str:
        """For people: ``Ctrl+Alt+P``, ``Shift+F5``, ``Alt+,``."""
        order = ("ctrl", "alt", "shift", "super", "hyper")
        parts = [m.capitalize() for m in order if m in self.modifiers]
        return "+".join([*parts, _shown_name(self.name)])


def _shown_name(name: str) -> str:
    if len(name) == 1:
        return name.upper()
    if name.startswith("f") and name[1:].isdigit():
        return name.upper()
    char = character_of(name)
    if char is not None and name not in NAMED_KEYS:
        return char
    return {"pageup": "PageUp", "pagedown": "PageDown", "escape": "Esc"}.get(name, name.capitalize())


def char_key(char: str) -> str:
    """The key name of one typed character, as Textual names it (``,`` -> ``comma``)."""
    if char.isalnum():
        return char
    if char == " ":
        return "space"
    try:
        name = unicodedata.name(char).lower().replace("-", "_").replace(" ", "_")
    except ValueError:
        return char
    return _SHORT_NAMES.get(name, name)


@lru_cache(256)
def character_of(name: str) -> str | None:
    """The character a punctuation key name stands for (``comma`` -> ``,``), or None."""
    if len(name) == 1:
        return name
    long = {v: k for k, v in _SHORT_NAMES.items()}.get(name, name)
    try:
        return unicodedata.lookup(long.replace("_", " ").upper().replace("HYPHEN MINUS", "HYPHEN-MINUS")
                                  .replace("LESS THAN", "LESS-THAN").replace("GREATER THAN", "GREATER-THAN"))
    except KeyError:
        return None


def _key_name(token: str) -> str:
    """A key token of a spec (no modifiers) as the canonical key name."""
    if len(token) == 1:
        return char_key(token.lower())
    lowered = token.lower()
    if lowered in NAMED_KEYS:
        return lowered
    if lowered in _KEY_ALIASES:
        return _KEY_ALIASES[lowered]
    if character_of(lowered) is not None:  # a punctuation key by its (Textual) name
        return lowered
    raise KeySpecError(f"{token!r} is not a key name" + _nearest(lowered))


def _nearest(word: str) -> str:
    import difflib

    known = [*NAMED_KEYS, *_KEY_ALIASES, *_MODIFIER_WORDS]
    near = difflib.get_close_matches(word, known, n=1, cutoff=0.6)
    return f"; did you mean {near[0]!r}?" if near else ""


def _split(spec: str) -> list[str]:
    """Tokens of a spec; a trailing separator is the key itself (``ctrl++``, ``C--``)."""
    text = spec.strip()
    if len(text) <= 1:
        return [text]
    separator = "+" if "+" in text[:-1] else "-" if "-" in text[:-1] else None
    if separator is None or text.lower() in _KEY_ALIASES:
        return [text]
    parts = text.split(separator)
    if text.endswith(separator * 2):
        parts = [*parts[:-2], separator]
    return [p.strip() for p in parts]


@lru_cache(1024)
def parse_key(spec: str) -> Key:
    """A key spec as an author writes it; raises :class:`KeySpecError` saying what is wrong."""
    if not isinstance(spec, str) or not spec.strip():
        raise KeySpecError("a key is needed, such as 'ctrl+alt+p' or 'f6'")
    text = spec.strip()
    if text.startswith("^") and len(text) == 2:
        return Key(_key_name(text[1]), frozenset({"ctrl"}))
    tokens = _split(text)
    *mods, last = tokens
    modifiers: set[str] = set()
    for token in mods:
        modifier = _MODIFIER_LETTERS.get(token) or _MODIFIER_WORDS.get(token.lower())
        if modifier is None:
            raise KeySpecError(f"{token!r} in {spec!r} is not a modifier (ctrl, alt, shift, super)"
                               + _nearest(token.lower()))
        modifiers.add(modifier)
    if not last:
        raise KeySpecError(f"{spec!r} names modifiers but no key")
    if last.lower() in _MODIFIER_WORDS:
        raise KeySpecError(f"{spec!r} ends with the modifier {last!r}; add the key, e.g. '{spec}+p'")
    name = _key_name(last)
    if "+" in name:  # an alias that is itself a combination (newline -> ctrl+j)
        inner = parse_key(name)
        return Key(inner.name, frozenset(modifiers | inner.modifiers))
    if name == "at" and "ctrl" in modifiers:
        name = "space"  # Ctrl+@ and Ctrl+Space are one key (NUL)
    return Key(name, frozenset(modifiers))


@lru_cache(1024)
def event_key(name: str) -> Key | None:
    """A key event's name as Textual reports it (``alt+ctrl+p``, ``P``, ``ctrl+@``), or None
    when it is not a key (Textual's internal names)."""
    if not name:
        return None
    *mods, last = name.split("+") if name != "+" else ["+"]
    modifiers = {"alt" if m == "meta" else m for m in mods if m}
    if not all(m in MODIFIERS for m in modifiers) or not last:
        return None
    if len(last) == 1 and last.isalpha() and last.isupper():  # Textual's Shift+letter
        modifiers.add("shift")
        last = last.lower()
    elif len(last) == 1:
        last = char_key(last.lower() if last.isalpha() else last)
    if last in ("@", "at") and "ctrl" in modifiers:
        last = "space"
    return Key(last, frozenset(modifiers))


def canonical(spec: str) -> str:
    """The canonical spelling of an author's key spec (raises :class:`KeySpecError`)."""
    return str(parse_key(spec))


def event_canonical(name: str) -> str:
    """The canonical spelling of a key event's name (unknown names come back as they are)."""
    key = event_key(name)
    return str(key) if key is not None else name


# Keys the terminal sends as another key: Ctrl+I is Tab, Ctrl+M Enter, Ctrl+H Backspace and
# Ctrl+[ Escape in every terminal, whatever the protocol.
SAME_AS = {"ctrl+i": "tab", "ctrl+m": "enter", "ctrl+h": "backspace", "ctrl+left_square_bracket": "escape"}
# Ctrl+punctuation a legacy terminal can send (as the C0 control character).
_LEGACY_CTRL_PUNCTUATION = frozenset({"space", "backslash", "right_square_bracket", "circumflex_accent",
                                      "underscore"})


def legacy_problem(key: Key) -> str | None:
    """Why a terminal without the kitty keyboard protocol cannot send ``key`` as itself (and
    what to use instead), or None when it can. Such terminals (tmux, screen, most Linux
    terminals by default) send a key and its modifiers as a few bytes that lose some
    modifiers: Ctrl+Shift+P is the same byte as Ctrl+P."""
    mods, name = key.modifiers, key.name
    if mods & {"super", "hyper"}:
        other = Key(name, frozenset((mods - {"super", "hyper"}) | {"ctrl", "alt"}))
        return f"{key.shown()} needs the kitty keyboard protocol; use {other.shown()}"
    if "ctrl" in mods and str(Key(name, frozenset({"ctrl"}))) in SAME_AS:
        same = SAME_AS[str(Key(name, frozenset({"ctrl"})))]
        other = Key(name, frozenset((mods - {"ctrl"}) | {"alt"}))
        return f"{key.shown()} is the same key as {same.capitalize()} in a terminal; use {other.shown()}"
    if "ctrl" in mods and "shift" in mods and key.is_character and len(name) == 1 and name.isalpha():
        other = Key(name, frozenset((mods - {"shift"}) | {"alt"}))
        return (f"{key.shown()} arrives as {Key(name, frozenset(mods - {'shift'})).shown()} without the kitty "
                f"keyboard protocol; use {other.shown()}")
    if "ctrl" in mods and key.is_character and not (len(name) == 1 and name.isalpha()) \
            and name not in _LEGACY_CTRL_PUNCTUATION:
        other = Key(name, frozenset((mods - {"ctrl"}) | {"alt"}))
        return f"most terminals cannot send {key.shown()} without the kitty keyboard protocol; use {other.shown()}"
    if name in ("enter", "backspace", "space") and mods & {"ctrl", "shift"} and not (
            name == "space" and mods == {"ctrl"}):
        return (f"most terminals send {key.shown()} as {Key(name, frozenset(mods - {'ctrl', 'shift'})).shown()} "
                f"without the kitty keyboard protocol; use {Key(name, frozenset({'alt'})).shown()}")
    if name == "tab" and mods - {"shift"}:
        return f"most terminals cannot send {key.shown()}; use another key (an Alt+letter, or F1-F12)"
    if name == "escape" and mods:
        return f"terminals send {key.shown()} as Esc; use another key (an Alt+letter, or F1-F12)"
    return None
