"""Tool calls a killed run left without results: repaired in the file, never sent dangling."""

from __future__ import annotations

from pathlib import Path

from wolli.ai.types import AssistantMessage, TextContent, ToolCall, ToolResultMessage, UserMessage
from wolli.session.context import INTERRUPTED_TEXT, close_dangling_tool_calls
from wolli.session.manager import SessionManager


def calling(*ids: str) -> AssistantMessage:
    calls = [ToolCall(id=i, name="bash", arguments={"command": "sleep 100"}) for i in ids]
    return AssistantMessage(content=calls, api="faux", provider="faux", model="m", stop_reason="toolUse")


def result(call_id: str) -> ToolResultMessage:
    return ToolResultMessage(tool_call_id=call_id, tool_name="bash", content=[TextContent(text="ok")])


def killed_mid_tool(tmp_path: Path) -> SessionManager:
    manager = SessionManager.create("/proj", tmp_path)
    manager.append_message(UserMessage(content="run both"))
    manager.append_message(calling("a", "b"))
    manager.append_message(result("a"))  # "b" was running when the process died
    return manager


def test_repair_appends_an_error_result_for_each_open_call_and_persists_it(tmp_path: Path) -> None:
    manager = killed_mid_tool(tmp_path)
    repairs = manager.repair_interrupted_tool_calls()
    assert [(r.tool_call_id, r.is_error) for r in repairs] == [("b", True)]
    reopened = SessionManager.open(manager.get_session_file())  # type: ignore[arg-type]
    last = reopened.get_entries()[-1].message
    assert last.tool_call_id == "b" and last.content[0].text == INTERRUPTED_TEXT
    assert reopened.repair_interrupted_tool_calls() == []  # idempotent


def test_repair_leaves_a_finished_branch_alone(tmp_path: Path) -> None:
    manager = killed_mid_tool(tmp_path)
    manager.append_message(result("b"))
    count = len(manager.get_entries())
    assert manager.repair_interrupted_tool_calls() == [] and len(manager.get_entries()) == count


def test_context_fills_missing_results_in_the_middle_of_a_branch(tmp_path: Path) -> None:
    manager = killed_mid_tool(tmp_path)
    manager.append_message(UserMessage(content="what happened?"))
    roles = [(m.role, getattr(m, "tool_call_id", None)) for m in manager.build_session_context().messages]
    assert roles == [("user", None), ("assistant", None), ("toolResult", "a"), ("toolResult", "b"), ("user", None)]


def test_close_dangling_returns_the_same_list_when_nothing_is_missing() -> None:
    messages = [UserMessage(content="x"), calling("a"), result("a")]
    assert close_dangling_tool_calls(messages) is messages
    assert [m.tool_call_id for m in close_dangling_tool_calls(messages[:2])[2:]] == ["a"]


def test_stop_writing_keeps_the_session_in_memory(tmp_path: Path) -> None:
    manager = SessionManager.create("/proj", tmp_path)
    manager.append_message(UserMessage(content="hi"))
    manager.append_message(calling())
    path = Path(manager.get_session_file())  # type: ignore[arg-type]
    size = path.stat().st_size
    manager.stop_writing()
    manager.append_message(UserMessage(content="more"))
    assert path.stat().st_size == size and len(manager.get_entries()) == 3 and manager.writing_stopped


def test_an_unknown_entry_is_reported_once_and_its_children_stay_on_the_branch(tmp_path: Path) -> None:
    import json

    manager = SessionManager.create("/proj", tmp_path)
    manager.append_message(UserMessage(content="first"))
    manager.append_message(calling())
    path = Path(manager.get_session_file())  # type: ignore[arg-type]
    lines = path.read_text().splitlines()
    last = json.loads(lines[-1])
    future = {"type": "hologram", "id": "feedbeef", "parentId": last["id"], "timestamp": last["timestamp"]}
    child = {**json.loads(lines[1]), "id": "c0ffee00", "parentId": "feedbeef"}
    child["message"] = {"role": "user", "content": "after the unknown entry", "timestamp": 1}
    path.write_text("\n".join([*lines, json.dumps(future), json.dumps(child)]) + "\n")
    reopened = SessionManager.open(path)
    assert reopened.load_errors == ["line 4: unknown entry type 'hologram' skipped (written by a newer Wolli?)"]
    texts = [getattr(m, "content", None) for m in reopened.build_session_context().messages]
    assert texts[0] == "first" and texts[-1] == "after the unknown entry"
