"""Permission requests, modes, rules and rewind over RPC, driven by a real client."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import make_project
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import MODEL, start_client, write_models
from wolli.rpc_client import RpcError

EDIT = {"path": "calc.py", "edits": [{"old_text": "return a - b", "new_text": "return a + b"}]}


@pytest.fixture
def repo(tmp_path: Path, wolli_home: Path, loopback) -> Path:
    write_models(wolli_home, loopback.url + "/v1")
    return make_project(tmp_path)


def test_rpc_starts_in_yolo_and_a_client_that_opts_in_gets_permission_requests(repo, loopback, wolli_home):
    seen: list[dict] = []

    def answer(request):
        seen.append(request)
        return {"optionId": "allow_always", "rules": ["Edit(calc.py)"]}

    with start_client(repo, *MODEL, on_ui_request=answer) as client:
        assert client.get_state()["permissionMode"] == "yolo"
        opted = client.request({"type": "set_permission_requests", "enabled": True})
        assert opted == {"enabled": True, "mode": "default"}
        client.wait_for(lambda e: e.get("type") == "permission_mode_change" and e["mode"] == "default")
        loopback.push(tool_call_answer("edit", EDIT), text_answer("fixed"), tool_call_answer("edit", {
            "path": "calc.py", "edits": [{"old_text": "a + b", "new_text": "b + a"}]}), text_answer("again"))
        client.run("fix it")
        assert "return a + b" in (repo / "calc.py").read_text()
        [request] = [r for r in seen if r["method"] == "permission"]
        assert request["toolCall"]["toolName"] == "edit" and request["toolCall"]["kind"] == "edit"
        assert request["suggestedRules"] == ["Edit(calc.py)"]
        assert [o["kind"] for o in request["options"]] == ["allow_once", "allow_always", "reject_once",
                                                           "reject_once", "reject_always"]
        client.run("and again")  # the saved rule allows it: no second question
        assert len([r for r in seen if r["method"] == "permission"]) == 1
        assert "return b + a" in (repo / "calc.py").read_text()
        state = client.request({"type": "get_permissions"})
        assert {"rule": "Edit(calc.py)", "kind": "allow", "source": "project"}.items() <= \
            next(r for r in state["rules"] if r["rule"] == "Edit(calc.py)").items()
        assert client.close() == 0


def test_a_denied_request_stops_the_turn_and_a_message_reaches_the_model(repo, loopback):
    answers = iter([{"optionId": "reject_with_message", "message": "use a test first"}, {"optionId": "reject_once"}])
    with start_client(repo, *MODEL, on_ui_request=lambda r: next(answers)) as client:
        client.request({"type": "set_permission_requests", "enabled": True})
        loopback.push(tool_call_answer("bash", {"command": "touch x"}), text_answer("ok, a test then"))
        client.run("go")
        tool = [m for m in loopback.requests[-1].json["messages"] if m["role"] == "tool"][0]
        assert "use a test first" in json.dumps(tool["content"]) and not (repo / "x").exists()
        loopback.push(tool_call_answer("bash", {"command": "touch y"}), text_answer("never sent"))
        client.run("go on")
        assert not (repo / "y").exists()
        last = client.request({"type": "get_last_assistant_text"})
        assert last is None or last.get("text") != "never sent"
        assert client.close() == 0


def test_modes_and_rules_over_rpc(repo):
    with start_client(repo, *MODEL) as client:
        assert client.request({"type": "set_permission_mode", "mode": "acceptEdits"}) == {"mode": "accept-edits"}
        assert client.request({"type": "cycle_permission_mode"}) == {"mode": "plan"}
        with pytest.raises(RpcError, match="not a permission mode"):
            client.request({"type": "set_permission_mode", "mode": "careful"})
        added = client.request({"type": "add_permission_rule", "kind": "deny", "rule": "Read(~/.ssh/**)",
                                "scope": "user"})
        assert added["rule"] == "Read(~/.ssh/**)"
        with pytest.raises(RpcError, match="not closed"):
            client.request({"type": "add_permission_rule", "kind": "allow", "rule": "Bash("})
        client.request({"type": "remove_permission_rule", "kind": "deny", "rule": "Read(~/.ssh/**)", "scope": "user"})
        with pytest.raises(RpcError, match="no deny rule"):
            client.request({"type": "remove_permission_rule", "kind": "deny", "rule": "Read(~/.ssh/**)",
                            "scope": "user"})
        assert client.close() == 0


def test_rewind_over_rpc_restores_files_and_conversation_and_can_be_undone(repo, loopback):
    with start_client(repo, *MODEL) as client:
        loopback.push(tool_call_answer("edit", EDIT), text_answer("fixed"),
                      tool_call_answer("write", {"path": "notes.md", "content": "notes\n"}), text_answer("noted"))
        client.run("fix it")
        client.run("take notes")
        points = client.request({"type": "get_rewind_points"})["points"]
        assert [p["text"] for p in points] == ["take notes", "fix it"]
        assert points[1]["files"] == [str((repo / "calc.py").resolve()), str((repo / "notes.md").resolve())]
        done = client.request({"type": "rewind", "entryId": points[1]["entryId"]})
        assert done["editorText"] == "fix it" and sorted(done["restored"]) == [str((repo / "calc.py").resolve())]
        assert done["removed"] == [str((repo / "notes.md").resolve())]
        assert "return a - b" in (repo / "calc.py").read_text() and not (repo / "notes.md").exists()
        assert client.request({"type": "get_messages"})["messages"] == []
        (repo / "calc.py").write_text("changed by hand\n")
        undo = client.request({"type": "get_rewind_points"})["points"][0]
        assert undo["kind"] == "rewind"
        with pytest.raises(RpcError, match="changed outside Wolli"):
            client.request({"type": "rewind", "entryId": undo["entryId"]})
        again = client.request({"type": "rewind", "entryId": undo["entryId"], "onConflict": "overwrite"})
        assert not again["cancelled"]
        assert "return a + b" in (repo / "calc.py").read_text() and (repo / "notes.md").read_text() == "notes\n"
        assert len(client.request({"type": "get_messages"})["messages"]) == 8
        assert client.close() == 0
