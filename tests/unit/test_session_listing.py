"""Listing and finding sessions from headers, heads and byte searches."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pytest

from wolli.ai.types import AssistantMessage, TextContent, ToolCall, UserMessage
from wolli.config.paths import cwd_slug
from wolli.session import listing
from wolli.session.listing import find_sessions, list_all_sessions, list_sessions, read_session_info
from wolli.session.manager import SessionManager


@pytest.fixture(autouse=True)
def _fresh_cache():
    listing.clear_cache()
    yield
    listing.clear_cache()


def make(root: Path, cwd: str, first: str, *, name: str | None = None, tags=None, mtime: float | None = None,
         replies: int = 1) -> SessionManager:
    m = SessionManager.create(cwd, root)
    m.append_message(UserMessage(content=[TextContent(text=first)]))
    for i in range(replies):
        m.append_message(AssistantMessage(content=[TextContent(text=f"reply {i}")], provider="faux", model="m"))
    if name:
        m.append_session_info(name)
    if tags:
        m.append_tags(tags)
    if mtime is not None:
        os.utime(m.get_session_file(), (mtime, mtime))
    return m


def test_list_sessions_of_a_cwd_newest_first(tmp_path):
    root = tmp_path / "sessions"
    a = make(root, "/proj", "first prompt", mtime=1_000_000)
    b = make(root, "/proj", "second prompt", name="Named", mtime=2_000_000, replies=3)
    make(root, "/other", "elsewhere")
    infos = list_sessions("/proj", root)
    assert [i.id for i in infos] == [b.get_session_id(), a.get_session_id()]
    top = infos[0]
    assert top.name == "Named" and top.first_message == "second prompt"
    assert top.cwd == "/proj" and top.path == b.get_session_file()
    assert top.message_count_estimate == 4
    assert top.modified == dt.datetime.fromtimestamp(2_000_000).astimezone()
    assert top.created.tzinfo is not None and top.created_at.endswith("Z")
    assert top.tags == {} and top.parent_session is None
    assert infos[1].name is None


def test_list_all_sessions_and_missing_root(tmp_path):
    root = tmp_path / "sessions"
    make(root, "/a", "x", mtime=1_000_000)
    make(root, "/b", "y", mtime=3_000_000)
    assert [i.first_message for i in list_all_sessions(root)] == ["y", "x"]
    assert list_all_sessions(tmp_path / "nowhere") == []
    assert list_sessions("/nowhere", root) == []


def test_a_session_whose_answer_never_came_is_listed_with_its_prompt(tmp_path):
    # What a Wolli killed while the first answer streamed leaves: listed, so it can be resumed.
    root = tmp_path / "sessions"
    make(root, "/proj", "answered", mtime=1_000_000)
    crashed = make(root, "/proj", "a long prompt typed before the crash", replies=0, mtime=2_000_000)
    top = list_sessions("/proj", root)[0]
    assert top.id == crashed.get_session_id()
    assert top.first_message == "a long prompt typed before the crash" and top.message_count_estimate == 1
    assert SessionManager.continue_recent("/proj", root).get_session_id() == crashed.get_session_id()


def test_listing_skips_unusable_files(tmp_path):
    root = tmp_path / "sessions"
    make(root, "/proj", "good")
    folder = root / cwd_slug("/proj")
    (folder / "empty.jsonl").write_text("")
    (folder / "junk.jsonl").write_text("junk\n")
    (folder / "notes.txt").write_text("ignored")
    assert [i.first_message for i in list_sessions("/proj", root)] == ["good"]


def test_name_is_the_latest_and_survives_a_torn_tail(tmp_path):
    root = tmp_path / "sessions"
    m = make(root, "/proj", "q", name="one")
    m.append_session_info("two")
    with open(m.get_session_file(), "a") as handle:
        handle.write('{"type":"session_info","id":"ab","parentId":null,"name":"thr')
    assert read_session_info(m.get_session_file()).name == "two"
    m.append_session_info(None)
    assert read_session_info(m.get_session_file()).name is None


def test_a_name_is_one_line(tmp_path):
    m = make(tmp_path / "sessions", "/proj", "q")
    m.append_session_info("  fix the\nflaky\t\ttest \r\n")
    assert read_session_info(m.get_session_file()).name == "fix the flaky test"
    m.append_session_info(" \n ")
    assert read_session_info(m.get_session_file()).name is None


def test_byte_search_is_not_fooled_by_message_content(tmp_path):
    root = tmp_path / "sessions"
    m = make(root, "/proj", '{"type":"session_info","name":"fake"}\n{"type":"tags"}')
    m.append_message(
        AssistantMessage(content=[ToolCall(id="1", name="x", arguments={"type": "session_info", "name": "fake"})])
    )
    info = read_session_info(m.get_session_file(), with_tags=True)
    assert info.name is None and info.tags == {}
    assert info.first_message.startswith('{"type":"session_info"')


def test_first_message_preview_from_string_content_is_bounded(tmp_path):
    root = tmp_path / "sessions"
    m = SessionManager.create("/proj", root)
    m.append_message(UserMessage(content="  " + "word " * 300))
    m.append_message(AssistantMessage(content=[TextContent(text="ok")]))
    info = read_session_info(m.get_session_file())
    assert info.first_message.startswith("word") and len(info.first_message) == listing.PREVIEW_CHARS


def test_large_file_is_mapped_and_still_summarised(tmp_path, monkeypatch):
    monkeypatch.setattr(listing, "WHOLE_LIMIT", 4096)
    monkeypatch.setattr(listing, "HEAD_BYTES", 1024)
    root = tmp_path / "sessions"
    m = make(root, "/proj", "big one", replies=200, name="early name")
    for _ in range(50):
        m.append_custom_entry("filler", "x" * 100)
    size = os.path.getsize(m.get_session_file())
    assert size > 4 * 4096
    info = read_session_info(m.get_session_file(), with_tags=True)
    assert info.name == "early name" and info.first_message == "big one"
    assert 100 < info.message_count_estimate < 400  # extrapolated from the sample


def test_cache_refreshes_when_the_file_changes(tmp_path):
    root = tmp_path / "sessions"
    m = make(root, "/proj", "q")
    assert read_session_info(m.get_session_file()).name is None
    m.append_session_info("renamed")
    assert read_session_info(m.get_session_file()).name == "renamed"


def test_find_sessions_by_tags_and_structured_filters(tmp_path):
    root = tmp_path / "sessions"
    a = make(root, "/proj", "Fix the parser", name="Parser work", tags={"telegram:chat": "42", "team": "x"})
    b = make(root, "/other", "Write docs", tags={"telegram:chat": "7"})
    c = make(root, "/proj", "nothing")
    b_sm = SessionManager.open(b.get_session_file())
    b_sm.append_tags({"telegram:chat": None, "slack": "c1"})

    ids = lambda infos: {i.id for i in infos}  # noqa: E731
    assert ids(find_sessions({"telegram:chat": "42"}, root)) == {a.get_session_id()}
    assert ids(find_sessions({"telegram:chat": "7"}, root)) == set()  # deleted later
    assert find_sessions({"telegram:chat": "42"}, root)[0].tags == {"telegram:chat": "42", "team": "x"}
    assert ids(find_sessions({"tag": {"slack": None}}, root)) == {b.get_session_id()}
    assert ids(find_sessions({"name": "parser"}, root)) == {a.get_session_id()}
    assert ids(find_sessions({"text": "WRITE"}, root)) == {b.get_session_id()}
    assert ids(find_sessions({"cwd": "/proj"}, root)) == {a.get_session_id(), c.get_session_id()}
    assert ids(find_sessions({"cwd": "/proj", "text": "nothing"}, root)) == {c.get_session_id()}
    assert ids(find_sessions(lambda info: info.tags.get("team") == "x", root)) == {a.get_session_id()}
    assert len(find_sessions({}, root)) == 3
    with pytest.raises(TypeError):
        find_sessions(["bad"], root)  # type: ignore[arg-type]


def test_plain_listing_after_tagged_listing_has_empty_tags(tmp_path):
    root = tmp_path / "sessions"
    make(root, "/proj", "q", tags={"k": "v"})
    assert find_sessions({"k": "v"}, root)[0].tags == {"k": "v"}
    assert list_sessions("/proj", root)[0].tags == {}


def test_fork_records_parent_session(tmp_path):
    root = tmp_path / "sessions"
    m = make(root, "/proj", "q")
    fork = SessionManager.fork(m.get_session_file())
    info = read_session_info(fork.get_session_file())
    assert info.parent_session == m.get_session_file() and info.first_message == "q"
