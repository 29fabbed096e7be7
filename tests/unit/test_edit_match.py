"""Matching and applying edit blocks: exact, fuzzy, line endings, errors, and properties."""

from __future__ import annotations

import time

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from wolli.tools.edit import prepare_edit_arguments
from wolli.tools.edit_match import (
    BOM,
    EditMatchError,
    EditSpec,
    apply_edits,
    find_closest_match,
    first_changed_line,
    normalize_for_match,
    unified_diff,
)

SOURCE = """def greet(name):
    print("hello", name)


def part(x):
    return x * 2
"""


# ---------------------------------------------------------------------------- exact


def test_single_exact_replacement_with_diff() -> None:
    r = apply_edits(SOURCE, [('print("hello", name)', 'print("hi", name)')], "greet.py")
    assert r.content == SOURCE.replace('"hello"', '"hi"')
    assert r.replacements == 1 and r.fuzzy_edits == []
    assert r.first_changed_line == 2
    assert r.diff.startswith("--- a/greet.py\n+++ b/greet.py\n@@ -1,5 +1,5 @@\n")
    assert '-    print("hello", name)\n+    print("hi", name)\n' in r.diff


def test_every_edit_matches_the_original_not_the_intermediate_text() -> None:
    # The first edit's new text contains the second edit's old text: it must not count.
    text = "alpha\nbeta\n"
    r = apply_edits(text, [EditSpec("alpha", "beta gamma"), EditSpec("beta\n", "delta\n")])
    assert r.content == "beta gamma\ndelta\n"
    assert r.replacements == 2


def test_edits_accept_tuples_dicts_and_objects_in_any_order() -> None:
    text = "one\ntwo\nthree\n"
    r = apply_edits(text, [{"old_text": "three", "new_text": "3"}, ("one", "1"), EditSpec("two", "2")])
    assert r.content == "1\n2\n3\n"


def test_adjacent_edits_are_fine() -> None:
    assert apply_edits("abcdef", [("abc", "X"), ("def", "Y")]).content == "XY"


def test_deleting_text_and_growing_the_file() -> None:
    r = apply_edits("keep\ndrop me\nkeep too\n", [("drop me\n", "")])
    assert r.content == "keep\nkeep too\n"
    r = apply_edits("a\n", [("a\n", "a\nb\nc\n")])
    assert r.content == "a\nb\nc\n" and r.first_changed_line == 2


# ---------------------------------------------------------------------------- line endings, BOM


def test_crlf_file_matches_lf_old_text_and_keeps_crlf() -> None:
    text = "one\r\ntwo\r\nthree\r\n"
    r = apply_edits(text, [("one\ntwo\n", "uno\ndos\nextra\n")])
    assert r.content == "uno\r\ndos\r\nextra\r\nthree\r\n"
    assert "\n" not in r.content.replace("\r\n", "")
    assert "-one\n-two\n+uno\n+dos\n+extra\n" in r.diff  # the diff is shown with LF


def test_crlf_old_text_on_an_lf_file() -> None:
    assert apply_edits("a\nb\n", [("a\r\nb", "c\r\nd")]).content == "c\nd\n"


def test_mixed_line_endings_outside_the_edit_are_untouched() -> None:
    text = "a\r\nb\nc\r\nd\r\n"
    r = apply_edits(text, [("c", "C")])
    assert r.content == "a\r\nb\nC\r\nd\r\n"


def test_crlf_edit_starting_at_a_line_break_replaces_the_whole_pair() -> None:
    text = "x\r\ny\r\n"
    r = apply_edits(text, [("\ny", "\nz")])
    assert r.content == "x\r\nz\r\n"


def test_bom_is_kept_and_not_part_of_matching() -> None:
    text = BOM + "first line\nsecond\n"
    r = apply_edits(text, [("first line", "1st line")])
    assert r.content == BOM + "1st line\nsecond\n"
    assert BOM not in r.diff


# ---------------------------------------------------------------------------- fuzzy


def test_trailing_whitespace_is_tolerated_and_the_rest_kept() -> None:
    text = "keep   \nfoo = 1   \nbar = 2\t\nkeep   \n"
    r = apply_edits(text, [("foo = 1\nbar = 2\n", "foo = 10\nbar = 20\n")])
    assert r.content == "keep   \nfoo = 10\nbar = 20\nkeep   \n"
    assert r.fuzzy_edits == [0]


def test_old_text_with_extra_trailing_spaces() -> None:
    r = apply_edits("a = 1\nb = 2\n", [("a = 1   \nb = 2", "a = 1\nb = 3")])
    assert r.content == "a = 1\nb = 3\n"


