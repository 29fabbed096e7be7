"""``wolli serve`` as a real process: clients on its Unix socket and on TCP, several clients
on one session, dialogs answered by one of them, a client killed mid-run, tokens."""

from __future__ import annotations

import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer
from tests.support.rpc import UI_PROBE
from tests.support.serve import records_until, settled
from tests.support.waiting import wait_until_sync
from wolli.modes.server.client import ServerClient


def _text(records: list[dict]) -> str:
    return "".join(r["assistantMessageEvent"]["delta"] for r in records
                   if r["type"] == "message_update" and r["assistantMessageEvent"]["type"] == "text_delta")


def test_two_clients_on_one_session_both_see_the_run(served, loopback, project):
    server = served()
    first, second = server.client(), server.client()
    assert first.hello is not None and first.hello["type"] == "server_hello" and not first.hello["authRequired"]
    attached = first.call({"type": "attach", "new": True})
    assert attached["cwd"] == str(project) and attached["messages"] == []
    joined = second.call({"type": "attach", "sessionId": attached["sessionId"]})
    assert joined["sessionId"] == attached["sessionId"] and joined["clients"] == 2

    loopback.push(text_answer("shared answer"))
    first.call({"type": "prompt", "message": "hello"})
    assert _text(records_until(first, settled)) == "shared answer"
    assert _text(records_until(second, settled)) == "shared answer"  # the other client saw it stream

    # A client arriving later gets the history with its attach.
    late = server.client()
    history = late.call({"type": "attach", "sessionId": attached["sessionId"]})["messages"]
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["content"][0]["text"] == "shared answer"
    # Either client may prompt: the second one steers the session now.
    loopback.push(text_answer("second turn"))
    second.call({"type": "prompt", "message": "again"})
    assert _text(records_until(first, settled)) == "second turn"

    live = late.call({"type": "get_live_sessions"})
    assert [len(room["clients"]) for room in live["sessions"]] == [3]
    assert server.stop() == 0
    assert not (project / "s.sock").exists()


def test_commands_before_attach_are_refused(served):
    client = served().client()
    with pytest.raises(RuntimeError, match="attach to a session first"):
        client.call({"type": "get_state"})
    with pytest.raises(RuntimeError, match="attach needs"):
        client.call({"type": "attach"})
    with pytest.raises(RuntimeError, match="no session"):
        client.call({"type": "attach", "sessionId": "no-such-session"})


def test_a_new_session_not_yet_saved_is_joined_by_an_id_prefix(served):
    server = served()
    first = server.client()
    session_id = first.call({"type": "attach", "new": True})["sessionId"]
    # Nothing was said yet, so there is no file: the id as `wolli serve --list` shows it,
    # shortened, must still find the live session.
    joined = server.client().call({"type": "attach", "sessionId": session_id[:8]})
    assert joined["sessionId"] == session_id and joined["clients"] == 2


def test_a_dialog_reaches_every_client_and_the_first_answer_wins(served, project):
    probe = project / "probe.py"
    probe.write_text(UI_PROBE)
    server = served("-e", str(probe))
    first, second = server.client(), server.client()
    session_id = first.call({"type": "attach", "new": True})["sessionId"]
    second.call({"type": "attach", "sessionId": session_id})
    first.call({"type": "prompt", "message": "/ask confirm"})

    def dialog(record: dict) -> bool:
        return record.get("type") == "extension_ui_request" and record.get("method") == "confirm"

    asked_first = records_until(first, dialog)[-1]
    asked_second = records_until(second, dialog)[-1]
    assert asked_first["id"] == asked_second["id"] and asked_first["title"] == "Sure?"

    second.send({"type": "extension_ui_response", "id": asked_second["id"], "confirmed": True})
    closed = records_until(first, lambda r: r.get("type") == "extension_ui_closed")[-1]
    assert closed["id"] == asked_first["id"]
    note = records_until(first, lambda r: r.get("method") == "notify")[-1]
    assert note["message"] == "confirm -> True in rpc"
    with pytest.raises(RuntimeError, match="no open dialog"):  # too late: it was answered
        first.call({"type": "extension_ui_response", "id": asked_first["id"], "confirmed": False})


