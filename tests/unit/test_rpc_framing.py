"""RPC framing: records split on LF only, CR stripped, U+2028/U+2029 kept, output escaped."""

from __future__ import annotations

import json

import pytest

from wolli.modes.common.framing import LineSplitter, decode_record, encode_record


def test_records_split_on_newline_only_across_reads():
    splitter = LineSplitter()
    text = '{"a": "x\u2028y\u2029z"}'.encode()
    assert splitter.feed(text[:5]) == []
    assert splitter.feed(text[5:] + b"\r\n{\"b\"") == [text]
    assert splitter.feed(b": 1}\n\n") == [b'{"b": 1}', b""]
    assert splitter.feed("é".encode()[:1]) == []  # half a character waits for the rest
    assert splitter.feed("é".encode()[1:] + b"\n") == ["é".encode()]
    assert splitter.feed(b'{"last": true}\r') == []
    assert splitter.finish() == [b'{"last": true}']
    assert splitter.finish() == []


def test_encoding_escapes_line_separators_and_round_trips():
    value = {"text": "a\u2028b\u2029c\nd", "n": 1}
    data = encode_record(value)
    assert data.endswith(b"\n") and data.count(b"\n") == 1
    assert "\u2028".encode() not in data and b"\\u2028" in data
    assert json.loads(data) == value == decode_record(data[:-1])
    lone = encode_record({"s": "\ud800"})
    assert json.loads(lone) == {"s": "\ud800"}


@pytest.mark.parametrize("line, problem", [(b"{nope", "not JSON"), (b"\xff{}", "not UTF-8")])
def test_decoding_names_the_problem(line, problem):
    with pytest.raises(ValueError, match=problem):
        decode_record(line)


def test_a_record_over_the_limit_is_skipped_to_its_end_without_being_kept():
    from wolli.modes.common.framing import OversizedRecord

    splitter = LineSplitter(max_record=10)
    assert splitter.feed(b"0123") == []
    out = splitter.feed(b"456789abcdef")  # past the limit, no newline yet: dropped now
    assert len(out) == 1 and isinstance(out[0], OversizedRecord)
    assert splitter.feed(b"still the same line") == []
    assert splitter.feed(b'...end\n{"a":1}\n') == [b'{"a":1}']
    with pytest.raises(ValueError, match="longer than 64 MB; it was skipped"):
        decode_record(OversizedRecord())
    # A complete line that is too long, arriving in one read, is refused the same way.
    assert [type(r) for r in splitter.feed(b"x" * 20 + b"\nok\n")] == [OversizedRecord, bytes]
