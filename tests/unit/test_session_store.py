"""Session file IO: appends, permissions, and loading damaged files without losing lines."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from wolli.session import store
from wolli.session.entries import CustomEntry, SessionHeader
from wolli.session.manager import SessionManager

HEADER = SessionHeader(id="11111111-2222-3333-4444-555555555555", cwd="/proj").to_json()


def _entry(entry_id: str, parent: str | None) -> str:
    return CustomEntry(id=entry_id, parent_id=parent, custom_type="t", data={"n": entry_id}).to_json()


def test_write_new_creates_private_file_and_folder(tmp_path):
    path = tmp_path / "s" / "a.jsonl"
    store.write_new(path, [HEADER, _entry("aaaaaaaa", None)])
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    assert path.read_text().splitlines()[0] == HEADER
    with pytest.raises(FileExistsError):
        store.write_new(path, [HEADER])


def test_append_after_torn_line_starts_a_fresh_line(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(HEADER + "\n" + _entry("aaaaaaaa", None) + "\n" + '{"type":"custom","id":"bbbb')
    loaded = store.load(path)
    assert [e.id for e in loaded.entries] == ["aaaaaaaa"]
    assert len(loaded.errors) == 1 and loaded.errors[0].startswith("line 3: torn last line ignored")

    store.append_lines(path, [_entry("cccccccc", "aaaaaaaa")])
    lines = path.read_text().split("\n")
    assert lines[2] == '{"type":"custom","id":"bbbb'
    assert json.loads(lines[3])["id"] == "cccccccc"
    reloaded = store.load(path)
    assert [e.id for e in reloaded.entries] == ["aaaaaaaa", "cccccccc"]
    # No longer the last line: now an ordinary malformed line, still reported, still skipped.
    assert len(reloaded.errors) == 1 and reloaded.errors[0].startswith("line 3: not valid JSON")


def test_valid_last_line_without_newline_is_kept(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(HEADER + "\n" + _entry("aaaaaaaa", None))
    loaded = store.load(path)
    assert [e.id for e in loaded.entries] == ["aaaaaaaa"] and loaded.errors == []
    store.append_lines(path, [_entry("bbbbbbbb", "aaaaaaaa")])
    assert [e.id for e in store.load(path).entries] == ["aaaaaaaa", "bbbbbbbb"]


def test_garbage_lines_in_the_middle_are_skipped_and_reported(tmp_path):
    path = tmp_path / "a.jsonl"
    lines = [
        HEADER,
        _entry("aaaaaaaa", None),
        "this is not json",
        '{"type":"message","id":"dddddddd","parentId":"aaaaaaaa","timestamp":"x","message":{"role":"nope"}}',
        "[1, 2]",
        "",
        _entry("bbbbbbbb", "aaaaaaaa"),
        _entry("bbbbbbbb", "aaaaaaaa"),
    ]
    path.write_text("\n".join(lines) + "\n")
    loaded = store.load(path)
    assert [e.id for e in loaded.entries] == ["aaaaaaaa", "bbbbbbbb"]
    assert [e.split(":")[0] for e in loaded.errors] == ["line 3", "line 4", "line 5", "line 8"]
    assert "not valid JSON" in loaded.errors[0]
    assert "invalid entry" in loaded.errors[1]
    assert "duplicate entry id" in loaded.errors[3]


def test_comma_joined_objects_on_one_line_are_not_accepted(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text(HEADER + "\n" + _entry("aaaaaaaa", None) + "," + _entry("bbbbbbbb", "aaaaaaaa") + "\n")
    loaded = store.load(path)
    assert loaded.entries == [] and len(loaded.errors) == 1


def test_empty_file_loads_as_empty(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_text("")
    loaded = store.load(path)
    assert loaded.header is None and loaded.empty


@pytest.mark.parametrize(
    "content, reason",
    [
        ("garbage\n" + HEADER + "\n", "not valid JSON"),
        ("garbage\nmore garbage\n", "not valid JSON"),
        ('{"type":"session","version":3}\n', "header is invalid"),
        ('{"type":"session","id":"x","cw', "not valid JSON"),
    ],
)
def test_missing_or_invalid_header_is_a_clear_error(tmp_path, content, reason):
    path = tmp_path / "bad.jsonl"
    path.write_text(content)
    with pytest.raises(store.SessionFileError) as info:
        store.load(path)
    assert reason in str(info.value) and str(path) in str(info.value)
    with pytest.raises(store.SessionFileError):
        SessionManager.open(path)


def test_entries_that_lost_their_header_are_kept_under_a_new_one(tmp_path):
    """The first line lost (or damaged) but entries follow: repaired, never refused."""
    path = tmp_path / "2026-01-02T03-04-05-006Z_0d5eb799-16bc-4845-85db-a46e1a5c93dc.jsonl"
    lines = [_entry("aaaaaaaa", None), _entry("bbbbbbbb", "aaaaaaaa")]
    path.write_text("\n".join(lines) + "\n")
    loaded = store.load(path)
    assert loaded.header_rebuilt and [e.id for e in loaded.entries] == ["aaaaaaaa", "bbbbbbbb"]
    assert loaded.header.id == "0d5eb799-16bc-4845-85db-a46e1a5c93dc"  # from the file name
    assert loaded.errors == ["line 1: no session header (the first line is not a session header "
                             '({"type":"session",...})); made a new one']
    manager = SessionManager.open(path)
    assert manager.load_errors[-1] == f"saved with a new session header; the original is kept as {path}.no-header"
    assert Path(f"{path}.no-header").read_text() == "\n".join(lines) + "\n"
    manager.append_custom_entry("t")
    again = SessionManager.open(path)
    assert again.load_errors == [] and again.get_session_id() == manager.get_session_id()
    assert len(again.get_entries()) == 3


def test_unreadable_path_is_a_clear_error(tmp_path):
    with pytest.raises(store.SessionFileError, match="cannot read"):
        store.load(tmp_path)  # a directory


def test_append_lines_creates_file_with_mode_0600(tmp_path):
    path = tmp_path / "new.jsonl"
    store.append_lines(path, [HEADER])
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    store.append_lines(path, [])
    assert path.read_text() == HEADER + "\n"


# Lines an index takes for entries (they start like one) that json.loads reads in its own way:
# whitespace after the object, non-ASCII text, an escaped lone surrogate, a second value.
_ODD_LINES = [
    lambda e: e + "  \t",
    lambda e: e.replace('"n":"', '"n":"h\u00e9llo \u2713 '),
    lambda e: e.replace('"n":"', '"n":"\\ud800'),
    lambda e: e + ',{"type":"custom"}',
    lambda e: e + " x",
    lambda e: e.replace('"data":{', '"data":{"d":' + "[" * 3000 + "]" * 3000 + ","),
]


@pytest.mark.parametrize("odd", range(len(_ODD_LINES)))
def test_an_opened_context_reads_each_line_as_json_loads_does(tmp_path, odd):
    """The context built on open (scanned lines) equals the eager loader's (json.loads)."""
    ids = [f"{n:08x}" for n in range(1, 6)]
    lines = [_entry(ids[0], None)]
    for parent, entry_id in zip(ids, ids[1:], strict=False):
        lines.append(_entry(entry_id, parent))
    lines[2] = _ODD_LINES[odd](lines[2])
    path = tmp_path / "a.jsonl"
    path.write_bytes((HEADER + "\n" + "\n".join(lines) + "\n").encode("utf-8", "surrogatepass"))
    eager = store.load(path, lazy=False)
    manager = SessionManager.open(path)
    assert [e.id for e in manager.get_branch()] == [e.id for e in eager.entries]
    assert manager.get_branch() == eager.entries
    assert set(manager.load_errors) <= set(eager.errors)
    assert bool(manager.load_errors) == bool(eager.errors)


