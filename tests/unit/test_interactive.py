"""The client-independent parts of the slash commands: tree rows, session search, the
settings form's values, scoped models, the command table."""

from __future__ import annotations

import base64
import datetime as dt
from pathlib import Path

import pytest

from wolli.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from wolli.modes.interactive.clipboard import osc52
from wolli.modes.interactive.commands.registry import builtin_commands, command_entries, find_builtin, split
from wolli.modes.interactive.session_search import content_matches, match_sessions
from wolli.modes.interactive.settings_form import as_update, parse_value, setting_fields
from wolli.modes.interactive.tree_rows import tree_rows
from wolli.session.listing import SessionInfo
from wolli.session.manager import SessionManager


def user(text: str) -> UserMessage:
    return UserMessage(content=text)


def answer(text: str = "", *calls: str) -> AssistantMessage:
    blocks: list = [TextContent(text=text)] if text else []
    blocks += [ToolCall(id=f"c{i}", name=name, arguments={}) for i, name in enumerate(calls)]
    return AssistantMessage(content=blocks)


def rows_of(manager: SessionManager, **options):
    leaf = manager.get_leaf_id()
    path = {e.id for e in manager.get_branch()}
    return tree_rows(manager.get_tree(), leaf, path, **options)


def forked_session() -> tuple[SessionManager, str]:
    """q1 -> a1 -> (q2 -> a2 [tool call] -> result) and (q3 -> a3), leaf on a3."""
    manager = SessionManager.in_memory("/tmp")
    manager.append_message(user("q1"))
    a1 = manager.append_message(answer("a1"))
    manager.append_model_change("faux", "faux-2")
    manager.append_message(user("q2"))
    manager.append_message(answer("", "read"))
    manager.append_message(ToolResultMessage(tool_call_id="c0", tool_name="read", content=[TextContent(text="file")]))
    manager.branch(a1)
    manager.append_message(user("q3"))
    manager.append_message(answer("a3"))
    return manager, a1


def test_a_chain_is_straight_and_a_fork_gets_connectors():
    manager, a1 = forked_session()
    rows = rows_of(manager)
    assert [(r.prefix, r.text) for r in rows] == [
        ("", "q1"), ("", "a1"),
        ("├─ ", "q2"), ("│  ", "calls read"), ("│  ", "read ok: file"),
        ("└─ ", "q3"), ("   ", "a3"),
    ]
    assert [r.on_path for r in rows] == [True, True, False, False, False, True, True]
    assert rows[-1].is_leaf and rows[1].forks


def test_filters_hide_entries_and_keep_the_shape():
    manager, _ = forked_session()
    assert "model faux/faux-2" not in [r.text for r in rows_of(manager)]
    assert "model faux/faux-2" in [r.text for r in rows_of(manager, mode="all")]
    assert [r.text for r in rows_of(manager, mode="no-tools")] == ["q1", "a1", "q2", "q3", "a3"]
    user_rows = rows_of(manager, mode="user")
    assert [(r.prefix, r.text) for r in user_rows] == [("", "q1"), ("├─ ", "q2"), ("└─ ", "q3")]
    manager.append_label(manager.get_branch()[0].id, "start")
    assert [(r.text, r.label) for r in rows_of(manager, mode="labeled")] == [("q1", "start")]


def test_folding_and_search():
    manager, a1 = forked_session()
    folded = rows_of(manager, folded={a1})
    assert [r.text for r in folded] == ["q1", "a1"] and folded[1].folded
    assert [r.text for r in rows_of(manager, search="Q3")] == ["q3"]


def test_a_very_long_chain_needs_no_recursion():
    manager = SessionManager.in_memory("/tmp")
    for i in range(3000):
        manager.append_message(user(f"m{i}"))
    rows = rows_of(manager)
    assert len(rows) == 3000 and rows[-1].is_leaf and all(r.prefix == "" for r in rows)


def info(path: Path, name: str | None, first: str, cwd: str = "/work/project") -> SessionInfo:
    now = dt.datetime.now(dt.UTC)
    return SessionInfo(str(path), path.stem, cwd, name, now, now, 2, first)


def test_sessions_match_by_name_message_and_folder_text(tmp_path):
    sessions = [info(tmp_path / "a.jsonl", "parser work", "fix it"), info(tmp_path / "b.jsonl", None, "write docs"),
                info(tmp_path / "c.jsonl", None, "other", cwd="/srv/billing")]
    assert [s.name or s.first_message for s in match_sessions(sessions, "parser")] == ["parser work"]
    assert [s.first_message for s in match_sessions(sessions, "docs")] == ["write docs"]
    assert [s.cwd for s in match_sessions(sessions, "billing")] == ["/srv/billing"]
    assert len(match_sessions(sessions, "proj")) == 2  # folder text
    assert match_sessions(sessions, "wkpj") == []  # letters of the folder path in order are not enough
    assert match_sessions(sessions, "  ") == sessions


def test_content_search_reads_the_files(tmp_path):
    (tmp_path / "a.jsonl").write_text('{"text": "nothing here"}\n')
    (tmp_path / "b.jsonl").write_text('{"text": "the Zebracorn lives"}\n')
    (tmp_path / "c.jsonl").write_text("")
    sessions = [info(tmp_path / n, None, "x") for n in ("a.jsonl", "b.jsonl", "c.jsonl", "gone.jsonl")]
    assert [Path(s.path).name for s in content_matches(sessions, "zebracorn")] == ["b.jsonl"]
    assert content_matches(sessions, "z") == []  # one letter would match everything


def test_settings_values_parse_and_nest():
    fields = {f.key: f for f in setting_fields(["dark", "light"])}
    assert parse_value(fields["hideThinkingBlock"], "on") is True
    assert parse_value(fields["retry.maxRetries"], " 5 ") == 5
    assert parse_value(fields["theme"], "light") == "light"
    assert parse_value(fields["shellPath"], "  ") is None
    for key, bad, message in (("retry.maxRetries", "x", "whole number"), ("retry.maxRetries", "-1", "not below"),
                              ("theme", "pink", "one of dark, light"), ("hideThinkingBlock", "maybe", "on or off")):
        with pytest.raises(ValueError, match=message):
            parse_value(fields[key], bad)
    assert as_update({"retry.enabled": False, "retry.maxRetries": 2, "theme": "dark"}) == {
        "retry": {"enabled": False, "maxRetries": 2}, "theme": "dark"}


def test_the_command_table():
    table = builtin_commands()
    for name in ("model", "settings", "resume", "new", "tree", "fork", "compact", "reload", "name", "session",
                 "export", "copy", "hotkeys", "login", "logout", "extensions", "quit"):
        assert table[name].description, name
    assert table["exit"] is table["quit"]
    assert split("/model  gpt 5 ") == ("model", "gpt 5") and split("hello") is None and split("//x") is None
    assert find_builtin("/skill:pdf") is None
    entries = command_entries(None, None)
    assert len(entries) == len({c.name for c in table.values()}) and {e.source for e in entries} == {"builtin"}


def test_osc52_carries_the_text_base64():
    sequence = osc52("héllo")
    assert sequence.startswith("\x1b]52;c;") and sequence.endswith("\x07")
    assert base64.b64decode(sequence[7:-1]).decode() == "héllo"
