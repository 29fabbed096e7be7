"""Opening long sessions fast: the same entries, errors and tree as the line-by-line rules.

``store.load`` validates each line straight from its JSON bytes with the collector paused,
and ``SessionManager.open`` indexes the file in bulk and builds the child index only when
asked. These tests hold the fast path to the careful rules (one ``json.loads`` and one
validation per line), on generated files full of damage, and check that the collector is
left as it was found.
"""

from __future__ import annotations

import gc
import json
import os
import weakref
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from wolli.agent.messages import parse_agent_message
from wolli.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, Usage, UserMessage
from wolli.session import store
from wolli.session.entries import (
    KNOWN_ENTRY_TYPES,
    LabelEntry,
    MessageEntry,
    SessionInfoEntry,
    TagsEntry,
    parse_entry,
)
from wolli.session.manager import SessionManager

HEADER = '{"type":"session","version":3,"id":"11111111-2222-3333-4444-555555555555","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/proj"}'
IDS = ["aaaaaaaa", "bbbbbbbb", "cccccccc", "dddddddd", "eeeeeeee"]


@pytest.fixture
def collector_on():
    """The collector on for the test, as it was afterwards."""
    was = gc.isenabled()
    gc.enable()
    yield
    gc.enable() if was else gc.disable()  # a test that turned it off must not leave it off


# ---------------------------------------------------------------------------- the reference


def reference_load(raw: bytes) -> tuple[dict[str, Any] | None, list[dict[str, Any]], list[str]]:
    """The loading rules spelled out line by line: header, kept entries, errors in order.
    The header is None when the file had none and a new one is made (its id is random)."""
    lines = raw.split(b"\n")
    torn = lines.pop()
    first = next((i for i, line in enumerate(lines) if line.strip()), None)
    if first is None:
        first, lines, torn = 0, [torn], b""
    try:
        header: dict[str, Any] | None = store.parse_header(lines[first]).to_json_dict()
        lost = None
    except store.SessionFileError as exc:  # entries without a header: read them all
        header, lost = None, exc
        first -= 1
    numbered = [(first + 2 + i, line) for i, line in enumerate(lines[first + 1 :]) if line.strip()]
    torn_number = None
    if torn.strip():
        torn_number = len(lines) + 1
        numbered.append((torn_number, torn))
    entries: list[Any] = []
    errors: list[str] = []
    duplicates: list[str] = []
    seen: set[str] = set()
    skipped: dict[str, str | None] = {}  # a skipped line's id -> its parent id
    for number, line in numbered:
        data = None
        try:
            data = json.loads(line)
            if not isinstance(data, dict):
                raise ValueError("not a JSON object")
            entry = parse_entry(data)
        except Exception as exc:
            reason = store._describe(exc)
            if isinstance(data, dict) and isinstance(data.get("id"), str):
                skipped[data["id"]] = data.get("parentId") if isinstance(data.get("parentId"), str) else None
                if data.get("type") not in KNOWN_ENTRY_TYPES:
                    reason = f"unknown entry type {data.get('type')!r} skipped (written by a newer Wolli?)"
            if number == torn_number:
                reason = f"torn last line ignored: {reason}"
            errors.append(f"line {number}: {reason}")
            continue
        if entry.id in seen:
            duplicates.append(f"line {number}: duplicate entry id {entry.id} skipped")
            continue
        if entry.parent_id is not None and entry.parent_id not in seen and entry.parent_id not in skipped:
            before = entries[-1].id if entries else None  # a dangling parent: the entry before
            errors.append(f"line {number}: entry {entry.id} names a parent {entry.parent_id} that is not in the "
                          "file; " + (f"attached it to the entry before it ({before})" if before else
                                      "made it the first entry"))
            entry.parent_id = before
        seen.add(entry.id)
        entries.append(entry)
    for entry in entries:  # children of skipped lines hang on the nearest kept ancestor
        parent, hops = entry.parent_id, 0
        while parent in skipped and hops <= len(skipped):
            parent, hops = skipped[parent], hops + 1
        entry.parent_id = parent
    if lost is not None:
        if not entries:
            raise lost
        errors.insert(0, f"line {first + 2}: no session header ({lost}); made a new one")
    return header, [e.to_json_dict() for e in entries], errors + duplicates