def test_entry_from_span_matches_entry_from_line():
    good = _entry("aaaaaaaa", None)
    raw = ("\n".join(make(good) for make in _ODD_LINES) + "\n" + good).encode("utf-8", "surrogatepass")
    start = 0
    for line in raw.split(b"\n"):
        end = start + len(line)
        try:
            expected: object = store.entry_from_line(line)
        except Exception as exc:
            expected = type(exc)
        try:
            got: object = store.entry_from_span(raw, start, end)
        except Exception as exc:
            got = type(exc)
        assert got == expected
        start = end + 1


def test_a_file_in_a_newer_format_is_not_opened_for_appending_but_can_be_read(tmp_path):
    path = tmp_path / "future.jsonl"
    header = {"type": "session", "version": 9, "id": "f0", "timestamp": "2026-01-01T00:00:00.000Z", "cwd": "/p"}
    entry = {"type": "custom", "id": "a1", "parentId": None, "timestamp": "2026-01-01T00:00:01.000Z",
             "customType": "note", "data": {}}
    path.write_text(json.dumps(header) + "\n" + json.dumps(entry) + "\n")
    before = path.read_bytes()
    with pytest.raises(store.SessionFileError, match="session format 9, newer than this Wolli's \\(3\\)"):
        store.load(path)
    assert len(store.load(path, require_header=False).entries) == 1  # the HTML export still shows it
    assert path.read_bytes() == before
