"""A resumed session holds objects for its context only (docs/sessions.md, "Resuming").

``SessionManager.open`` indexes every line but builds only the branch from the leaf back to
the latest compaction's first kept entry; older history and abandoned branches stay line
references, built when asked for (``get_entry``, ``/tree``, fork, export) and not kept.
These tests hold that to what a reader can see: the same context, the same tree, the same
entries as a whole load, objects kept only for the context, memory that follows the
context rather than the file, and damage in an unbuilt line reported when it is reached.
"""

from __future__ import annotations

import gc
import json
import tracemalloc
from pathlib import Path

import pytest

from wolli.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from wolli.session import store
from wolli.session.context import build_context
from wolli.session.entries import MessageEntry
from wolli.session.entry_store import EntryStore
from wolli.session.manager import SessionManager
from wolli.session.subagent_links import subagent_links

USAGE = Usage(input=10, output=5, total_tokens=15)


def _turn(manager: SessionManager, turn: int, *, model: str = "m1", words: int = 40) -> None:
    manager.append_message(UserMessage(content=f"turn {turn}: fix the parser " + "please " * words))
    manager.append_message(AssistantMessage(
        content=[TextContent(text="reading"), ToolCall(id=f"c{turn}", name="read", arguments={"path": "p.py"})],
        api="faux", provider="faux", model=model, usage=USAGE, stop_reason="toolUse"))
    manager.append_message(ToolResultMessage(tool_call_id=f"c{turn}", tool_name="read",
                                             content=[TextContent(text="x = 1\n" * words)]))
    manager.append_message(AssistantMessage(content=[TextContent(text=f"done {turn}")], api="faux",
                                            provider="faux", model=model, usage=USAGE))


def branched_compacted_session(folder: Path) -> tuple[Path, dict[str, str]]:
    """A session with an abandoned branch, two compactions and a branch summary; the leaf
    is on the newest branch, which is not the longest. Returns the file and landmark ids."""
    manager = SessionManager.create("/proj", folder)
    manager.append_model_change("faux", "m1")
    manager.append_thinking_level_change("high")
    for turn in range(30):
        _turn(manager, turn)
    fork_point = manager.get_leaf_id()
    for turn in range(30, 60):  # a branch that will be abandoned
        _turn(manager, turn, model="m-abandoned")
    abandoned_leaf = manager.get_leaf_id()
    manager.branch_with_summary(fork_point, "tried a rewrite of the lexer; dropped it")
    kept = [e for e in manager.get_branch() if isinstance(e, MessageEntry)][-8].id
    manager.append_compaction("first summary", kept, 5000)
    for turn in range(60, 80):
        _turn(manager, turn, model="m2")
    kept = [e for e in manager.get_branch() if isinstance(e, MessageEntry)][-12].id
    manager.append_compaction("second summary", kept, 9000)
    for turn in range(80, 85):
        _turn(manager, turn, model="m3")
    manager.append_message(AssistantMessage(content=[TextContent(text="THE LAST MESSAGE")], api="faux",
                                            provider="faux", model="m3", usage=USAGE))
    file = Path(manager.get_session_file())
    first = manager.get_entries()[2].id
    return file, {"fork": fork_point, "abandoned": abandoned_leaf, "first": first, "kept": kept}


def eager(path: Path) -> tuple[list[object], object]:
    """Every entry built, the old way, and the context of the last entry's branch."""
    loaded = store.load(path)
    by_id = {e.id: e for e in loaded.entries}
    branch, current = [], loaded.entries[-1].id
    while current is not None:
        branch.append(by_id[current])
        current = by_id[current].parent_id
    return loaded.entries, build_context(branch[::-1])


def test_the_context_of_a_branched_compacted_file_is_the_whole_loads(tmp_path):
    path, _ = branched_compacted_session(tmp_path)
    entries, expected = eager(path)
    manager = SessionManager.open(path)
    context = manager.build_session_context()
    assert context.messages == expected.messages  # type: ignore[attr-defined]
    assert context.messages[0].role == "compactionSummary" and context.messages[0].summary == "second summary"
    assert context.messages[-1].content[0].text == "THE LAST MESSAGE"
    assert context.model == ("faux", "m3") and context.thinking_level == "high"
    assert [e.to_json_dict() for e in manager.get_entries()] == [e.to_json_dict() for e in entries]
    assert manager.load_errors == []