def reference_tree(entries: list[Any]) -> dict[str, Any]:
    """What the manager folds from entries in file order."""
    labels: dict[str, str] = {}
    tags: dict[str, str] = {}
    name = None
    children: dict[str | None, list[str]] = {}
    for entry in entries:
        children.setdefault(entry.parent_id, []).append(entry.id)
        if isinstance(entry, LabelEntry):
            if entry.label:
                labels[entry.target_id] = entry.label
            else:
                labels.pop(entry.target_id, None)
        elif isinstance(entry, SessionInfoEntry):
            name = entry.name or None
        elif isinstance(entry, TagsEntry):
            for key, value in entry.tags.items():
                if value is None:
                    tags.pop(key, None)
                else:
                    tags[key] = value
    return {"labels": labels, "tags": tags, "name": name, "children": children,
            "leaf": entries[-1].id if entries else None}


# ---------------------------------------------------------------------------- generated files

ids = st.sampled_from(IDS)
parents = st.one_of(st.none(), ids)
texts = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=12)


def _entry(kind: str, entry_id: str, parent: str | None, **fields: Any) -> str:
    return json.dumps({"type": kind, "id": entry_id, "parentId": parent, "timestamp": "2025-01-01T00:00:00.000Z",
                       **fields}, ensure_ascii=False, separators=(",", ":"))


@st.composite
def good_lines(draw: st.DrawFn) -> str:
    entry_id, parent = draw(ids), draw(parents)
    kind = draw(st.sampled_from(["user", "assistant", "tool", "custom", "label", "name", "tags", "model"]))
    if kind == "user":
        return _entry("message", entry_id, parent, message={"role": "user", "content": draw(texts), "timestamp": 1})
    if kind == "assistant":
        return _entry("message", entry_id, parent, message={
            "role": "assistant", "content": [{"type": "text", "text": draw(texts)},
                                             {"type": "toolCall", "id": "c1", "name": "read", "arguments": {"p": 1}}],
            "api": "faux", "provider": "faux", "model": draw(st.sampled_from(["m1", "m2"])),
            "usage": {"input": 1, "output": 2, "cost": {"total": 0.5}}, "stopReason": "toolUse", "timestamp": 2})
    if kind == "tool":
        return _entry("message", entry_id, parent, message={
            "role": "toolResult", "toolCallId": "c1", "toolName": "read",
            "content": [{"type": "text", "text": draw(texts)}], "isError": False, "timestamp": 3, "extraField": [1]})
    if kind == "custom":
        return _entry("custom", entry_id, parent, customType="t", data={"n": draw(texts)})
    if kind == "label":
        return _entry("label", entry_id, parent, targetId=draw(ids), label=draw(st.one_of(st.none(), texts)))
    if kind == "name":
        return _entry("session_info", entry_id, parent, name=draw(st.one_of(st.none(), texts)))
    if kind == "tags":
        return _entry("tags", entry_id, parent, tags=draw(st.dictionaries(
            st.sampled_from(["a", "b"]), st.one_of(st.none(), texts), max_size=2)))
    return _entry("model_change", entry_id, parent, provider="faux", modelId=draw(texts))


