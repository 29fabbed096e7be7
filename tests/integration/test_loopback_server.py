"""The loopback server the provider tests talk to: a request cut off by a dying client is
not recorded (the kill -9 test reads the last request as what was sent)."""

from __future__ import annotations

import json
import socket

from tests.support.loopback import LoopbackServer, json_reply
from tests.support.waiting import wait_until_sync


def _request(body: bytes, declared: int | None = None) -> bytes:
    length = len(body) if declared is None else declared
    head = f"POST /v1/chat HTTP/1.1\r\nhost: x\r\ncontent-type: application/json\r\ncontent-length: {length}\r\n\r\n"
    return head.encode() + body


def test_a_request_torn_by_its_client_is_not_recorded():
    whole = json.dumps({"messages": []}).encode()
    torn = [_request(b'{"mess', declared=200), b"POST /v1/chat HTTP/1.1\r\ncontent-le"]  # mid-body, mid-headers
    with LoopbackServer() as server:
        for cut in torn:
            server.push(json_reply(200, {"ok": 1}))
            with socket.create_connection(("127.0.0.1", server.port)) as conn:
                conn.sendall(_request(whole))
                reply = b""
                while not reply.endswith(b"0\r\n\r\n"):  # all of it: unread data would make close() a reset
                    reply += conn.recv(4096)
                assert reply.startswith(b"HTTP/1.1 200")  # answered, so its handler is running
                conn.sendall(cut)  # then the client dies
                conn.shutdown(socket.SHUT_WR)
            wait_until_sync(lambda: not server._conns, 5, "the handler to end")
        assert [r.json for r in server.requests] == [{"messages": []}, {"messages": []}]
