"""The life of a ``wolli serve`` server around its clients: a session an extension replaces
takes its clients along; an upgrade to another version is refused while clients are
attached to the old server (and stops it when none are); a TCP client that never
authenticates is sent away at the deadline; a client that stops reading is cut off at the
output limit while the others go on. The two limits are given small here (they are options
of the server), so no test waits 30 seconds or fills 32 MB."""

from __future__ import annotations

import asyncio
import json
import socket
from pathlib import Path

from tests.support.openai_chat import text_answer
from tests.support.rpc import write_models
from tests.support.serve import in_process_server, records_until, settled
from tests.support.waiting import wait_until, wait_until_sync
from wolli.modes.server.client import ServerClient

REPLACER = '''
def extension(wolli):
    async def fresh(args, ctx):
        await ctx.session.new_session()
    wolli.register_command("fresh", handler=fresh, description="start over in a new session")
'''


def test_a_session_an_extension_replaces_takes_its_clients_along(served, project, loopback):
    replacer = project / "replacer.py"
    replacer.write_text(REPLACER)
    server = served("-e", str(replacer))
    first, second, elsewhere = server.client(), server.client(), server.client()
    old_id = first.call({"type": "attach", "new": True})["sessionId"]
    second.call({"type": "attach", "sessionId": old_id})
    other_id = elsewhere.call({"type": "attach", "new": True})["sessionId"]
    assert other_id != old_id

    first.send({"type": "prompt", "message": "/fresh"})
    moved = [records_until(client, lambda r: r.get("type") == "session_replaced")[-1] for client in (first, second)]
    new_id = moved[0]["sessionId"]
    assert new_id != old_id and moved[1]["sessionId"] == new_id and moved[0]["previousSessionId"] == old_id
    assert first.call({"type": "get_state"})["sessionId"] == new_id
    assert second.call({"type": "get_state"})["sessionId"] == new_id
    assert elsewhere.call({"type": "get_state"})["sessionId"] == other_id  # another session's client stays

    loopback.push(text_answer("in the new session"))
    second.call({"type": "prompt", "message": "carry on"})
    seen = records_until(first, settled)  # the first client sees the run the second started, there
    assert any(r.get("type") == "message_end" and "in the new session" in json.dumps(r) for r in seen)
    rooms = {room["sessionId"]: room for room in elsewhere.call({"type": "get_live_sessions"})["sessions"]}
    assert len(rooms[new_id]["clients"]) == 2 and old_id not in rooms


def _pretend_older(project: Path, wolli_home: Path) -> None:
    """Make the running server's info say another version (as an older install writes it)."""
    info_file = wolli_home / "agents" / "default" / "server.json"
    info = json.loads(info_file.read_text())
    assert info["socket"] == str(project / "s.sock")
    info["version"] = "0.0.1"
    info_file.write_text(json.dumps(info))


def test_an_upgrade_is_refused_while_the_old_servers_clients_are_attached(served, project, wolli_home):
    old = served()
    client = old.client()
    client.call({"type": "attach", "new": True})
    _pretend_older(project, wolli_home)

    refused = served()
    assert refused.process.wait(30) == 1
    wait_until_sync(lambda: "Detach them" in refused.stderr, timeout=10, what="the refusal on stderr")  # read by a thread
    assert "wolli 0.0.1 server" in refused.stderr and "1 client(s) attached" in refused.stderr
    assert "Detach them" in refused.stderr
    assert old.process.poll() is None  # the old server and its client go on
    assert client.call({"type": "get_state"})["sessionId"]

    client.close()

    def alone() -> bool:
        probe = ServerClient.unix(project / "s.sock")
        try:
            return probe.call({"type": "get_live_sessions"})["server"]["clients"] == 1  # the probe itself
        finally:
            probe.close()

    wait_until_sync(alone, timeout=10, what="the client to be gone")
    upgraded = served()
    upgraded.wait_listening()
    assert old.process.wait(30) == 0  # asked to stop, it stopped cleanly
    wait_until_sync(lambda: any("to upgrade to" in line for line in upgraded.lines), timeout=10,
                    what="the upgrade said on stdout")
    assert upgraded.client().call({"type": "get_live_sessions"})["server"]["pid"] == upgraded.process.pid


