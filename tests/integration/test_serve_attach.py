"""``wolli attach --plain`` as a real process: it shows a run another client started, its
lines are prompts, it reconnects to a restarted server after ``kill -9``, and it starts a
server on demand (which leaves after its idle timeout)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.loopback import json_reply
from tests.support.openai_chat import text_answer
from tests.support.processes import alive, processes_with
from tests.support.rpc import write_models
from tests.support.serve import ServeProcess, records_until, settled
from tests.support.waiting import wait_until_sync

MODEL = ["--model", "local/local-model"]


class Attached:
    """``python -m wolli attach --plain ARGS`` with its output collected."""

    def __init__(self, cwd: Path, *args: str) -> None:
        self.out = ""
        self.process = subprocess.Popen([sys.executable, "-m", "wolli", "attach", "--plain", *args], cwd=cwd,
                                        env=os.environ.copy(), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.STDOUT)
        threading.Thread(target=self._collect, daemon=True).start()

    def _collect(self) -> None:
        assert self.process.stdout is not None
        while chunk := self.process.stdout.read1(4096):
            self.out += chunk.decode("utf-8", "replace")

    def wait_for(self, text: str, timeout: float = 30.0) -> None:
        wait_until_sync(lambda: text in self.out or self.process.poll() is not None, timeout=timeout,
                        what=f"{text!r} from wolli attach")
        assert text in self.out, self.out

    def type(self, line: str) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write((line + "\n").encode())
        self.process.stdin.flush()

    def finish(self) -> int:
        assert self.process.stdin is not None
        self.process.stdin.close()
        return self.process.wait(30)


def _serving(sock: Path) -> str:
    """What only a server's command line holds (NUL separates its arguments)."""
    return f"serve\0--socket\0{sock}"


@pytest.fixture
def setup(project: Path, wolli_home: Path, loopback):
    write_models(wolli_home, loopback.url + "/v1")
    servers: list[ServeProcess] = []
    attached: list[Attached] = []
    yield project, servers, attached
    for child in attached:
        if child.process.poll() is None:
            child.process.kill()
            child.process.wait(10)
    for server in servers:
        if server.process.poll() is None:
            server.process.kill()
            server.process.wait(10)
    for pid in processes_with(_serving(project / "s.sock")):  # a server started on demand
        os.kill(pid, signal.SIGKILL)


def test_attach_shows_a_run_started_by_another_client_and_prompts(setup, loopback):
    project, servers, attached = setup
    server = ServeProcess(project, project / "s.sock", *MODEL)
    servers.append(server)
    other = server.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    watcher = Attached(project, "--no-start", "--socket", str(server.socket_path), session_id)
    attached.append(watcher)
    watcher.wait_for(f"[attached to {session_id}; 2 client(s)")

    loopback.push(text_answer("streamed to the attached terminal"))
    other.call({"type": "prompt", "message": "from the other client"})
    watcher.wait_for("> from the other client")
    watcher.wait_for("streamed to the attached terminal")
    records_until(other, settled)

    loopback.push(text_answer("answer to the terminal"))
    watcher.type("typed in the attached terminal")
    seen = records_until(other, settled)
    users = [r["message"]["content"] for r in seen if r["type"] == "message_start" and r["message"]["role"] == "user"]
    assert "typed in the attached terminal" in str(users)
    watcher.wait_for("answer to the terminal")
    assert watcher.finish() == 0
    live = other.call({"type": "get_live_sessions"})["sessions"]
    assert [room["sessionId"] for room in live] == [session_id]  # detaching left it live


def test_a_line_typed_while_the_session_waits_to_retry_is_queued(setup, loopback, wolli_home):
    project, servers, attached = setup
    (wolli_home / "settings.json").write_text(json.dumps({"retry": {"baseDelayMs": 60000}}))
    server = ServeProcess(project, project / "s.sock", *MODEL)
    servers.append(server)
    other = server.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    loopback.push(json_reply(503, {"error": {"message": "overloaded"}}))  # then a minute's wait to retry
    other.call({"type": "prompt", "message": "first"})
    wait_until_sync(lambda: other.call({"type": "get_state"})["runState"] == "retrying", 20, "the retry wait")
    # Joining now, nothing is streaming, but the session is not idle: a typed line must be
    # queued for the run, not refused as "already processing".
    watcher = Attached(project, "--no-start", "--socket", str(server.socket_path), session_id)
    attached.append(watcher)
    watcher.wait_for(f"[attached to {session_id}; 2 client(s)")
    watcher.type("typed during the wait")
    wait_until_sync(lambda: other.call({"type": "get_state"})["pendingMessageCount"] == 1
                    or "[error]" in watcher.out, 20, "the line to be queued")
    assert "[error]" not in watcher.out, watcher.out
    other.call({"type": "abort"})


def test_detach_leaves_quietly_without_reconnecting(setup):
    project, servers, attached = setup
    server = ServeProcess(project, project / "s.sock", *MODEL)
    servers.append(server)
    other = server.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    watcher = Attached(project, "--no-start", "--socket", str(server.socket_path), session_id)
    attached.append(watcher)
    watcher.wait_for(f"[attached to {session_id}; 2 client(s)")
    watcher.type("/detach")
    assert watcher.process.wait(30) == 0
    # Leaving closed the connection; the server did not go anywhere, and nobody reconnected.
    assert "went away" not in watcher.out and "reconnect" not in watcher.out, watcher.out
    [room] = other.call({"type": "get_live_sessions"})["sessions"]
    assert len(room["clients"]) == 1


def test_attach_reconnects_to_a_restarted_server_after_kill_9(setup, loopback):
    project, servers, attached = setup
    server = ServeProcess(project, project / "s.sock", *MODEL)
    servers.append(server)
    client = server.client()
    session_id = client.call({"type": "attach", "new": True})["sessionId"]
    loopback.push(text_answer("saved before the crash"))
    client.call({"type": "prompt", "message": "first"})
    records_until(client, settled)

    watcher = Attached(project, "--no-start", "--socket", str(server.socket_path), session_id)
    attached.append(watcher)
    watcher.wait_for("saved before the crash")  # the history on attach
    server.process.kill()
    server.process.wait(10)
    watcher.wait_for("[the server went away]")

    restarted = ServeProcess(project, project / "s.sock", *MODEL)  # the dead server's socket is stale
    servers.append(restarted)
    watcher.wait_for("[reconnected]")
    again = restarted.client()
    history = again.call({"type": "attach", "sessionId": session_id})["messages"]
    assert history[-1]["content"][0]["text"] == "saved before the crash"
    assert again.call({"type": "get_live_sessions"})["sessions"][0]["clients"].__len__() == 2
    assert watcher.finish() == 0


def test_attach_starts_a_server_on_demand(setup, loopback):
    project, _, attached = setup
    sock = project / "s.sock"
    watcher = Attached(project, "--socket", str(sock))
    attached.append(watcher)
    watcher.wait_for("[attached to ")
    pids = processes_with(_serving(sock))
    assert len(pids) == 1 and alive(pids[0])
    assert watcher.finish() == 0
    assert alive(pids[0])  # the server stays for the next client (until its idle timeout)


def test_the_server_leaves_after_its_idle_timeout(setup):
    project, servers, _ = setup
    server = ServeProcess(project, project / "s.sock", *MODEL, "--idle-timeout", "0.5")
    servers.append(server)
    client = server.client()
    client.call({"type": "attach", "new": True})
    client.close()
    assert server.process.wait(30) == 0
    assert "idle timeout" in "\n".join(server.lines)
    assert not (project / "s.sock").exists()
