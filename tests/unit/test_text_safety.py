"""terminal_safe: every control a terminal obeys is shown instead; plain text is untouched."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from wolli.base.text_safety import one_line_safe, repair_argument, terminal_safe, without_surrogates


def test_escape_sequences_become_visible_symbols():
    assert terminal_safe("a\x1b[2Jb") == "a␛[2Jb"
    assert terminal_safe("bell\x07 back\x08 del\x7f") == "bell␇ back␈ del␡"
    assert terminal_safe("one-byte csi \x9b31m") == "one-byte csi \\x9b31m"
    assert terminal_safe("osc \x1b]52;c;ZXZpbA==\x07") == "osc ␛]52;c;ZXZpbA==␇"


def test_bidirectional_controls_are_written_out_and_right_to_left_text_is_kept():
    # "Trojan Source": shown reordered by the terminal, run in the order written
    assert terminal_safe('rm -rf /tmp/x \u202e"; safe#') == 'rm -rf /tmp/x \\u202e"; safe#'
    assert terminal_safe("a\u2066b\u2069c") == "a\\u2066b\\u2069c"
    hebrew = "שלום עולם and مرحبا"
    assert terminal_safe(hebrew) is hebrew
    assert one_line_safe("x\u202dy\nz") == "x\\u202dy␊z"


def test_lines_tabs_and_carriage_returns():
    assert terminal_safe("a\tb\nc") == "a\tb\nc"
    assert terminal_safe("win\r\nline\rbar") == "win\nline\nbar"


def test_plain_text_is_returned_as_it_is():
    text = "héllo wörld — 日本語 🎉 ␛ already a picture"
    assert terminal_safe(text) is text


def test_lone_surrogates_become_replacement_characters():
    assert terminal_safe("bad \udcff byte") == "bad \ufffd byte"
    assert without_surrogates("x\ud800y") == "x\ufffdy"
    assert repair_argument("caf\udcc3\udca9 \udcff") == "café \ufffd"  # valid UTF-8 is restored


@given(st.text())
def test_nothing_a_terminal_acts_on_survives_and_it_is_idempotent(text):
    safe = terminal_safe(text)
    assert not any(ord(c) < 0x20 and c not in "\n\t" or 0x7F <= ord(c) <= 0x9F or 0x202A <= ord(c) <= 0x202E
                   or 0x2066 <= ord(c) <= 0x2069 for c in safe)
    assert terminal_safe(safe) == safe
    safe.encode("utf-8")  # printable on a UTF-8 terminal


def test_the_tui_drops_any_control_left_in_a_drawn_strip():
    from rich.console import Console
    from rich.segment import Segment
    from textual.strip import Strip

    from wolli.modes.tui.terminal_guard import install

    install()
    strip = Strip([Segment("safe "), Segment("\x1b]0;PWNED\x07title")])
    rendered = strip.render(Console())
    assert "\x1b]0;" not in rendered and "]0;PWNEDtitle" in rendered
    reordering = Strip([Segment('rm x \u202e"; safe#\u2069')])  # a dialog showing a command
    assert 'rm x "; safe#' in reordering.render(Console())
