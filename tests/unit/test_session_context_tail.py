"""A resumed session's context, its end first: ``defer_context``, ``context_tail``, ``finish_context``
(and ``older_messages``, the count of what comes before the tail).

The tail must be exactly the end of the context the full build gives (same objects, so the
screen's rows and the agent's messages line up), start at a row (never at a tool result whose
call it would lose), carry the branch's model and thinking level, and cost only its own
entries: nothing above it is built until ``finish_context``.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.long_session import write_long_session
from wolli.session.manager import SessionManager


def built_ids(manager: SessionManager) -> set[str]:
    store = manager._store
    return {entry_id for entry_id in store.ids() if store.is_built(entry_id)}


def test_the_tail_is_the_end_of_the_context_and_only_it_is_built(tmp_path: Path) -> None:
    path = write_long_session(tmp_path / "s.jsonl", str(tmp_path), 300)
    manager = SessionManager.open(path, defer_context=True)
    assert manager.context_pending
    tail = manager.context_tail(20)
    assert tail is not None
    assert 20 <= len(tail.messages) <= 22
    assert tail.messages[0].role != "toolResult"
    assert tail.model == ("local", "local-model") and tail.thinking_level == "low"
    # Built: the tail's entries, the two changes the model and level were read from.
    assert len(built_ids(manager)) <= len(tail.messages) + 3 < manager.entry_count() // 10

    manager.finish_context()
    assert not manager.context_pending
    full = manager.build_session_context()
    end = full.messages[-len(tail.messages):]
    assert all(a is b for a, b in zip(end, tail.messages, strict=True))
    assert len(full.messages) == 300 * 2 + 300 // 7
    assert full.model == tail.model and full.thinking_level == tail.thinking_level


def test_the_tail_does_not_start_at_a_tool_result(tmp_path: Path) -> None:
    path = write_long_session(tmp_path / "s.jsonl", str(tmp_path), 60, tools_every=1)  # every answer calls a tool
    for wanted in range(1, 12):
        manager = SessionManager.open(path, defer_context=True)
        tail = manager.context_tail(wanted)
        assert tail is not None and tail.messages[0].role != "toolResult"
        calls = {c.id for m in tail.messages if m.role == "assistant" for c in m.tool_calls()}
        assert {m.tool_call_id for m in tail.messages if m.role == "toolResult"} <= calls


def test_a_short_or_compacted_context_is_built_whole(tmp_path: Path) -> None:
    short = write_long_session(tmp_path / "short.jsonl", str(tmp_path), 5)
    assert SessionManager.open(short, defer_context=True).context_tail(20) is None

    path = write_long_session(tmp_path / "long.jsonl", str(tmp_path), 100)
    manager = SessionManager.open(path)
    kept = manager.get_branch()[-8].id
    manager.append_compaction("what happened before", kept, 50_000)
    for i in range(3):
        manager.append_message({"role": "user", "content": f"after {i}", "timestamp": i})
    manager.release_writer()
    reopened = SessionManager.open(path, defer_context=True)
    assert reopened.context_tail(20) is None  # the walk met the compaction: its context is short
    reopened.finish_context()
    messages = reopened.build_session_context().messages
    assert messages[0].role == "compactionSummary" and len(messages) == 1 + 8 + 3


def test_appends_while_pending_land_after_the_tail(tmp_path: Path) -> None:
    path = write_long_session(tmp_path / "s.jsonl", str(tmp_path), 200)
    manager = SessionManager.open(path, defer_context=True)
    tail = manager.context_tail(10)
    assert tail is not None
    manager.append_message({"role": "user", "content": "typed meanwhile", "timestamp": 1})
    manager.finish_context()
    messages = manager.build_session_context().messages
    assert messages[-1].content == "typed meanwhile"
    before_it = messages[-1 - len(tail.messages) : -1]
    assert all(a is b for a, b in zip(before_it, tail.messages, strict=True))
    lines = path.read_text().splitlines()
    assert json.loads(lines[-1])["message"]["content"] == "typed meanwhile"


def test_the_tail_counts_the_messages_before_it(tmp_path: Path) -> None:
    path = write_long_session(tmp_path / "s.jsonl", str(tmp_path), 300, tools_every=3)
    for wanted in (1, 20, 61):
        manager = SessionManager.open(path, defer_context=True)
        tail = manager.context_tail(wanted)
        assert tail is not None
        manager.finish_context()
        assert tail.older_messages + len(tail.messages) == len(manager.build_session_context().messages)


def test_the_count_before_the_tail_follows_a_compaction_above_it(tmp_path: Path) -> None:
    path = write_long_session(tmp_path / "long.jsonl", str(tmp_path), 100)
    manager = SessionManager.open(path)
    kept = manager.get_branch()[-8].id
    manager.append_compaction("what happened before", kept, 50_000)
    for i in range(40):  # enough after the compaction for a tail that stops short of it
        manager.append_message({"role": "user", "content": f"after {i}", "timestamp": i})
    manager.release_writer()
    reopened = SessionManager.open(path, defer_context=True)
    tail = reopened.context_tail(10)
    assert tail is not None and len(tail.messages) == 10
    reopened.finish_context()
    full = reopened.build_session_context().messages
    assert full[0].role == "compactionSummary" and len(full) == 1 + 8 + 40
    assert tail.older_messages == len(full) - 10