bad_lines = st.sampled_from([
    "this is not json",
    "[1, 2]",
    "42",
    '"just a string"',
    "{}",
    '{"type":"message","id":"ffffffff","parentId":null,"message":{"role":"nope"}}',
    '{"type":"unknown_kind","id":"ffffffff","parentId":null}',
    '{"type":"custom","id":"ffffffff","parentId":null,"timestamp":"t","customType":"t"}{"x":1}',
    '{"type":"custom","id":"ffffffff","parentId":null,"timestamp":"t","customType":"t"},{"type":"custom","id":"99999999"}',
    '{"type":"custom","id":"ffffffff","parentId":null,"timestamp":"t","customType":"t","data":"\\ud800"}',
    '{"type":"custom","id":"ffffffff","parentId":null,"timestamp":"t","customType":"t","data":NaN}',
    '{"type":"custom","id":"ffffffff","parentId":null,"timestamp":"t","customType":"t","data":1e999}',
    "",
    "   ",
    "\t",
    "\r",
    "\x0b",
])


@st.composite
def session_files(draw: st.DrawFn) -> bytes:
    body: list[str] = []
    for _ in range(draw(st.integers(0, 12))):
        if draw(st.booleans()):
            line = draw(good_lines())
            if draw(st.integers(0, 9)) == 0:
                line += "\r"  # written on Windows
            body.append(line)
        else:
            body.append(draw(bad_lines))
    head = [""] * draw(st.integers(0, 2)) + [draw(st.sampled_from([HEADER, HEADER, HEADER, "{not a header"]))]
    text = "\n".join(head + body)
    ending = draw(st.sampled_from(["newline", "none", "torn"]))
    if ending == "newline":
        text += "\n"
    elif ending == "torn":
        fragment = draw(good_lines())
        text += "\n" + fragment[: draw(st.integers(1, len(fragment)))]
    return text.encode("utf-8")