CLIENT = """
import sys
from wolli.modes.server.client import ServerClient
client = ServerClient.unix(sys.argv[1])
data = client.call({"type": "attach", "new": True})
client.call({"type": "prompt", "message": "long job"})
print(data["sessionId"], flush=True)
sys.stdin.read()
"""


def test_a_client_killed_mid_run_leaves_the_run_going_and_saved(served, loopback, project):
    server = served()
    server.wait_listening()
    release = threading.Event()
    reply = text_answer("finished without its client")
    reply.on_write = lambda sent: release.wait(30) if sent else None  # holds after the first piece
    loopback.push(reply)
    child = subprocess.Popen([sys.executable, "-c", CLIENT, str(server.socket_path)], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, env=os.environ.copy())
    assert child.stdout is not None
    session_id = child.stdout.readline().decode().strip()
    loopback.wait_for_requests(1)
    child.kill()
    child.wait(10)
    watcher = server.client()
    state = watcher.call({"type": "get_live_sessions"})
    assert [room["runState"] for room in state["sessions"]] == ["running"]  # running with no client
    release.set()

    def answered() -> bool:
        room = watcher.call({"type": "get_live_sessions"})["sessions"]
        return not room or room[0]["runState"] == "idle"

    wait_until_sync(answered, what="the run to end")
    history = watcher.call({"type": "attach", "sessionId": session_id})["messages"]
    assert history[-1]["role"] == "assistant" and history[-1]["content"][0]["text"] == "finished without its client"
    saved = Path(watcher.call({"type": "get_state"})["sessionFile"]).read_text()
    assert "finished without its client" in saved


def test_tcp_needs_the_token(served, wolli_home):
    server = served("--listen", "127.0.0.1:0")
    port = server.tcp_port()
    token = server.lines[server.lines.index(next(line for line in server.lines if "shown only now" in line)) + 1]
    stored = wolli_home / "agents" / "default" / "server.token"
    assert stored.read_text().strip() == token
    assert stat.S_IMODE(stored.stat().st_mode) == 0o600
    assert stat.S_IMODE(os.stat(server.socket_path).st_mode) == 0o600

    anonymous = ServerClient(socket.create_connection(("127.0.0.1", port)),
                             first={"type": "attach", "new": True, "id": "a"})
    assert anonymous.hello is not None and anonymous.hello["authRequired"] is True
    with pytest.raises(RuntimeError, match="authenticate first"):
        anonymous.wait_response("a")
    assert anonymous.next_record(10) is None  # and the connection is closed
    for garbage in (b"not json\n", b"[1, 2]\n", b"\xff\xfe\n"):  # no command at all: the same
        with socket.create_connection(("127.0.0.1", port), timeout=10) as raw:
            raw.sendall(garbage)
            said = _read_to_the_end(raw)  # closed at once, not left waiting 30 s for an auth
        hello, error = [json.loads(line) for line in said.splitlines()]
        assert hello["type"] == "server_hello" and error["success"] is False, garbage

    with pytest.raises(RuntimeError, match="wrong token"):
        ServerClient.tcp("127.0.0.1", port, token + "x")

    client = ServerClient.tcp("127.0.0.1", port, token)
    assert client.call({"type": "attach", "new": True})["sessionId"]
    assert token not in server.stderr


