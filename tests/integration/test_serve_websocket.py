"""``wolli serve`` over WebSocket, driven by an independent client (the ``websockets``
package): the handshake, the token, a run streamed as one message per record, and a page
from another site refused."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from websockets.exceptions import ConnectionClosed, InvalidStatus
from websockets.sync.client import connect

from tests.support.openai_chat import text_answer
from tests.support.rpc import write_models
from tests.support.serve import ServeProcess


@pytest.fixture
def server(project: Path, wolli_home: Path, loopback):
    write_models(wolli_home, loopback.url + "/v1")
    process = ServeProcess(project, project / "s.sock", "--model", "local/local-model",
                           "--listen", "127.0.0.1:0", "--token", "tok-123")
    yield process
    if process.process.poll() is None:
        process.process.kill()
        process.process.wait(10)


def _records(ws, until: str) -> list[dict]:
    seen = []
    while True:
        record = json.loads(ws.recv(timeout=20))
        seen.append(record)
        if record.get("type") == until:
            return seen


def test_a_browser_client_authenticates_attaches_and_sees_the_run(server, loopback):
    port = server.tcp_port()
    with connect(f"ws://127.0.0.1:{port}/", origin=f"http://127.0.0.1:{port}") as ws:
        hello = json.loads(ws.recv(timeout=20))
        assert hello["type"] == "server_hello" and hello["authRequired"] is True
        ws.send(json.dumps({"type": "auth", "token": "tok-123", "id": 1}))
        assert json.loads(ws.recv(timeout=20))["success"] is True
        ws.send(json.dumps({"type": "attach", "new": True, "id": 2}))
        attached = json.loads(ws.recv(timeout=20))
        assert attached["success"] and attached["data"]["sessionId"]
        loopback.push(text_answer("over the websocket"))
        ws.send(json.dumps({"type": "prompt", "message": "hi", "id": 3}))
        seen = _records(ws, "agent_settled")
        text = "".join(r["assistantMessageEvent"]["delta"] for r in seen if r["type"] == "message_update"
                       and r["assistantMessageEvent"]["type"] == "text_delta")
        assert text == "over the websocket"
        ws.ping()  # control frames are answered


def test_a_wrong_token_over_websocket_closes_the_connection(server):
    port = server.tcp_port()
    with connect(f"ws://127.0.0.1:{port}/") as ws:
        json.loads(ws.recv(timeout=20))
        ws.send(json.dumps({"type": "auth", "token": "nope", "id": 1}))
        answer = json.loads(ws.recv(timeout=20))
        assert answer["success"] is False and "wrong token" in answer["error"]
        with pytest.raises(ConnectionClosed):
            ws.recv(timeout=20)


def test_a_page_from_another_site_is_refused(server):
    port = server.tcp_port()
    with pytest.raises(InvalidStatus) as refused:
        connect(f"ws://127.0.0.1:{port}/", origin="https://evil.example")
    assert refused.value.response.status_code == 403


def test_plain_http_gets_a_clear_answer(server):
    port = server.tcp_port()
    answer = httpx.get(f"http://127.0.0.1:{port}/")
    assert answer.status_code == 400 and "wolli server" in answer.text


def test_tls_when_given_a_certificate(project: Path, wolli_home: Path, loopback, tmp_path: Path):
    import shutil
    import ssl
    import subprocess

    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1", "-days", "1", "-keyout", str(key), "-out", str(cert)],
                   check=True, capture_output=True, timeout=60)
    write_models(wolli_home, loopback.url + "/v1")
    process = ServeProcess(project, project / "s.sock", "--listen", "127.0.0.1:0", "--token", "tok-123",
                           "--tls-cert", str(cert), "--tls-key", str(key))
    try:
        line = process.wait_listening("listening on tls ")
        port = int(line.rsplit(":", 1)[1])
        context = ssl.create_default_context(cafile=str(cert))
        with connect(f"wss://127.0.0.1:{port}/", ssl=context) as ws:
            assert json.loads(ws.recv(timeout=20))["type"] == "server_hello"
            ws.send(json.dumps({"type": "auth", "token": "tok-123", "id": 1}))
            assert json.loads(ws.recv(timeout=20))["success"] is True
        with pytest.raises(ssl.SSLError):  # a client that does not trust it cannot talk to it
            connect(f"wss://127.0.0.1:{port}/", ssl=ssl.create_default_context())
    finally:
        process.process.kill()
        process.process.wait(10)
