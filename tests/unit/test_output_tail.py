"""LastLine: a running command's latest line, from output split anywhere."""

from __future__ import annotations

from wolli.modes.interactive.output_tail import SHOWN_LIMIT, LastLine


def test_pieces_split_inside_lines_and_characters_give_the_latest_line():
    last = LastLine()
    assert last.feed(b"compiling\nlin") == "lin"  # the unfinished line is shown as it grows
    assert last.feed(b"king\n") == "linking"
    assert last.feed(b"\n  \n") is None  # nothing new to show: the row keeps "linking"
    assert last.feed("caf\u00e9 ok\n".encode()[:4]) == "caf"
    assert last.feed("caf\u00e9 ok\n".encode()[4:]) == "caf\u00e9 ok"


def test_a_progress_bar_shows_its_latest_state_without_colours_or_controls():
    last = LastLine()
    assert last.feed(b"\x1b[32m 10%\x1b[0m\r 50%\r") == "50%"
    assert last.feed(b"tab\there \x07bell\n") == "tab\u2409here \u2407bell"


def test_a_line_without_end_is_kept_bounded_and_shown_cut():
    last = LastLine()
    for _ in range(100):
        shown = last.feed(b"x" * 10_000)
    assert shown == "x" * SHOWN_LIMIT
    assert len(last._pending) <= 4096