def _read_to_the_end(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection (a timeout fails)."""
    said = b""
    while chunk := sock.recv(4096):
        said += chunk
    return said


def test_a_given_token_is_neither_stored_nor_printed(served, wolli_home):
    server = served("--listen", "127.0.0.1:0", "--token", "s3cret-token")
    port = server.tcp_port()
    assert not (wolli_home / "agents" / "default" / "server.token").exists()
    assert not any("s3cret-token" in line for line in server.lines)
    client = ServerClient.tcp("127.0.0.1", port, "s3cret-token")
    assert client.call({"type": "get_live_sessions"})["sessions"] == []


def test_a_non_loopback_listen_without_a_token_is_refused(project, wolli_home):
    done = subprocess.run([sys.executable, "-m", "wolli", "serve", "--socket", str(project / "s.sock"),
                           "--listen", "0.0.0.0:0", "--no-auth"], cwd=project, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 2
    assert "not a loopback address" in done.stderr and "token is required" in done.stderr
    assert not (project / "s.sock").exists()


def test_a_second_server_on_the_same_socket_is_refused(served):
    first = served()
    first.wait_listening()
    second = served()
    assert second.process.wait(30) == 1
    assert "already listens" in second.stderr
    assert first.process.poll() is None


def test_a_file_where_the_socket_goes_is_left_alone(served, project):
    (project / "s.sock").write_text("my notes\n")
    server = served()
    assert server.process.wait(30) == 1
    wait_until_sync(lambda: "is not a socket" in server.stderr, 10, "the reason on stderr")
    assert (project / "s.sock").read_text() == "my notes\n"


def test_serve_list_shows_sessions_and_clients(served, project):
    server = served()
    client = server.client()
    session_id = client.call({"type": "attach", "new": True})["sessionId"]
    done = subprocess.run([sys.executable, "-m", "wolli", "serve", "--list", "--json",
                           "--socket", str(server.socket_path)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    listing = json.loads(done.stdout)
    assert [(room["sessionId"], len(room["clients"])) for room in listing["sessions"]] == [(session_id, 1)]
    assert listing["server"]["clients"] == 2  # the attached one and the lister
    plain = subprocess.run([sys.executable, "-m", "wolli", "serve", "--list", "--socket", str(server.socket_path)],
                           capture_output=True, text=True, timeout=60)
    assert session_id in plain.stdout
    assert server.stop(signal.SIGINT) == 0


def test_serve_list_without_a_server_says_so(project):
    done = subprocess.run([sys.executable, "-m", "wolli", "serve", "--list", "--socket", str(project / "none.sock")],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 1 and "no server answers" in done.stderr


def test_session_replacing_commands_move_only_their_client(served, loopback):
    server = served()
    first, second = server.client(), server.client()
    shared = first.call({"type": "attach", "new": True})["sessionId"]
    second.call({"type": "attach", "sessionId": shared})
    loopback.push(text_answer("one"))
    first.call({"type": "prompt", "message": "first question"})
    records_until(first, settled)

    def where(client) -> str:
        return client.call({"type": "get_state"})["sessionId"]

    asked = first.call({"type": "get_fork_messages"})["messages"][0]
    assert first.call({"type": "fork", "entryId": asked["entryId"]})["text"] == "first question"
    forked = where(first)
    assert forked != shared and where(second) == shared
    assert first.call({"type": "get_messages"})["messages"] == []  # the fork ends before that message

    assert second.call({"type": "clone"}) == {"cancelled": False}
    cloned = where(second)
    assert cloned not in (shared, forked)
    assert [m["role"] for m in second.call({"type": "get_messages"})["messages"]] == ["user", "assistant"]

    first.call({"type": "new_session"})
    assert where(first) not in (shared, forked, cloned)
    assert where(second) == cloned
    # The session nobody watches any more was closed once idle, and opens again on attach.
    wait_until_sync(lambda: shared not in [r["sessionId"] for r in
                                           second.call({"type": "get_live_sessions"})["sessions"]])
    third = server.client()
    assert len(third.call({"type": "attach", "sessionId": shared})["messages"]) == 2


def test_a_permission_question_goes_to_the_clients_of_its_session_only(served, loopback, project):
    from tests.support.openai_chat import tool_call_answer

    server = served()
    first, second, elsewhere = server.client(), server.client(), server.client()
    session_id = first.call({"type": "attach", "new": True})["sessionId"]
    second.call({"type": "attach", "sessionId": session_id})
    elsewhere.call({"type": "attach", "new": True})
    first.call({"type": "set_permission_mode", "mode": "default"})
    loopback.push(tool_call_answer("bash", {"command": "echo asked > asked.txt"}), text_answer("done"))
    first.call({"type": "prompt", "message": "run it"})

    def question(record: dict) -> bool:
        return record.get("type") == "extension_ui_request" and record.get("method") == "select"

    asked = records_until(second, question)[-1]
    assert "Allow" in asked["title"] and records_until(first, question)[-1]["id"] == asked["id"]
    allow = next(label for label in asked["options"] if label.lower().startswith("allow") and "always" not in label.lower())
    second.send({"type": "extension_ui_response", "id": asked["id"], "value": allow})
    records_until(first, settled)
    assert (project / "asked.txt").read_text() == "asked\n"
    stray: list[dict] = []
    elsewhere.call({"type": "get_state"}, on_other=stray.append)
    assert not [r for r in stray if r.get("type") == "extension_ui_request"]  # another session's client