def test_model_and_level_from_above_the_compaction_when_the_kept_part_names_none(tmp_path):
    manager = SessionManager.create("/proj", tmp_path)
    manager.append_model_change("faux", "m-old")
    manager.append_thinking_level_change("low")
    _turn(manager, 0)
    manager.append_model_change("faux", "m-new")  # above the compaction, after the last answer
    manager.append_message(UserMessage(content="and now?"))
    manager.append_compaction("summary", manager.get_leaf_id(), 100)
    path = Path(manager.get_session_file())
    context = SessionManager.open(path).build_session_context()
    assert context.model == ("faux", "m-new") and context.thinking_level == "low"
    assert [m.role for m in context.messages] == ["compactionSummary", "user"]


def test_only_the_context_is_kept_as_objects(tmp_path):
    path, marks = branched_compacted_session(tmp_path)
    manager = SessionManager.open(path)
    leaf = manager.get_leaf_id()
    assert leaf is not None
    # The context's entries are held: the same object each time.
    assert manager.get_entry(leaf) is manager.get_entry(leaf)
    assert manager.get_entry(marks["kept"]) is manager.get_entry(marks["kept"])
    # Older history and the abandoned branch are built on each request, not kept.
    for old in (marks["first"], marks["fork"], marks["abandoned"]):
        entry = manager.get_entry(old)
        assert entry is not None and entry.id == old
        assert manager.get_entry(old) is not entry
    # Moving to the abandoned branch makes it the context, and the old context is let go.
    manager.branch(marks["abandoned"])
    context = manager.build_session_context()
    assert context.messages[-1].model == "m-abandoned"
    assert manager.get_entry(marks["abandoned"]) is manager.get_entry(marks["abandoned"])
    assert manager.get_entry(leaf) is not manager.get_entry(leaf)


