"""Text from outside (a model, a tool, a file name) made safe to show or store.

:func:`terminal_safe` is the one place where text bound for a terminal loses its power
over it. A model's answer, a tool's output or a file name can hold escape sequences that
would move the cursor, rewrite what is already on the screen, retitle the window, set the
clipboard (OSC 52) or make a link say one thing and open another (OSC 8). Every surface
that writes such text to a terminal (the TUI, the line mode, print mode on a tty) passes it
through here first; what is left is shown literally:

* C0 control characters (ESC, BEL, backspace, ...) become the matching Unicode *control
  picture* (``\\x1b`` -> ``␛``), so they stay visible without acting;
* DEL becomes ``␡``; C1 controls (U+0080-U+009F, e.g. the one-byte CSI ``\\x9b``) become
  ``\\x9b`` written out;
* a carriage return ends a line (``\\r\\n`` and a lone ``\\r`` both become ``\\n``): progress
  bars read as lines instead of overwriting each other;
* newlines and tabs are kept; a lone surrogate (undecodable input) becomes U+FFFD, which a
  UTF-8 terminal can print;
* the bidirectional embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069) are
  written out (``\\u202e``): a terminal that reorders text by them would show a command or a
  line of code in an order other than the one it runs in ("Trojan Source"). Right-to-left
  text itself needs none of them and is shown as it is.

:func:`one_line_safe` does the same for a one-row place (a menu entry), where a newline or
a tab would break the row: they become pictures as well.

:func:`without_surrogates` is the storage counterpart: a session file or a request body
must be valid UTF-8, so lone surrogates become U+FFFD there.
"""

from __future__ import annotations

import re

_BIDI_CONTROLS = "\u202a-\u202e\u2066-\u2069"
_UNSAFE = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f\ud800-\udfff{_BIDI_CONTROLS}]")
_UNSAFE_IN_A_LINE = re.compile(f"[\x00-\x1f\x7f-\x9f\ud800-\udfff{_BIDI_CONTROLS}]")
_SURROGATE = re.compile("[\ud800-\udfff]")


def _picture(match: re.Match[str]) -> str:
    char = match.group()
    code = ord(char)
    if code < 0x20:
        return chr(0x2400 + code)
    if code == 0x7F:
        return "\u2421"
    if code <= 0x9F:
        return f"\\x{code:02x}"
    if 0xD800 <= code <= 0xDFFF:  # a lone surrogate
        return "\ufffd"
    return f"\\u{code:04x}"  # a bidirectional control


def terminal_safe(text: str) -> str:
    """``text`` with every terminal control neutralised (see the module docstring)."""
    if _UNSAFE.search(text) is None:  # the common case: one scan, no copy
        return text
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return _UNSAFE.sub(_picture, text)


def one_line_safe(text: str) -> str:
    """``text`` for a place that has one row (a menu entry, a label): as :func:`terminal_safe`,
    and newlines, tabs and carriage returns become their pictures (``␊``, ``␉``, ``␍``) too."""
    if _UNSAFE_IN_A_LINE.search(text) is None:
        return text
    return _UNSAFE_IN_A_LINE.sub(_picture, text)


def without_surrogates(text: str) -> str:
    """``text`` with lone surrogates (undecodable bytes carried by ``surrogateescape``, or a
    ``\\udc80`` escape in JSON) replaced by U+FFFD, so it encodes as UTF-8."""
    if _SURROGATE.search(text) is None:
        return text
    return _SURROGATE.sub("\ufffd", text)


def repair_argument(text: str) -> str:
    """A command-line argument as UTF-8 text: Python hands undecodable argv bytes over as
    surrogates (``surrogateescape``); each invalid sequence becomes one U+FFFD."""
    if _SURROGATE.search(text) is None:
        return text
    return text.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
