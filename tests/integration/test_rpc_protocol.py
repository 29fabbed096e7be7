"""RPC mode's framing and robustness, through the real process: no line can stop the server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import session_files
from tests.support.openai_chat import text_answer
from tests.support.rpc import MODEL, QUITTER, UI_PROBE, hanging_answer, start_client, write_models
from wolli.rpc_client import RpcClient


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url + "/v1")


def _responses(client: RpcClient, count: int) -> list[dict]:
    """The next ``count`` response records (events in between are skipped)."""
    out: list[dict] = []
    for event in client.events(timeout=15):
        if event.get("type") == "response":
            out.append(event)
        if len(out) == count:
            break
    return out


def test_malformed_lines_get_error_responses_and_the_server_keeps_serving(project, models):
    with start_client(project, *MODEL) as client:
        client.send_raw(b"this is not json\n")
        client.send_raw(b"[1, 2, 3]\n")
        client.send_raw(b'{"id": "a"}\n')
        client.send_raw(b'{"type": 42}\n')
        client.send_raw(b'{"type": "get_stat", "id": "b"}\n')
        client.send_raw(b'{"type": "prompt", "id": "c"}\n')
        client.send_raw(b'{"type": "prompt", "id": "d", "message": 7}\n')
        client.send_raw(b'{"type": "set_thinking_level", "id": "e", "level": "huge"}\n')
        client.send_raw(b'{"type": "set_auto_retry", "id": "f", "enabled": "yes"}\n')
        client.send_raw(b'{"type": "get_state", "id": {"x": 1}}\n')
        client.send_raw(b"\xff\xfe not utf-8\n")
        client.send_raw(b'{"type": "extension_ui_response", "id": "nobody", "value": "x"}\n')
        client.send_raw(b"\n   \n")  # blank lines are no commands
        errors = _responses(client, 12)
        assert all(r["success"] is False for r in errors)
        by_id = {r.get("id"): r for r in errors}
        assert errors[0]["command"] == "parse" and "Failed to parse command" in errors[0]["error"]
        assert "JSON object" in errors[1]["error"]
        assert by_id["a"]["command"] == "parse" and '"type"' in by_id["a"]["error"]
        assert "Unknown command: get_stat" in by_id["b"]["error"] and "get_state" in by_id["b"]["error"]
        assert "'message'" in by_id["c"]["error"]
        assert "'message' must be a string" in by_id["d"]["error"]
        assert "'level' must be one of" in by_id["e"]["error"] and "huge" in by_id["e"]["error"]
        assert "'enabled' must be true or false" in by_id["f"]["error"]
        assert any("'id' must be a string" in r["error"] for r in errors)
        assert any("not UTF-8" in r["error"] for r in errors)
        assert any("no open dialog has id 'nobody'" in r["error"] for r in errors)
        state = client.get_state()  # still serving
        assert state["model"]["id"] == "local-model"
        assert client.close() == 0


def test_framing_splits_on_newline_only(project, loopback, models):
    """CRLF input, U+2028/U+2029 inside strings, a record split across writes, several
    records in one write, and a last record without its newline."""
    odd = "line\u2028separator\u2029paragraph"
    loopback.push(text_answer(f"echo: {odd}"))
    with start_client(project, *MODEL) as client:
        prompt = json.dumps({"id": "p", "type": "prompt", "message": odd}, ensure_ascii=False).encode()
        client.send_raw(prompt[:10])
        client.send_raw(prompt[10:] + b"\r\n")
        client.wait_for("agent_settled")
        sent = loopback.requests[0].json["messages"]
        assert sent[-1]["content"] == odd or odd in json.dumps(sent[-1]["content"], ensure_ascii=False)
        two = b'{"id": "s1", "type": "get_state"}\r\n{"id": "s2", "type": "get_last_assistant_text"}\n'
        client.send_raw(two)
        first, second = _responses(client, 2)
        assert (first["id"], second["id"]) == ("s1", "s2")
        assert second["data"]["text"] == f"echo: {odd}"
        client.send_raw(b'{"id": "last", "type": "get_state"}')  # no newline: counts once stdin ends
        client.close_stdin()
        rest = list(client.events(until="session_shutdown"))
        assert any(e.get("id") == "last" and e["success"] for e in rest)
        assert client.process.wait(15) == 0


def test_output_escapes_line_separators_and_every_line_is_one_json_record(project, loopback, models):
    """Read as raw bytes: records end with \n only, U+2028 travels escaped, each line parses."""
    loopback.push(text_answer("a\u2028b"))
    process = subprocess.Popen([sys.executable, "-m", "wolli", "--mode", "rpc", *MODEL], cwd=project,
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               env=os.environ.copy())
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write(b'{"type": "prompt", "message": "go"}\n')
    process.stdin.flush()
    raw = []
    while not raw or b'"agent_settled"' not in raw[-1]:
        raw.append(process.stdout.readline())
        assert raw[-1], process.stderr.read() if process.stderr else ""
    process.stdin.write(b'{"type": "get_last_assistant_text", "id": "t"}\n')
    process.stdin.close()
    raw += process.stdout.read().splitlines(keepends=True)
    assert process.wait(20) == 0
    data = b"".join(raw)
    assert all(line.endswith(b"\n") and line.strip() for line in raw)
    assert "\u2028".encode() not in data and b"\\u2028" in data
    records = [json.loads(line) for line in raw]
    answer = next(r for r in records if r.get("id") == "t")
    assert answer["data"]["text"] == "a\u2028b"


def test_extension_prints_go_to_stderr_never_into_the_protocol(project, tmp_path, models):
    probe = tmp_path / "probe.py"
    probe.write_text(UI_PROBE)
    with start_client(project, *MODEL, "-e", str(probe)) as client:
        client.request({"type": "prompt", "message": "/widgets"})
        client.wait_for(lambda e: e.get("method") == "notify")
        client.close()
    assert "printed while loading" in client.stderr
    assert "an extension print during a command" in client.stderr


def test_stdin_closed_mid_run_aborts_saves_and_exits_cleanly(project, wolli_home, loopback, models):
    loopback.push(hanging_answer("Partial answer that never ends", pieces=3))
    with start_client(project, *MODEL) as client:
        client.prompt("start something long")
        client.wait_for(lambda e: e.get("type") == "message_update"
                        and e["assistantMessageEvent"]["type"] == "text_delta")
        client.close_stdin()
        rest = list(client.events(until="session_shutdown"))
        assert client.process.wait(20) == 0
    ends = [e for e in rest if e["type"] == "message_end" and e["message"]["role"] == "assistant"]
    assert ends and ends[-1]["message"]["stopReason"] == "aborted"
    [saved] = session_files(wolli_home)
    roles = [(json.loads(line).get("message") or {}).get("role") for line in saved.read_text().splitlines()]
    assert "user" in roles and "assistant" in roles
    stops = [json.loads(line)["message"].get("stopReason") for line in saved.read_text().splitlines()
             if json.loads(line).get("type") == "message" and json.loads(line)["message"]["role"] == "assistant"]
    assert stops == ["aborted"]


def test_ids_are_echoed_and_queries_answer_while_a_run_streams(project, loopback, models):
    loopback.push(hanging_answer("streaming forever", pieces=4))
    with start_client(project, *MODEL) as client:
        response = client.request_response({"id": "my-prompt", "type": "prompt", "message": "go"})
        assert response == {"id": "my-prompt", "type": "response", "command": "prompt", "success": True}
        client.wait_for(lambda e: e.get("type") == "message_update")
        state = client.get_state()
        assert state["isStreaming"] is True and state["runState"] == "running"
        busy = client.request_response({"type": "prompt", "message": "again"})
        assert busy["success"] is False and "streamingBehavior" in busy["error"]
        client.abort()
        assert client.get_state()["isStreaming"] is False
        assert client.close() == 0


def test_an_extension_asking_to_shut_down_ends_the_process(project, tmp_path, models):
    quitter = tmp_path / "quitter.py"
    quitter.write_text(QUITTER)
    with start_client(project, *MODEL, "-e", str(quitter)) as client:
        client.request({"type": "prompt", "message": "/quit"})
        client.wait_for("session_shutdown")
        assert client.process.wait(20) == 0


def test_a_started_client_in_a_with_block_runs_one_server(project):
    client = start_client(project, "--no-session")
    pid = client.process.pid
    with client as same:
        assert same is client and client.process.pid == pid
        assert same.request_response({"type": "get_state"})["success"] is True
    assert client.process.poll() is not None
    with pytest.raises(RuntimeError, match="started its server already"):
        client.start()
