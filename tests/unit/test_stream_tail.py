"""The streaming tail wraps incrementally exactly as a full wrap would."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from wolli.modes.tui.widgets.stream_tail import StreamTail, wrap_row


def test_wrap_row_breaks_at_spaces_and_cuts_long_words():
    assert wrap_row("alpha beta gamma", 11) == ["alpha beta", "gamma"]
    assert wrap_row("abcdefghij", 4) == ["abcd", "efgh", "ij"]
    assert wrap_row("", 10) == [""]


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet="ab cd\n界", min_size=1, max_size=6), min_size=1, max_size=40),
       st.integers(min_value=3, max_value=30))
def test_appending_piece_by_piece_gives_the_rows_of_a_full_wrap(pieces, width):
    tail = StreamTail()
    tail._rewrap_all(width)
    text = ""
    for piece in pieces:
        text += piece
        tail.text = text
        tail._rewrap_from_last()
    expected = [row for line in text.split("\n") for row in wrap_row(line, width)]
    assert tail._rows == expected
