"""Subagents on the wire: json mode and RPC carry the children's events tagged with the
child, and RPC opens a child's session like any other (the real CLI, a loopback model)."""

from __future__ import annotations

import json

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json
from tests.support.rpc import MODEL, start_client
from tests.support.subagents import Router, write_definition
from wolli.config import paths


def _setup(loopback, wolli_home) -> Router:
    write_models_json(wolli_home, loopback.url + "/v1")
    write_definition(paths.agent_home() / "subagents", "scout", "You are SCOUT-MARKER.", tools="Read, LS")
    router = Router({"scout": "SCOUT-MARKER"})
    router.install(loopback)
    call = {"subagent_type": "scout", "description": "look around", "prompt": "list the files"}
    router.script("parent", tool_call_answer("task", call, "t1"), text_answer("the scout saw two files"))
    router.script("scout", tool_call_answer("ls", {}, "l1"), text_answer("two files: a and b"))
    return router


def test_json_mode_tags_every_child_event_with_the_child(project, loopback, wolli_home):
    _setup(loopback, wolli_home)
    (project / "a").write_text("a")
    result = wolli(["--mode", "json", *MODEL, "scout it"], project)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    start = next(r for r in records if r["type"] == "subagent_start")
    assert (start["name"], start["toolCallId"], start["description"]) == ("scout", "t1", "look around")
    child = [r for r in records if r["type"] == "subagent_event"]
    assert child and {r["subagentId"] for r in child} == {start["subagentId"]}
    inner = [r["event"]["type"] for r in child]
    assert "tool_execution_start" in inner and "message_update" in inner and "agent_end" in inner
    delta = next(r["event"] for r in child if r["event"]["type"] == "message_update")
    assert "partial" not in json.dumps(delta)  # the child's tokens are as small as the parent's
    end = next(r for r in records if r["type"] == "subagent_end")
    assert end["status"] == "done" and end["result"] == "two files: a and b"
    updates = [r for r in records if r["type"] == "tool_execution_update" and r["toolCallId"] == "t1"]
    assert updates and updates[-1]["partialResult"]["details"]["subagent"] == "scout"


def test_rpc_streams_child_events_and_opens_the_childs_session(project, loopback, wolli_home):
    _setup(loopback, wolli_home)
    with start_client(project, *MODEL) as client:
        events = client.run("scout it")
        end = next(e for e in events if e["type"] == "subagent_end")
        assert any(e["type"] == "subagent_event" and e["subagentId"] == end["subagentId"] for e in events)
        client.request({"type": "switch_session", "sessionPath": end["sessionFile"]})
        messages = client.request({"type": "get_messages"})["messages"]
        assert messages[0]["role"] == "user" and messages[0]["content"] == "list the files"
        assert messages[-1]["role"] == "assistant" and "two files: a and b" in json.dumps(messages[-1])
        state = client.request({"type": "get_state"})
        assert state["sessionId"] == end["subagentId"]


def test_a_childs_session_is_found_by_id_for_export_and_session(project, loopback, wolli_home, tmp_path):
    _setup(loopback, wolli_home)
    result = wolli(["--mode", "json", *MODEL, "scout it"], project)
    end = next(json.loads(line) for line in result.stdout.splitlines() if '"subagent_end"' in line)
    out = tmp_path / "child.html"
    exported = wolli(["--export", end["subagentId"][:8], str(out)], tmp_path)
    assert exported.returncode == 0, exported.stderr
    assert "list the files" in out.read_text() and "two files: a and b" in out.read_text()
