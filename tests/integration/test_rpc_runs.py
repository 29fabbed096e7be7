"""Runs driven over RPC: a tool-using run, steering and follow-ups while streaming, abort."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import MODEL, hanging_answer, start_client, write_models

# A bash tool call that runs until the test creates the file ``go`` in the project.
WAIT_FOR_GO = {"command": "while [ ! -f go ]; do sleep 0.01; done; echo went"}


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url + "/v1")


def _user_texts(request) -> list[str]:
    return [json.dumps(m["content"]) for m in request.json["messages"] if m["role"] == "user"]


def test_a_tool_using_run_streams_pi_events_and_edits_the_file(project, loopback, models):
    loopback.push(
        tool_call_answer("edit", {"path": "calc.py", "edits": [{"old_text": "return a - b", "new_text": "return a + b"}]}),
        text_answer("Fixed the bug in calc.py."),
    )
    with start_client(project, *MODEL) as client:
        events = client.run("fix the failing test")
        assert client.request({"type": "get_last_assistant_text"})["text"] == "Fixed the bug in calc.py."
        assert client.close() == 0
    assert (project / "calc.py").read_text() == "def add(a, b):\n    return a + b\n"
    types = [e["type"] for e in events]
    for name in ("agent_start", "turn_start", "message_start", "message_update", "message_end",
                 "tool_execution_start", "tool_execution_end", "turn_end", "agent_end", "agent_settled"):
        assert name in types, name
    assert types.index("tool_execution_start") < types.index("tool_execution_end") < types.index("agent_end")
    start = next(e for e in events if e["type"] == "tool_execution_start")
    assert start["toolName"] == "edit" and start["toolCallId"] == "call_1" and start["args"]["path"] == "calc.py"
    end = next(e for e in events if e["type"] == "tool_execution_end")
    assert end["isError"] is False and "Successfully replaced" in json.dumps(end["result"])
    deltas = [e["assistantMessageEvent"] for e in events if e["type"] == "message_update"]
    assert {"toolcall_delta", "text_delta"} <= {d["type"] for d in deltas}
    assert all("partial" not in d and "message" not in d for d in deltas)  # the linear form
    text = "".join(d["delta"] for d in deltas if d["type"] == "text_delta")
    assert text == "Fixed the bug in calc.py."


def test_steering_and_follow_up_while_streaming(project, loopback, models):
    loopback.push(tool_call_answer("bash", WAIT_FOR_GO), text_answer("Saw the steer."),
                  text_answer("Summarised."), text_answer("Bye."))
    with start_client(project, *MODEL) as client:
        client.prompt("start")
        client.wait_for("tool_execution_start")
        refused = client.request_response({"type": "prompt", "message": "no behaviour given"})
        assert refused["success"] is False and "streamingBehavior" in refused["error"]
        client.request({"type": "steer", "message": "also check the tests"})
        queued = client.wait_for("queue_update")
        assert queued["steering"] == ["also check the tests"] and queued["followUp"] == []
        client.prompt("then summarise", streaming_behavior="followUp")
        queued = client.wait_for("queue_update")
        assert queued["followUp"] == ["then summarise"]
        assert client.get_state()["pendingMessageCount"] == 2
        client.request({"type": "follow_up", "message": "and say bye"})
        assert client.wait_for("queue_update")["followUp"] == ["then summarise", "and say bye"]
        (project / "go").write_text("")
        client.wait_for("agent_settled", timeout=30)
        messages = client.request({"type": "get_messages"})["messages"]
        assert client.close() == 0
    # Follow-ups are delivered one at a time (the default mode), each after the run would stop.
    assert len(loopback.requests) == 4
    assert any("also check the tests" in t for t in _user_texts(loopback.requests[1]))
    assert not any("then summarise" in t for t in _user_texts(loopback.requests[1]))
    assert any("then summarise" in t for t in _user_texts(loopback.requests[2]))
    assert not any("and say bye" in t for t in _user_texts(loopback.requests[2]))
    assert any("and say bye" in t for t in _user_texts(loopback.requests[3]))
    roles = [m["role"] for m in messages]
    assert roles == ["user", "assistant", "toolResult", "user", "assistant", "user", "assistant", "user", "assistant"]


def test_abort_stops_the_stream_and_the_server_keeps_serving(project, loopback, models):
    loopback.push(hanging_answer("A long answer that never finishes", pieces=4), text_answer("Second try."))
    with start_client(project, *MODEL) as client:
        client.prompt("go")
        client.wait_for(lambda e: e.get("type") == "message_update"
                        and e["assistantMessageEvent"]["type"] == "text_delta")
        client.abort()  # answered once the run really ended
        state = client.get_state()
        assert state["isStreaming"] is False and state["runState"] == "idle"
        rest = client.drain()
        ends = [e for e in rest if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
        assert ends[-1]["message"]["stopReason"] == "aborted"
        events = client.run("again")
        final = [e for e in events if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
        assert final[-1]["message"]["content"][0]["text"] == "Second try."
        assert client.close() == 0


def test_an_abort_while_idle_is_harmless(project, models):
    with start_client(project, *MODEL) as client:
        client.abort()
        assert client.get_state()["runState"] == "idle"
