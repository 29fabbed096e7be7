"""pi's v1 and v2 session files load as v3 and are rewritten, the original kept beside them."""

from __future__ import annotations

import json
from pathlib import Path

from wolli.ai.types import AssistantMessage, UserMessage
from wolli.session.entries import CompactionEntry, MessageEntry
from wolli.session.manager import SessionManager

TS = "2025-01-01T00:00:00.000Z"


def user(text: str) -> dict:
    return {"role": "user", "content": text, "timestamp": 1}


def assistant(text: str) -> dict:
    return {
        "role": "assistant", "content": [{"type": "text", "text": text}], "api": "faux", "provider": "faux",
        "model": "m", "usage": {}, "stopReason": "stop", "timestamp": 2,
    }


def write(path: Path, *lines: dict) -> Path:
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def v1_file(tmp_path: Path) -> Path:
    return write(
        tmp_path / "old.jsonl",
        {"type": "session", "id": "s1", "timestamp": TS, "cwd": "/proj"},  # no version: v1
        {"type": "message", "timestamp": TS, "message": user("one")},
        {"type": "message", "timestamp": TS, "message": assistant("two")},
        {"type": "thinking_level_change", "timestamp": TS, "thinkingLevel": "high"},
        {"type": "message", "timestamp": TS, "message": user("three")},
        {"type": "compaction", "timestamp": TS, "summary": "so far", "firstKeptEntryIndex": 4, "tokensBefore": 9},
        {"type": "message", "timestamp": TS, "message": assistant("four")},
    )


def test_a_v1_file_becomes_a_linear_chain_with_its_compaction_pointing_at_the_kept_entry(tmp_path: Path) -> None:
    manager = SessionManager.open(v1_file(tmp_path))
    entries = manager.get_entries()
    assert [e.parent_id for e in entries] == [None, *[e.id for e in entries[:-1]]]
    assert len({e.id for e in entries}) == len(entries)
    compaction = next(e for e in entries if isinstance(e, CompactionEntry))
    assert compaction.first_kept_entry_id == entries[3].id  # line index 4 counts the header as 0
    texts = [m.role for m in manager.build_session_context().messages]
    assert texts == ["compactionSummary", "user", "assistant"]
    assert manager.build_session_context().thinking_level == "high"


def test_the_upgrade_is_written_back_so_ids_stay_stable_and_the_original_is_kept(tmp_path: Path) -> None:
    path = v1_file(tmp_path)
    original = path.read_bytes()
    first = SessionManager.open(path)
    assert any("upgraded from format v1 to v3" in e for e in first.load_errors)
    assert Path(f"{path}.v1").read_bytes() == original
    header = json.loads(path.read_text().splitlines()[0])
    assert header["version"] == 3
    first.append_message(user("five"))
    again = SessionManager.open(path)
    assert again.load_errors == []
    assert [e.id for e in again.get_entries()] == [e.id for e in first.get_entries()]
    assert again.get_entries()[-1].parent_id == first.get_entries()[-2].id


def test_a_v2_hook_message_becomes_a_custom_message(tmp_path: Path) -> None:
    path = write(
        tmp_path / "v2.jsonl",
        {"type": "session", "version": 2, "id": "s2", "timestamp": TS, "cwd": "/proj"},
        {"type": "message", "id": "a1", "parentId": None, "timestamp": TS, "message": user("hi")},
        {"type": "message", "id": "a2", "parentId": "a1", "timestamp": TS,
         "message": {"role": "hookMessage", "customType": "note", "content": "from a hook", "display": True,
                     "timestamp": 3}},
    )
    manager = SessionManager.open(path)
    [_, hook] = manager.get_entries()
    assert isinstance(hook, MessageEntry) and hook.message.role == "custom"
    assert [e.id for e in manager.get_entries()] == ["a1", "a2"]
    assert '"role":"custom"' in path.read_text() and Path(f"{path}.v2").exists()


def test_a_bad_line_in_an_old_file_is_reported_and_the_rest_migrates(tmp_path: Path) -> None:
    path = v1_file(tmp_path)
    lines = path.read_text().splitlines()
    lines.insert(2, '{"type": "message", oops')
    path.write_text("\n".join(lines) + "\n")
    manager = SessionManager.open(path)
    assert any(e.startswith("line 3: not valid JSON") for e in manager.load_errors)
    assert len(manager.get_entries()) == 6


def test_a_current_file_is_not_rewritten(tmp_path: Path) -> None:
    manager = SessionManager.create("/proj", tmp_path)
    manager.append_message(UserMessage(content="x"))
    manager.append_message(AssistantMessage(content=[], api="faux", provider="faux", model="m"))
    path = Path(manager.get_session_file())  # type: ignore[arg-type]
    before = path.stat().st_mtime_ns
    reopened = SessionManager.open(path)
    assert reopened.load_errors == [] and path.stat().st_mtime_ns == before
    assert not list(path.parent.glob("*.v[0-9]"))