def test_smart_quotes_dashes_and_odd_spaces() -> None:
    text = "intro “keep” — here\nsay(‘hi’) – x\u00a0=\u2009y\nend “keep”\n"
    r = apply_edits(text, [("say('hi') - x = y", "say('bye')")])
    assert r.content == "intro “keep” — here\nsay('bye')\nend “keep”\n"
    assert r.fuzzy_edits == [0]


def test_fuzzy_match_keeps_crlf_and_bom() -> None:
    text = BOM + "x = “a”  \r\ny = 1\r\n"
    r = apply_edits(text, [('x = "a"\ny', 'x = "b"\ny')])
    assert r.content == BOM + 'x = "b"\r\ny = 1\r\n'


def test_exact_match_wins_over_fuzzy() -> None:
    # "a - b" occurs once exactly; fuzzily it would also match the en-dash line.
    text = "a – b\na - b\n"
    r = apply_edits(text, [("a - b", "X")])
    assert r.content == "a – b\nX\n" and r.fuzzy_edits == []


def test_normalize_for_match() -> None:
    assert normalize_for_match("‘a’ “b” ‒–—― c\u00a0d\u202fe  \n  x\t") == "'a' \"b\" ---- c d e\n  x"


# ---------------------------------------------------------------------------- errors


def error_of(text: str, edits: list, path: str = "f.py") -> str:
    with pytest.raises(EditMatchError) as info:
        apply_edits(text, edits, path)
    return str(info.value)


def test_not_found_shows_the_closest_match_with_its_line_number() -> None:
    message = error_of(SOURCE, [("def part(x):\n    return x * 3\n", "y")], "m.py")
    assert "Could not find old_text in m.py." in message
    assert "at line 5" in message
    assert "5| def part(x):" in message and "6|     return x * 2" in message
    assert "Re-read the file with read" in message


def test_not_found_without_anything_similar() -> None:
    message = error_of(SOURCE, [("zzzzqqqq", "y")])
    assert "No similar text" in message and "Re-read" in message


def test_several_matches_give_count_and_lines() -> None:
    text = "x = 1\ny = 2\nx = 1\nz\nx = 1\n"
    message = error_of(text, [("x = 1", "x = 9")])
    assert "matches 3 places" in message and "lines 1, 3, 5" in message
    assert "add more surrounding lines" in message


def test_overlapping_occurrences_count_as_ambiguous() -> None:
    assert "matches 2 places" in error_of("aaa", [("aa", "b")])


def test_fuzzy_ambiguity_is_reported_too() -> None:
    message = error_of("a – b\na — b\n", [("a - b", "x")])
    assert "matches 2 places" in message and "quote/dash" in message


def test_errors_name_the_edit_when_there_are_several() -> None:
    message = error_of("one\ntwo\n", [("one", "1"), ("three", "3")])
    assert message.startswith("Could not find edits[1].old_text in f.py.")


def test_overlapping_edits_are_refused() -> None:
    message = error_of("abcdef\n", [("cde", "X"), ("abcd", "Y")])
    assert "edits[0] and edits[1] overlap" in message


def test_noop_and_empty_edits_are_refused() -> None:
    assert "identical" in error_of("abc", [("abc", "abc")])
    assert "is empty" in error_of("abc", [("", "x")])
    assert "No edits" in error_of("abc", [])
    # old != new, yet the fuzzy match replaces text with itself.
    assert "unchanged" in error_of('say "hi"\n', [("say “hi”", 'say "hi"')])


def test_nothing_is_applied_when_one_edit_fails() -> None:
    text = "one\ntwo\n"
    with pytest.raises(EditMatchError):
        apply_edits(text, [("one", "1"), ("missing", "x")])
    # The function is pure: no partial result exists anywhere; the input is unchanged.
    assert text == "one\ntwo\n"


# ---------------------------------------------------------------------------- helpers


def test_closest_match_is_fast_on_a_big_file() -> None:
    lines = [f"value_{i} = compute({i}, {i * 7})" for i in range(10_000)]
    started = time.perf_counter()
    found = find_closest_match("\n".join(lines), "value_5000 = compute(5000, 35001)")
    assert found is not None and found[0] == 5001
    assert time.perf_counter() - started < 5


def test_first_changed_line_and_diff_without_final_newline() -> None:
    assert first_changed_line("a\nb\nc", "a\nB\nc") == 2
    assert first_changed_line("a\nb", "a\nb") is None
    assert first_changed_line("a", "a\nb") == 2
    assert first_changed_line("a\nb\nc", "a\nb") == 2
    diff = unified_diff("a\nb", "a\nb\n", "x")
    assert "\\ No newline at end of file" in diff