@settings(max_examples=250, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(raw=session_files())
def test_load_keeps_and_reports_exactly_what_the_line_by_line_rules_do(tmp_path, raw):
    path = tmp_path / "s.jsonl"
    path.write_bytes(raw)
    try:
        expected = reference_load(raw)
    except store.SessionFileError:
        with pytest.raises(store.SessionFileError):
            store.load(path)
        return
    loaded = store.load(path)
    header = loaded.header.to_json_dict()
    if expected[0] is None:  # rebuilt: a fresh id, the first entry's time, this folder
        assert loaded.header_rebuilt and header["cwd"] == os.getcwd()
        assert header["timestamp"] == loaded.entries[0].timestamp
        header = None
    assert (header, [e.to_json_dict() for e in loaded.entries], loaded.errors) == expected

    manager = SessionManager.open(path)
    tree = reference_tree(loaded.entries)
    if expected[0] is None:
        assert manager.load_errors[-1] == f"saved with a new session header; the original is kept as {path}.no-header"
        manager.load_errors.pop()
        os.remove(f"{path}.no-header")
    # Lines outside the context are validated when first built (here, by get_entries), so
    # their reports come after the index's: the same reports, in another order.
    assert [e.to_json_dict() for e in manager.get_entries()] == expected[1]
    assert sorted(manager.load_errors) == sorted(expected[2])
    assert manager.get_leaf_id() == tree["leaf"]
    assert manager.get_session_name() == tree["name"] and manager.get_tags() == tree["tags"]
    assert {i: manager.get_label(i) for i in IDS if manager.get_label(i)} == tree["labels"]
    for parent, kids in tree["children"].items():
        assert [e.id for e in manager.get_children(parent)] == kids
    assert gc.isenabled()


def test_duplicates_are_reported_after_every_unreadable_line(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [HEADER, _entry("custom", "aaaaaaaa", None, customType="t"), _entry("custom", "aaaaaaaa", None, customType="t"),
             "garbage", _entry("custom", "bbbbbbbb", "aaaaaaaa", customType="t")]
    path.write_text("\n".join(lines) + "\n")
    loaded = store.load(path)
    assert [e.id for e in loaded.entries] == ["aaaaaaaa", "bbbbbbbb"]
    assert [e.split(":")[0] for e in loaded.errors] == ["line 4", "line 3"]
    assert "not valid JSON" in loaded.errors[0] and "duplicate entry id aaaaaaaa" in loaded.errors[1]


# ---------------------------------------------------------------------------- long sessions


def write_long_session(path: Path, pairs: int, *, compact_at: int | None = None) -> list[str]:
    """A session of ``pairs`` prompt/reply turns (with tool calls); returns its lines."""
    manager = SessionManager.create("/proj", path.parent)
    manager.append_model_change("anthropic", "claude")
    manager.append_thinking_level_change("high")
    usage = Usage(input=10, output=5, total_tokens=15)
    for turn in range(pairs):
        if turn == compact_at:
            branch = [e for e in manager.get_branch() if isinstance(e, MessageEntry)]
            manager.append_compaction("what happened so far", branch[-10].id, 12345)
        manager.append_message(UserMessage(content=f"turn {turn}: fix the parser\n" * 3))
        manager.append_message(AssistantMessage(
            content=[TextContent(text="reading"), ToolCall(id=f"c{turn}", name="read", arguments={"path": "p.py"})],
            api="faux", provider="faux", model=f"m{turn % 3}", usage=usage, stop_reason="toolUse"))
        manager.append_message(ToolResultMessage(tool_call_id=f"c{turn}", tool_name="read",
                                                 content=[TextContent(text="x = 1\n" * 300)]))
        manager.append_message(AssistantMessage(content=[TextContent(text=f"done {turn}")], api="faux",
                                                provider="faux", model="m-last", usage=usage))
    file = Path(manager.get_session_file())
    file.replace(path)
    return path.read_text().splitlines()


def test_a_long_session_resumes_with_every_message_as_written(tmp_path):
    path = tmp_path / "long.jsonl"
    lines = write_long_session(path, 300)
    manager = SessionManager.open(path)
    context = manager.build_session_context()
    written = [parse_agent_message(json.loads(line)["message"]) for line in lines[1:] if '"type":"message"' in line]
    assert context.messages == written and len(written) == 1200
    assert context.model == ("faux", "m-last") and context.thinking_level == "high"
    assert manager.load_errors == [] and len(manager.get_entries()) == 1202


def test_a_compacted_long_session_sends_the_summary_and_the_kept_tail(tmp_path):
    path = tmp_path / "long.jsonl"
    lines = write_long_session(path, 200, compact_at=150)
    manager = SessionManager.open(path)
    entries = manager.get_entries()
    compaction = next(e for e in entries if e.type == "compaction")
    kept_from = next(i for i, e in enumerate(entries) if e.id == compaction.first_kept_entry_id)
    after = entries.index(compaction)
    messages = manager.build_session_context().messages
    assert messages[0].role == "compactionSummary" and messages[0].summary == "what happened so far"
    expected = [e.message for e in entries[kept_from:after] + entries[after + 1 :] if isinstance(e, MessageEntry)]
    assert messages[1:] == expected and len(expected) == 10 + 50 * 4
    # Entries before the kept ones are never sent, but they are still whole entries.
    first = entries[2]
    assert isinstance(first, MessageEntry) and first.message == parse_agent_message(json.loads(lines[3])["message"])


def test_one_damaged_line_in_a_long_session_costs_only_that_line(tmp_path):
    path = tmp_path / "long.jsonl"
    lines = write_long_session(path, 100)
    lines[200] = lines[200][: len(lines[200]) // 2]  # an assistant turn cut in half
    assert '"role":"user"' in lines[299]
    lines[299] = lines[299].replace('"role":"user"', '"role":"robot"')
    path.write_text("\n".join(lines) + "\n")
    manager = SessionManager.open(path)
    assert [e.split(":")[0] for e in manager.load_errors] == ["line 201", "line 300"]
    assert "not valid JSON" in manager.load_errors[0] and "invalid entry" in manager.load_errors[1]
    assert len(manager.get_entries()) == len(lines) - 1 - 2
    # Both skipped lines kept their ids at the start of the line (the index reads them there
    # even from the half of line 201), so the entries after each hang on its parent. The
    # whole history stays one branch: every kept message is in the context.
    assert len(manager.build_session_context().messages) == len(lines) - 1 - 2 - 2


def test_opening_a_long_session_runs_no_collection(tmp_path, collector_on):
    path = tmp_path / "long.jsonl"
    write_long_session(path, 250)
    collections: list[int] = []

    def record(phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    gc.collect()
    gc.callbacks.append(record)
    try:
        manager = SessionManager.open(path)
        manager.build_session_context()
    finally:
        gc.callbacks.remove(record)
    # 1,000 entries make tens of thousands of objects: a collector left on walks them all.
    assert collections == [] and gc.isenabled() and gc.get_freeze_count() == 0


# ---------------------------------------------------------------------------- the collector


def test_gc_paused_turns_the_collector_back_on_even_after_an_error(collector_on):
    with pytest.raises(RuntimeError), store.gc_paused():
        assert not gc.isenabled()
        with store.gc_paused():  # nested: the inner pause must not turn it on early
            pass
        assert not gc.isenabled()
        raise RuntimeError("boom")
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_gc_paused_leaves_a_disabled_collector_disabled(collector_on):
    gc.disable()
    with store.gc_paused():
        kept = [[i] for i in range(1000)]
    assert not gc.isenabled() and gc.get_freeze_count() == 0 and kept


def test_gc_paused_keeps_the_programs_own_frozen_objects_frozen(collector_on):
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with store.gc_paused():
            kept = [[i] for i in range(1000)]
        assert gc.get_freeze_count() == frozen and gc.isenabled() and kept
    finally:
        gc.unfreeze()


def test_garbage_from_before_an_open_is_still_collected(tmp_path, collector_on):
    path = tmp_path / "long.jsonl"
    write_long_session(path, 20)

    class Node:
        pass

    node = Node()
    node.self = node  # a cycle: only the collector can free it
    alive = weakref.ref(node)
    del node
    SessionManager.open(path)
    gc.collect()
    assert alive() is None


# ---------------------------------------------------------------------------- the tree


def test_child_index_is_built_on_first_use_and_kept_current(tmp_path):
    path = tmp_path / "s.jsonl"
    lines = [HEADER,
             _entry("custom", "aaaaaaaa", None, customType="t"),
             _entry("custom", "bbbbbbbb", "aaaaaaaa", customType="t"),
             _entry("custom", "cccccccc", "aaaaaaaa", customType="t"),
             _entry("custom", "dddddddd", "zzzzzzzz", customType="t")]  # parent lost to damage
    path.write_text("\n".join(lines) + "\n")
    manager = SessionManager.open(path)
    manager.branch("bbbbbbbb")
    before = manager.append_custom_entry("t")  # appended before the index exists
    assert [e.id for e in manager.get_children("aaaaaaaa")] == ["bbbbbbbb", "cccccccc"]
    assert [e.id for e in manager.get_children("bbbbbbbb")] == [before]
    assert [e.id for e in manager.get_children(None)] == ["aaaaaaaa"]
    # The entry whose parent is missing hangs on the entry before it (reported on load).
    assert [e.id for e in manager.get_children("cccccccc")] == ["dddddddd"]
    assert manager.load_errors == ["line 5: entry dddddddd names a parent zzzzzzzz that is not in the file; "
                                   "attached it to the entry before it (cccccccc)"]
    manager.branch("aaaaaaaa")
    after = manager.append_custom_entry("t")  # appended after: the index follows
    assert [e.id for e in manager.get_children("aaaaaaaa")] == ["bbbbbbbb", "cccccccc", after]
    assert [n.entry.id for n in manager.get_tree()] == ["aaaaaaaa"]
    reopened = SessionManager.open(path)
    assert [e.id for e in reopened.get_children("aaaaaaaa")] == ["bbbbbbbb", "cccccccc", after]
    assert reopened.get_leaf_id() == after
