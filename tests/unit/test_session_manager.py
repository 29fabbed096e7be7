"""SessionManager: buffering, round trips of every entry type, tree operations, lookup."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest

from wolli.agent.messages import BashExecutionMessage
from wolli.ai.types import (
    AssistantMessage,
    ImageContent,
    TextContent,
    ToolCall,
    ToolResultMessage,
    UserMessage,
)
from wolli.config.paths import cwd_slug
from wolli.session.entries import LabelEntry, MessageEntry
from wolli.session.manager import SessionLookupError, SessionManager


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


def assistant(text: str, model: str = "m1") -> AssistantMessage:
    return AssistantMessage(content=[TextContent(text=text)], api="faux", provider="faux", model=model)


def started(tmp_path: Path, cwd: str = "/proj") -> SessionManager:
    manager = SessionManager.create(cwd, tmp_path / "sessions")
    manager.append_message(user("hello"))
    manager.append_message(assistant("hi"))
    return manager


# ---------------------------------------------------------------------------- create / buffering


def test_create_path_layout(tmp_path):
    manager = SessionManager.create("/home/me/proj", tmp_path / "sessions")
    path = Path(manager.get_session_file())
    assert path.parent == tmp_path / "sessions" / cwd_slug("/home/me/proj")
    assert re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d-\d\d-\d\d-\d{3}Z_[0-9a-f-]{36}\.jsonl", path.name)
    assert path.name.endswith(manager.get_session_id() + ".jsonl")
    assert manager.get_cwd() == "/home/me/proj"
    assert manager.get_header().version == 3


def test_the_file_is_created_at_the_first_message_with_everything_before_it(tmp_path):
    manager = SessionManager.create("/proj", tmp_path / "sessions")
    path = Path(manager.get_session_file())
    manager.append_model_change("faux", "m1")
    manager.append_thinking_level_change("low")
    manager.append_session_info("greeting")
    assert not path.exists() and not manager.is_persisted()  # no message yet: no file
    assert not path.parent.exists()

    manager.append_message(user("hello"))  # the prompt is on disk before its request is sent
    assert path.exists() and manager.is_persisted()
    lines = [json.loads(line) for line in path.read_text().splitlines()]
    assert [d["type"] for d in lines] == [
        "session", "model_change", "thinking_level_change", "session_info", "message",
    ]
    manager.append_message(assistant("hi"))  # straight to disk now
    manager.append_message(user("more"))
    assert len(path.read_text().splitlines()) == 7


def test_an_extension_message_also_starts_the_file(tmp_path):
    manager = SessionManager.create("/proj", tmp_path / "sessions")
    manager.append_custom_entry("state", {"n": 1})  # bookkeeping alone is not worth a file
    assert not manager.is_persisted()
    manager.append_custom_message_entry("note", "from an extension")
    assert manager.is_persisted()
    assert [e.type for e in SessionManager.open(manager.get_session_file()).get_entries()] == [
        "custom", "custom_message",
    ]


def test_user_messages_are_synced_to_the_disk_and_the_rest_is_not(tmp_path, monkeypatch):
    synced: list[int] = []
    real = os.fdatasync if hasattr(os, "fdatasync") else os.fsync
    name = "fdatasync" if hasattr(os, "fdatasync") else "fsync"

    def counting(fd):
        synced.append(fd)
        return real(fd)

    monkeypatch.setattr(os, name, counting)
    manager = SessionManager.create("/proj", tmp_path / "sessions")
    manager.append_model_change("faux", "m1")
    manager.append_message(user("hello"))
    assert len(synced) == 1  # the new file with the prompt
    manager.append_message(assistant("hi"))
    manager.append_session_info("named")
    assert len(synced) == 1
    manager.append_message(user("again"))
    assert len(synced) == 2


def test_default_session_dir_is_the_agent_sessions_folder(wolli_home):
    manager = SessionManager.create("/proj")
    assert manager.get_session_file().startswith(str(wolli_home / "agents" / "default" / "sessions"))


def test_in_memory_never_writes(tmp_path, wolli_home):
    manager = SessionManager.in_memory("/proj")
    manager.append_message(user("x"))
    manager.append_message(assistant("y"))
    assert manager.get_session_file() is None
    assert len(manager.get_entries()) == 2
    assert not any(wolli_home.rglob("*.jsonl"))


def test_open_missing_path_starts_a_session_there(tmp_path):
    path = tmp_path / "named.jsonl"
    manager = SessionManager.open(path, cwd="/proj")
    assert manager.get_session_file() == str(path) and manager.get_entries() == []
    manager.append_model_change("faux", "m1")
    assert not path.exists()
    manager.append_message(user("a"))
    assert path.exists()
    manager.append_message(assistant("b"))
    entries = SessionManager.open(path).get_entries()
    assert [getattr(e, "message", e).role if e.type == "message" else e.type for e in entries] == [
        "model_change", "user", "assistant",
    ]


def test_open_empty_file_fills_it_in(tmp_path):
    path = tmp_path / "empty.jsonl"
    path.write_text("")
    manager = SessionManager.open(path)
    assert manager.get_entries() == [] and manager.load_errors == []
    manager.append_message(user("a"))
    manager.append_message(assistant("b"))
    reopened = SessionManager.open(path)
    assert reopened.get_session_id() == manager.get_session_id()
    assert len(reopened.get_entries()) == 2 and reopened.load_errors == []


# ---------------------------------------------------------------------------- round trips


def test_every_entry_type_round_trips(tmp_path):
    m = started(tmp_path)
    first = m.get_entries()[0].id
    m.append_message(
        AssistantMessage(
            content=[TextContent(text="t"), ToolCall(id="c1", name="read", arguments={"path": "a", "type": "tags"})],
            api="faux", provider="faux", model="m1", stop_reason="toolUse",
        )
    )
    m.append_message(ToolResultMessage(tool_call_id="c1", tool_name="read", content=[TextContent(text="ok")], details={"x": 1}))
    m.append_message(UserMessage(content=[TextContent(text="look"), ImageContent(data="aGk=", mime_type="image/png")]))
    m.append_message(BashExecutionMessage(command="ls", output="a\nb", exit_code=0))
    m.append_message({"role": "user", "content": "from a dict", "timestamp": 5})
    m.append_model_change("anthropic", "claude")
    m.append_thinking_level_change("high")
    m.append_compaction("summary", first, 1234, {"readFiles": ["a"]}, True)
    m.append_custom_entry("state", {"count": 3})
    m.append_custom_message_entry("note", "remember", False, {"k": "v"})
    m.append_custom_message_entry("blocks", [TextContent(text="b")])
    m.append_label(first, "start")
    m.append_session_info("my session")
    m.append_tags({"telegram:chat": "42"})
    m.branch_with_summary(first, "went elsewhere", {"d": 1})

    reopened = SessionManager.open(m.get_session_file())
    assert reopened.load_errors == []
    assert reopened.get_header() == m.get_header()
    assert [e.to_json_dict() for e in reopened.get_entries()] == [e.to_json_dict() for e in m.get_entries()]
    assert reopened.get_entries() == m.get_entries()
    assert reopened.get_leaf_id() == m.get_leaf_id()
    assert reopened.get_label(first) == "start"
    assert reopened.get_session_name() == "my session"
    assert reopened.get_tags() == {"telegram:chat": "42"}
    # type first and parentId always present, as pi writes.
    for line in Path(m.get_session_file()).read_text().splitlines()[1:]:
        assert line.startswith('{"type":"') and '"parentId":' in line


def test_entry_ids_are_8_hex_and_chain_to_the_leaf(tmp_path):
    m = started(tmp_path)
    a, b = m.get_entries()
    assert re.fullmatch(r"[0-9a-f]{8}", a.id) and a.parent_id is None and b.parent_id == a.id
    assert m.get_leaf_id() == b.id and m.get_leaf_entry() is b


# ---------------------------------------------------------------------------- tree


def test_branch_and_children_and_tree(tmp_path):
    m = started(tmp_path)
    u1, a1 = (e.id for e in m.get_entries())
    u2 = m.append_message(user("second"))
    m.branch(u1)
    alt = m.append_message(assistant("alternative"))
    assert m.get_leaf_id() == alt
    assert [e.id for e in m.get_branch()] == [u1, alt]
    assert [e.id for e in m.get_branch(u2)] == [u1, a1, u2]
    assert [e.id for e in m.get_children(u1)] == [a1, alt]
    assert [e.id for e in m.get_children(None)] == [u1]
    m.append_label(a1, "first answer")

    tree = m.get_tree()
    assert len(tree) == 1 and tree[0].entry.id == u1
    assert [c.entry.id for c in tree[0].children] == [a1, alt]
    assert tree[0].children[0].label == "first answer"
    assert [c.entry.id for c in tree[0].children[0].children] == [u2]

    reopened = SessionManager.open(m.get_session_file())
    assert reopened.get_leaf_id() == m.get_leaf_id()  # the last appended entry (the label)
    assert isinstance(reopened.get_leaf_entry(), LabelEntry)

    with pytest.raises(KeyError):
        m.branch("nope")


def test_deep_tree_does_not_recurse(tmp_path):
    m = SessionManager.in_memory("/proj")
    for i in range(3000):
        m.append_custom_entry("x", i)
    tree = m.get_tree()
    depth, node = 1, tree[0]
    while node.children:
        node, depth = node.children[0], depth + 1
    assert depth == 3000 and len(m.get_branch()) == 3000


def test_branch_with_summary(tmp_path):
    m = started(tmp_path)
    u1 = m.get_entries()[0].id
    m.append_message(user("dead end"))
    summary_id = m.branch_with_summary(u1, "tried X, failed", {"files": []})
    entry = m.get_entry(summary_id)
    assert entry.type == "branch_summary" and entry.parent_id == u1 and entry.from_id == u1
    assert m.get_leaf_id() == summary_id
    roles = [msg.role for msg in m.build_session_context().messages]
    assert roles == ["user", "branchSummary"]

    root_summary = m.branch_with_summary(None, "from the top")
    assert m.get_entry(root_summary).parent_id is None and m.get_entry(root_summary).from_id == "root"


def test_reset_leaf_starts_a_new_root(tmp_path):
    m = started(tmp_path)
    m.reset_leaf()
    assert m.get_leaf_id() is None and m.build_session_context().messages == []
    new_root = m.append_message(user("again"))
    assert m.get_entry(new_root).parent_id is None
    assert len(m.get_tree()) == 2


def test_labels_fold_and_clear(tmp_path):
    m = started(tmp_path)
    a = m.get_entries()[0].id
    m.append_label(a, "one")
    m.append_label(a, "  two  ")
    assert m.get_label(a) == "two"
    m.append_label(a, None)
    assert m.get_label(a) is None
    m.append_label(a, "three")
    m.append_label(a, "   ")
    assert m.get_label(a) is None
    assert SessionManager.open(m.get_session_file()).get_label(a) is None
    with pytest.raises(KeyError):
        m.append_label("ffffffff", "x")


def test_session_name_is_the_latest(tmp_path):
    m = started(tmp_path)
    assert m.get_session_name() is None
    m.append_session_info("first")
    m.append_session_info("second")
    assert SessionManager.open(m.get_session_file()).get_session_name() == "second"
    m.append_session_info("")
    assert SessionManager.open(m.get_session_file()).get_session_name() is None


def test_tags_fold_merge_delete_and_replace(tmp_path):
    m = started(tmp_path)
    m.append_tags({"a": "1", "b": "2"})
    m.append_tags({"b": None, "c": "3"})
    assert m.get_tags() == {"a": "1", "c": "3"}
    assert m.append_tags({}) is None

    count = len(m.get_entries())
    entry_id = m.set_tags({"a": "1", "d": "4"})
    assert m.get_entry(entry_id).tags == {"c": None, "d": "4"}  # only the delta is written
    assert m.set_tags({"a": "1", "d": "4"}) is None and len(m.get_entries()) == count + 1
    assert SessionManager.open(m.get_session_file()).get_tags() == {"a": "1", "d": "4"}
    m.set_tags({})
    assert SessionManager.open(m.get_session_file()).get_tags() == {}

    with pytest.raises(ValueError):
        m.append_tags({"": "x"})
    with pytest.raises(ValueError):
        m.append_tags({"k": 3})
    with pytest.raises(ValueError):
        m.set_tags({"k": None})


# ---------------------------------------------------------------------------- fork


def test_fork_copies_the_branch_up_to_an_entry(tmp_path):
    m = started(tmp_path)
    u1, a1 = (e.id for e in m.get_entries())
    m.append_label(u1, "start")
    m.append_tags({"chat": "1"})
    u2 = m.append_message(user("second"))
    m.append_message(assistant("second answer"))

    fork = SessionManager.fork(m.get_session_file(), u2)
    assert fork.get_session_id() != m.get_session_id()
    assert fork.get_header().parent_session == m.get_session_file()
    assert Path(fork.get_session_file()).parent == Path(m.get_session_file()).parent
    kept = [e.id for e in fork.get_entries() if not isinstance(e, LabelEntry)]
    assert kept == [u1, a1, u2]
    assert fork.get_label(u1) == "start"
    assert fork.get_tags() == {}
    assert fork.is_persisted()  # the copied branch holds an assistant reply

    reopened = SessionManager.open(fork.get_session_file())
    assert reopened.load_errors == [] and [m.role for m in reopened.build_session_context().messages] == [
        "user", "assistant", "user",
    ]
    # The source is untouched.
    assert len(SessionManager.open(m.get_session_file()).get_entries()) == len(m.get_entries())


def test_fork_of_a_manager_at_its_leaf_and_into_another_cwd(tmp_path):
    m = started(tmp_path)
    fork = SessionManager.fork(m, cwd="/other")
    assert [e.id for e in fork.get_entries()] == [e.id for e in m.get_entries()]
    assert fork.get_cwd() == "/other"
    assert Path(fork.get_session_file()).parent == tmp_path / "sessions" / cwd_slug("/other")

    early = SessionManager.fork(m, m.get_entries()[0].id)
    assert early.is_persisted()  # a user message is worth a file, like in any new session

    with pytest.raises(KeyError):
        SessionManager.fork(m, "ffffffff")


def test_fork_of_in_memory_stays_in_memory():
    m = SessionManager.in_memory("/proj")
    m.append_message(user("a"))
    m.append_message(assistant("b"))
    fork = SessionManager.fork(m)
    assert fork.get_session_file() is None and len(fork.get_entries()) == 2


# ---------------------------------------------------------------------------- lookup


def test_continue_recent_picks_newest_by_mtime(tmp_path):
    root = tmp_path / "sessions"
    old = started(tmp_path)
    new = started(tmp_path)
    os.utime(old.get_session_file(), (1_000, 1_000))
    os.utime(new.get_session_file(), (2_000, 2_000))
    assert SessionManager.continue_recent("/proj", root).get_session_id() == new.get_session_id()
    os.utime(old.get_session_file(), (3_000, 3_000))
    assert SessionManager.continue_recent("/proj", root).get_session_id() == old.get_session_id()


def test_continue_recent_skips_broken_files_and_creates_when_empty(tmp_path):
    root = tmp_path / "sessions"
    fresh = SessionManager.continue_recent("/proj", root)
    assert fresh.get_entries() == [] and not fresh.is_persisted()

    good = started(tmp_path)
    broken = Path(good.get_session_file()).with_name("zzz_broken.jsonl")
    broken.write_text("not a session\n")
    os.utime(good.get_session_file(), (1_000, 1_000))
    assert SessionManager.continue_recent("/proj", root).get_session_id() == good.get_session_id()


def test_open_by_id_prefix(tmp_path):
    root = tmp_path / "sessions"
    here = started(tmp_path, "/proj")
    there = started(tmp_path, "/elsewhere")
    assert SessionManager.open_by_id(here.get_session_id()[:8], cwd="/proj", session_dir=root).get_session_id() == (
        here.get_session_id()
    )
    # Not in the cwd folder: found across all folders.
    found = SessionManager.open_by_id(there.get_session_id()[:6].upper(), cwd="/proj", session_dir=root)
    assert found.get_session_id() == there.get_session_id()
    with pytest.raises(SessionLookupError, match="no session"):
        SessionManager.open_by_id("zzzz", session_dir=root)
    with pytest.raises(SessionLookupError, match="empty"):
        SessionManager.open_by_id("  ", session_dir=root)


def test_open_by_id_ambiguous_prefix_lists_candidates(tmp_path):
    folder = tmp_path / "sessions" / cwd_slug("/proj")
    ids = ["abcd1111-0000-4000-8000-000000000000", "abcd2222-0000-4000-8000-000000000000"]
    for sid in ids:
        m = SessionManager.open(folder / f"2024-01-01T00-00-00-000Z_{sid}.jsonl", cwd="/proj")
        m.append_message(user("x"))
        m.append_message(assistant("y"))
    with pytest.raises(SessionLookupError) as info:
        SessionManager.open_by_id("abcd", cwd="/proj", session_dir=tmp_path / "sessions")
    text = str(info.value)
    assert "ambiguous" in text and all(sid in text for sid in ids)
    # A header id that does not follow the file name pattern is still found.
    odd = folder / "custom-name.jsonl"
    m = SessionManager.open(odd, cwd="/proj")
    m.append_message(user("x"))
    m.append_message(assistant("y"))
    prefix = m.get_session_id()[:12]
    assert SessionManager.open_by_id(prefix, session_dir=tmp_path / "sessions").get_session_file() == str(odd)


def test_loaded_file_with_damage_keeps_the_rest(tmp_path):
    m = started(tmp_path)
    path = Path(m.get_session_file())
    with path.open("a") as handle:
        handle.write("garbage\n")
    m.append_message(user("after garbage"))
    with path.open("a") as handle:
        handle.write('{"type":"message","id":"12')  # torn
    reopened = SessionManager.open(path)
    assert [e.message.content for e in reopened.get_entries() if isinstance(e, MessageEntry)][-1] == "after garbage"
    assert [e.split(":")[0] for e in reopened.load_errors] == ["line 4", "line 6"]
    new_id = reopened.append_message(assistant("still fine"))
    again = SessionManager.open(path)
    assert again.get_leaf_id() == new_id and len(again.get_entries()) == 4


def test_file_deleted_behind_our_back_gets_its_header_again(tmp_path):
    m = started(tmp_path)
    path = Path(m.get_session_file())
    path.unlink()
    m.append_message(user("after delete"))
    reopened = SessionManager.open(path)
    assert reopened.get_session_id() == m.get_session_id()
    # Its parent went with the deleted file: said, and the entry starts the history.
    assert reopened.load_errors == [f"line 2: entry {reopened.get_entries()[0].id} names a parent "
                                    f"{m.get_entries()[-2].id} that is not in the file; made it the first entry"]
    assert [e.message.content for e in reopened.get_entries()] == ["after delete"]
    assert reopened.get_entries()[0].parent_id is None