async def test_a_client_that_never_authenticates_is_sent_away(project, wolli_home, loopback):
    write_models(wolli_home, loopback.url + "/v1")
    server, task = await in_process_server(project, auth_deadline=0.3)
    try:
        reader, writer = await asyncio.open_connection("127.0.0.1", server.tcp_port)
        writer.write(b"{")  # framing decided (JSON lines), but no auth line ever comes
        await writer.drain()
        lines = []
        while line := await asyncio.wait_for(reader.readline(), 10):
            lines.append(json.loads(line))
        assert lines[0]["type"] == "server_hello"
        assert any(r.get("type") == "response" and "no auth within 0.3s" in r.get("error", "") for r in lines)
        writer.close()
    finally:
        server.stop()
        assert await asyncio.wait_for(task, 30) == 0


async def test_a_client_that_stops_reading_is_cut_off_and_the_others_go_on(project, wolli_home, loopback, capfd):
    write_models(wolli_home, loopback.url + "/v1")
    server, task = await in_process_server(project, write_backlog_limit=64 * 1024)
    try:
        stalled = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        stalled.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel holds little for it
        stalled.connect(str(project / "s.sock"))
        stalled.setblocking(False)
        await wait_until(lambda: len(server.clients) == 1, 10, "the server to take the client")
        # Many answers it never reads: its output piles up past the limit. A full socket is
        # waited on by the loop (sock_sendall), which lets the server read on meanwhile.
        request = b'{"type": "get_live_sessions"}\n'
        loop = asyncio.get_running_loop()
        for sent in range(20000):
            if not server.clients:
                break
            try:
                await asyncio.wait_for(loop.sock_sendall(stalled, request), 10)
            except ConnectionError:  # the server hung up on it
                break
            if sent % 100 == 0:
                await asyncio.sleep(0)  # a send that did not block never gave the server a turn
        await wait_until(lambda: not server.clients, 10, "the stalled client to be cut off")
        assert "stopped reading its output" in capfd.readouterr().err

        reader, writer = await asyncio.open_unix_connection(str(project / "s.sock"))
        assert json.loads(await reader.readline())["type"] == "server_hello"  # the server serves on
        writer.write(b'{"type": "get_live_sessions", "id": "x"}\n')
        answer = json.loads(await asyncio.wait_for(reader.readline(), 10))
        assert answer["success"] and answer["data"]["server"]["clients"] == 1
        writer.close()
        stalled.close()
    finally:
        server.stop()
        assert await asyncio.wait_for(task, 30) == 0


def test_two_clients_attaching_a_saved_session_at_once_share_one_live_session(served, project):
    """Two attaches by path arrive while the file is being read: the second waits for the
    first's open, so both join the same live session (no second reader, no fork)."""
    from tests.perf.bench_session_resume import session_lines

    path = project / "saved.jsonl"
    path.write_text("\n".join(session_lines(300)) + "\n")
    server = served()
    first, second, watcher = server.client(), server.client(), server.client()
    first.send({"type": "attach", "sessionId": str(path), "id": "a"})
    second.send({"type": "attach", "sessionId": str(path), "id": "b"})
    ids = {first.wait_response("a", 60)["sessionId"], second.wait_response("b", 60)["sessionId"]}
    assert len(ids) == 1
    rooms = watcher.call({"type": "get_live_sessions"})["sessions"]
    assert [room["sessionFile"] for room in rooms if room["sessionId"] in ids] == [str(path)]
    assert len(next(room for room in rooms if room["sessionId"] in ids)["clients"]) == 2
    # and by path again once it is live: the resident session, found without reading the file
    assert watcher.call({"type": "attach", "sessionId": str(path)})["sessionId"] in ids