def _held_after_open(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        manager = SessionManager.open(path)
        gc.collect()
        held, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert manager.get_leaf_id() is not None
    return held


def test_memory_after_open_follows_the_context_not_the_file(tmp_path):
    """The same 400 turns, once whole in the context and once compacted down to the last
    few: the compacted one holds a fraction (every entry was held before, both alike)."""
    whole = SessionManager.create("/proj", tmp_path / "whole")
    compacted = SessionManager.create("/proj", tmp_path / "compacted")
    for manager in (whole, compacted):
        for turn in range(400):
            _turn(manager, turn)
    kept = [e for e in compacted.get_branch() if isinstance(e, MessageEntry)][-20].id
    compacted.append_compaction("summary", kept, 100000)
    held_whole = _held_after_open(Path(whole.get_session_file()))
    held_compacted = _held_after_open(Path(compacted.get_session_file()))
    assert held_compacted * 3 < held_whole, (held_compacted, held_whole)


def test_damage_outside_the_context_is_reported_when_that_line_is_built(tmp_path):
    path, marks = branched_compacted_session(tmp_path)
    lines = path.read_text().splitlines()
    number = next(i for i, line in enumerate(lines) if f'"id":"{marks["abandoned"]}"' in line)
    data = json.loads(lines[number])
    data["message"]["role"] = "robot"  # readable start, invalid body
    lines[number] = json.dumps(data, separators=(",", ":"))
    path.write_text("\n".join(lines) + "\n")
    manager = SessionManager.open(path)
    assert manager.load_errors == []  # not in the context: not looked at yet
    assert manager.build_session_context().messages[-1].content[0].text == "THE LAST MESSAGE"
    ids = {node.entry.id for node in _walk(manager.get_tree())}
    assert marks["abandoned"] not in ids
    assert len(manager.load_errors) == 1
    assert manager.load_errors[0].startswith(f"line {number + 1}: invalid entry")
    assert manager.get_entry(marks["abandoned"]) is None


def test_a_damaged_leaf_gives_way_to_the_entry_before_it(tmp_path):
    path, _ = branched_compacted_session(tmp_path)
    lines = path.read_text().splitlines()
    previous = json.loads(lines[-2])["id"]
    lines[-1] = lines[-1].replace('"role":"assistant"', '"role":"robot"')
    path.write_text("\n".join(lines) + "\n")
    manager = SessionManager.open(path)
    assert manager.get_leaf_id() == previous
    assert [e.split(":")[0] for e in manager.load_errors] == [f"line {len(lines)}"]
    assert manager.build_session_context().messages[-1].content[0].text == "done 84"


def _walk(nodes):  # type: ignore[no-untyped-def]
    for node in nodes:
        yield node
        yield from _walk(node.children)


def spy_builds(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The type of every entry built from its line from now on (the real build runs)."""
    built: list[str] = []
    real = EntryStore._build

    def build(self: EntryStore, ref: store.EntryRef) -> object:
        built.append(ref.type)
        return real(self, ref)

    monkeypatch.setattr(EntryStore, "_build", build)
    return built


def test_reading_through_builds_only_the_kinds_asked_and_one_at_a_time(tmp_path, monkeypatch):
    path, marks = branched_compacted_session(tmp_path)
    entries, _ = eager(path)
    every = [e.id for e in entries]
    messages = [e.id for e in entries if e.type == "message"]
    del entries
    manager = SessionManager.open(path)
    context_size = len(manager.build_session_context().messages)  # at most this many are kept objects
    built = spy_builds(monkeypatch)
    seen: list[str] = []
    before = _alive(MessageEntry)  # the kept context, and whatever earlier tests left
    for entry in manager.iter_entries("message"):
        if len(seen) % 50 == 0:  # older history is let go as the reader moves on
            assert _alive(MessageEntry) <= before + 1, len(seen)
        seen.append(entry.id)
    assert seen == messages and len(messages) > 5 * context_size
    assert set(built) == {"message"}  # the model changes, summaries... were never built
    after_fork = [e.id for e in manager.iter_entries("message", after=marks["fork"])]
    assert after_fork == messages[messages.index(marks["fork"]) + 1:]
    assert [e.id for e in manager.iter_entries()] == every


def _alive(kind: type) -> int:
    gc.collect()
    return sum(1 for thing in gc.get_objects() if type(thing) is kind)


def test_subagent_links_build_only_message_entries(tmp_path, monkeypatch):
    manager = SessionManager.create("/proj", tmp_path)
    manager.append_model_change("faux", "m1")
    for turn in range(10):
        _turn(manager, turn)
    started = manager.append_message(AssistantMessage(
        content=[ToolCall(id="t1", name="task", arguments={"subagent": "explore", "prompt": "look"})],
        api="faux", provider="faux", model="m1", usage=USAGE, stop_reason="toolUse"))
    manager.append_message(ToolResultMessage(
        tool_call_id="t1", tool_name="task", content=[TextContent(text="found it")],
        details={"subagent": "explore", "sessionId": "child-1", "sessionFile": "/s/child.jsonl", "status": "done"}))
    manager.append_custom_entry("notes", {"seen": True})
    for turn in range(10, 30):
        _turn(manager, turn)
    kept = [e for e in manager.get_branch() if isinstance(e, MessageEntry)][-4].id
    manager.append_compaction("summary", kept, 5000)
    reopened = SessionManager.open(Path(manager.get_session_file()))
    built = spy_builds(monkeypatch)
    links = subagent_links(reopened)
    assert [(link.tool_call_id, link.session_id, link.status) for link in links] == [("t1", "child-1", "done")]
    assert subagent_links(reopened, started) == links
    assert set(built) == {"message"}


async def test_tool_search_state_and_session_stats_build_only_message_entries(tmp_path, monkeypatch):
    """What the MCP link reads back for tool search and what RPC's get_session_stats counts
    go through the whole file: message entries only, one at a time."""
    from tests.support.runtime import make_host
    from wolli.ai.providers.faux import FauxProvider
    from wolli.modes.rpc.queries import session_stats

    path, _ = branched_compacted_session(tmp_path / "sessions")
    messages = [e for e in eager(path)[0] if e.type == "message"]
    faux = FauxProvider()
    host = make_host(faux)
    try:
        session = await host.open_session(str(path), cwd=str(tmp_path))
        built = spy_builds(monkeypatch)
        assert not host.mcp_link().search_state(session).active
        stats = session_stats(session)
        assert set(built) == {"message"}
        assert stats["totalMessages"] == len(messages)
        assert stats["toolCalls"] == sum(len(m.message.tool_calls()) for m in messages
                                         if m.message.role == "assistant")
    finally:
        await host.shutdown()
        faux.unregister()