def test_prepare_edit_arguments_accepts_older_shapes() -> None:
    assert prepare_edit_arguments({"path": "p", "oldText": "a", "newText": "b"}) == {
        "path": "p", "edits": [{"old_text": "a", "new_text": "b"}]
    }
    assert prepare_edit_arguments({"path": "p", "old_text": "a", "new_text": "b"})["edits"] == [
        {"old_text": "a", "new_text": "b"}
    ]
    mixed = prepare_edit_arguments(
        {"path": "p", "edits": [{"oldText": "x", "newText": "y"}], "old_text": "a", "new_text": "b"}
    )
    assert mixed["edits"] == [{"old_text": "x", "new_text": "y"}, {"old_text": "a", "new_text": "b"}]
    as_string = prepare_edit_arguments({"path": "p", "edits": '[{"old_text": "a", "new_text": "b"}]'})
    assert as_string["edits"] == [{"old_text": "a", "new_text": "b"}]
    current = {"path": "p", "edits": [{"old_text": "a", "new_text": "b"}]}
    assert prepare_edit_arguments(current) == current
    assert prepare_edit_arguments("nonsense") == "nonsense"


# ---------------------------------------------------------------------------- properties

# Junk never contains ":" "<" ">" or digits, so "line{i}:" and "<N{j}>" are unique markers.
_junk = st.text(st.sampled_from(list("abc xyz_()=\t“”–\u00a0é😀")), max_size=12)


@st.composite
def files_with_edits(draw: st.DrawFn) -> tuple[str, list[tuple[str, str]], bool]:
    n = draw(st.integers(min_value=1, max_value=25))
    lines = [f"line{i}:{draw(_junk)}" for i in range(n)]
    crlf = draw(st.booleans())
    bom = draw(st.booleans())
    eol = "\r\n" if crlf else "\n"
    text = (BOM if bom else "") + eol.join(lines) + (eol if draw(st.booleans()) else "")
    starts = sorted(draw(st.sets(st.integers(0, n - 1), min_size=1, max_size=min(n, 6))))
    edits = []
    for j, first in enumerate(starts):
        # Each region starts at a marker and may run over following lines up to the next region.
        limit = (starts[j + 1] if j + 1 < len(starts) else n) - 1
        last = draw(st.integers(first, limit))
        region = "\n".join(lines[first : last + 1])
        cut = draw(st.integers(len(f"line{first}:"), len(region)))
        old = region[:cut]
        new = f"<N{j}>" + draw(_junk) + draw(st.sampled_from(["", "\n", "\nextra line\n"]))
        edits.append((old, new))
    order = draw(st.permutations(range(len(edits))))
    return text, [edits[k] for k in order], crlf


@settings(max_examples=150, deadline=None)
@given(files_with_edits())
@example(("line0:\r\nline1:", [("line0:\n", "<N0>")], True))
def test_applying_then_reverting_unique_edits_restores_the_original(case) -> None:
    text, edits, crlf = case
    applied = apply_edits(text, edits)
    assert applied.fuzzy_edits == []
    assert applied.replacements == len(edits)
    assert applied.content.startswith(BOM) == text.startswith(BOM)
    if crlf and "\r\n" in text:
        assert "\n" not in applied.content.replace("\r\n", "")
    # The new texts carry unique markers, so they can be found again and swapped back.
    reverted = apply_edits(applied.content, [(new, old) for old, new in edits])
    # An edit that removes the last line break leaves nothing to tell CRLF from LF by, so the
    # revert writes LF then; every other round trip is exact.
    lost_style = crlf and "\r\n" in text and "\n" not in applied.content
    assert reverted.content == (text.replace("\r\n", "\n") if lost_style else text)


@settings(max_examples=150, deadline=None)
@given(files_with_edits())
def test_applying_equals_splicing_the_lf_text(case) -> None:
    text, edits, crlf = case
    if crlf:
        return
    expected = text
    for old, new in sorted(edits, key=lambda e: text.index(e[0]), reverse=True):
        at = expected.index(old)
        expected = expected[:at] + new + expected[at + len(old) :]
    assert apply_edits(text, edits).content == expected


@settings(max_examples=150, deadline=None)
@given(st.data())
def test_fuzzy_edit_changes_only_the_matched_region(data: st.DataObject) -> None:
    n = data.draw(st.integers(min_value=1, max_value=15))
    trailing = st.sampled_from(["", " ", "\t ", "\u00a0"])
    lines = [f"line{i}:{data.draw(_junk)}{data.draw(trailing)}" for i in range(n)]
    eol = data.draw(st.sampled_from(["\n", "\r\n"]))
    text = eol.join(lines) + eol
    i = data.draw(st.integers(0, n - 1))
    old = normalize_for_match(lines[i])  # what a model typing plain ASCII would send
    result = apply_edits(text, [(old, "<X>")]).content
    kept_end = len(lines[i].rstrip())
    before = eol.join(lines[:i]) + (eol if i else "")
    after = lines[i][kept_end:] + eol + eol.join(lines[i + 1 :]) + (eol if i + 1 < n else "")
    assert result == before + "<X>" + after
