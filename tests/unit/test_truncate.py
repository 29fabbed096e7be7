"""Property tests for the output truncation helpers shared by every tool."""

from __future__ import annotations

from hypothesis import example, given, settings
from hypothesis import strategies as st

from wolli.tools.truncate import (
    DEFAULT_MAX_BYTES,
    DEFAULT_MAX_LINES,
    format_size,
    truncate_head,
    truncate_line,
    truncate_tail,
)

# Multi-byte characters so that byte and character counts differ.
_chars = st.sampled_from(list("ab \té€😀\r"))
_line = st.text(_chars, max_size=30)
texts = st.builds(
    lambda lines, trailing: "\n".join(lines) + ("\n" if trailing else ""),
    st.lists(_line, max_size=25),
    st.booleans(),
)
max_lines = st.integers(min_value=1, max_value=30)
max_bytes = st.integers(min_value=1, max_value=300)


def nbytes(text: str) -> int:
    return len(text.encode("utf-8"))


def lines_of(text: str) -> list[str]:
    lines = text.split("\n")
    if len(lines) > 1 and lines[-1] == "":
        lines.pop()
    return lines


@settings(max_examples=200, deadline=None)
@given(texts, max_lines, max_bytes)
@example("aaa\n", 10, 3)  # only the final newline exceeds the byte limit
@example("", 1, 1)
def test_truncate_head_invariants(text: str, n_lines: int, n_bytes: int) -> None:
    r = truncate_head(text, max_lines=n_lines, max_bytes=n_bytes)
    all_lines = lines_of(text)
    assert r.total_lines == len(all_lines)
    assert r.total_bytes == nbytes(text)
    assert r.output_bytes == nbytes(r.content)
    assert r.output_lines <= n_lines

    if not r.truncated:
        assert r.truncated_by is None
        assert r.output_lines == r.total_lines
        # Whole input, possibly without a final newline that alone went over the limit.
        if r.content == text:
            assert nbytes(text) <= n_bytes and r.total_lines <= n_lines
        else:  # every line fitted; only the final newline went over the byte limit
            assert r.content + "\n" == text and r.output_bytes <= n_bytes
        return

    # Something was really cut, and the cut is in whole lines from the start.
    assert r.output_lines < r.total_lines
    assert r.output_bytes <= n_bytes
    assert text.startswith(r.content)
    if r.output_lines:
        assert r.content.split("\n") == all_lines[: r.output_lines]
        assert text[len(r.content)] == "\n"
    if r.first_line_exceeds_limit:
        assert r.content == "" and r.output_lines == 0
        assert nbytes(all_lines[0]) > n_bytes
    elif r.truncated_by == "lines":
        assert r.output_lines == n_lines
    else:
        assert r.truncated_by == "bytes"
        # Maximal: the next line would not have fitted.
        next_line = all_lines[r.output_lines]
        assert r.output_bytes + nbytes(next_line) + (1 if r.output_lines else 0) > n_bytes


@settings(max_examples=200, deadline=None)
@given(texts, max_lines, max_bytes)
@example("aaa\n", 10, 3)
@example("€€€€", 5, 5)  # a partial last line must not split a character
def test_truncate_tail_invariants(text: str, n_lines: int, n_bytes: int) -> None:
    r = truncate_tail(text, max_lines=n_lines, max_bytes=n_bytes)
    all_lines = lines_of(text)
    assert r.total_lines == len(all_lines)
    assert r.total_bytes == nbytes(text)
    assert r.output_bytes == nbytes(r.content)
    assert r.output_lines <= n_lines

    if not r.truncated:
        assert r.truncated_by is None and not r.last_line_partial
        assert r.content == text or r.content + "\n" == text
        return

    assert r.output_bytes <= n_bytes
    body = text[:-1] if text.endswith("\n") else text
    assert body.endswith(r.content)
    if r.last_line_partial:
        assert r.output_lines == 1
        assert all_lines[-1].endswith(r.content)
        assert nbytes(all_lines[-1]) > n_bytes
        # As much as fits, give or take one multi-byte character.
        assert r.output_bytes > n_bytes - 4
    else:
        assert r.output_lines < r.total_lines
        assert r.output_lines >= 1
        assert r.content.split("\n") == all_lines[-r.output_lines :]
        start = len(body) - len(r.content)
        assert start == 0 or body[start - 1] == "\n"
        if r.truncated_by == "lines":
            assert r.output_lines == n_lines
        else:
            prev_line = all_lines[-r.output_lines - 1]
            assert r.output_bytes + nbytes(prev_line) + 1 > n_bytes


def test_head_notice_numbers_for_a_big_file() -> None:
    text = "".join(f"line {i}\n" for i in range(1, 9001))
    r = truncate_head(text)
    assert r.truncated and r.truncated_by == "lines"
    assert (r.output_lines, r.total_lines) == (DEFAULT_MAX_LINES, 9000)
    assert r.content.split("\n")[-1] == "line 2000"


def test_head_stops_on_bytes_before_lines() -> None:
    text = ("x" * 100 + "\n") * 1000  # 101KB in 1000 lines
    r = truncate_head(text)
    assert r.truncated_by == "bytes"
    assert r.output_bytes <= DEFAULT_MAX_BYTES
    assert r.output_lines == (DEFAULT_MAX_BYTES + 1) // 101


def test_tail_keeps_end_of_one_huge_line() -> None:
    text = "start" + "y" * (DEFAULT_MAX_BYTES * 2) + "END"
    r = truncate_tail(text)
    assert r.truncated and r.last_line_partial
    assert r.content.endswith("END") and r.output_bytes == DEFAULT_MAX_BYTES


def test_format_size_and_truncate_line() -> None:
    assert format_size(0) == "0B"
    assert format_size(1023) == "1023B"
    assert format_size(50 * 1024) == "50.0KB"
    assert format_size(3 * 1024 * 1024 // 2) == "1.5MB"
    assert truncate_line("abc", 5) == ("abc", False)
    short, cut = truncate_line("x" * 600)
    assert cut and short.startswith("x" * 500) and short.endswith("... [truncated]")
