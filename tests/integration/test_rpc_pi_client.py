"""A client written only against pi's documented RPC protocol (its field names, its JSONL
framing rules; nothing imported from wolli) drives Wolli through a prompt, a tool call and
an extension's confirm dialog."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import MODEL, write_models

GATE = Path(__file__).resolve().parents[2] / "extensions" / "permission_gate.py"


class PiStyleClient:
    """What a program written for ``pi --mode rpc`` does: split stdout on LF only, strip a
    trailing CR, send commands with ids, answer extension_ui_request dialogs."""

    def __init__(self, argv: list[str], cwd: Path) -> None:
        self.proc = subprocess.Popen(argv, cwd=cwd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, env=os.environ.copy())
        self.buffer = b""

    def send(self, command: dict) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(command) + "\n").encode("utf-8"))
        self.proc.stdin.flush()

    def read(self) -> dict:
        assert self.proc.stdout is not None
        while b"\n" not in self.buffer:
            chunk = self.proc.stdout.read1(65536)  # type: ignore[attr-defined]
            if not chunk:
                error = self.proc.stderr.read().decode() if self.proc.stderr else ""
                raise AssertionError(f"the rpc process ended: {error}")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        if line.endswith(b"\r"):
            line = line[:-1]
        return json.loads(line.decode("utf-8"))


@pytest.mark.parametrize("allow", [True, False])
def test_a_pi_client_drives_a_prompt_a_tool_call_and_a_confirm_dialog(project, wolli_home, loopback, allow):
    write_models(wolli_home, loopback.url + "/v1")
    (project / "build").mkdir()
    loopback.push(tool_call_answer("bash", {"command": "rm -rf build"}), text_answer("Cleaned up."))
    client = PiStyleClient([sys.executable, "-m", "wolli", "--mode", "rpc", *MODEL, "-e", str(GATE)], project)
    client.send({"id": "req-1", "type": "prompt", "message": "clean up the build folder"})

    response = None
    dialogs, tool_starts, tool_ends, text = [], [], [], ""
    while True:
        event = client.read()
        kind = event["type"]
        if kind == "response":
            response = event
        elif kind == "extension_ui_request" and event["method"] == "confirm":
            dialogs.append(event)
            client.send({"type": "extension_ui_response", "id": event["id"], "confirmed": allow})
        elif kind == "tool_execution_start":
            tool_starts.append(event)
        elif kind == "tool_execution_end":
            tool_ends.append(event)
        elif kind == "message_update" and event["assistantMessageEvent"]["type"] == "text_delta":
            text += event["assistantMessageEvent"]["delta"]
        elif kind == "agent_end":
            break

    assert response == {"id": "req-1", "type": "response", "command": "prompt", "success": True}
    assert len(dialogs) == 1 and dialogs[0]["title"] == "Dangerous command" and "rm -rf build" in dialogs[0]["message"]
    assert tool_starts[0]["toolName"] == "bash" and tool_starts[0]["args"] == {"command": "rm -rf build"}
    assert text == "Cleaned up."
    if allow:
        assert tool_ends[0]["isError"] is False and not (project / "build").exists()
    else:
        assert tool_ends[0]["isError"] is True and (project / "build").exists()
        assert "did not allow" in json.dumps(tool_ends[0]["result"])

    client.send({"id": "req-2", "type": "get_state"})
    state = client.read()
    while state.get("id") != "req-2":
        state = client.read()
    assert state["data"]["isStreaming"] is False and state["data"]["messageCount"] == 4
    assert client.proc.stdin is not None
    client.proc.stdin.close()
    assert client.proc.wait(20) == 0
