"""The bubblewrap sandbox end to end: the real CLI (and RPC) running confined shell commands.

Skipped where bubblewrap cannot create its namespaces (no bwrap, not Linux, user
namespaces forbidden by the container); the fallback when it cannot run is tested everywhere.
"""

from __future__ import annotations

import http.server
import json
import os
import threading
from pathlib import Path

import pytest

from tests.support.cli import make_project, wolli
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json
from tests.support.rpc import MODEL as RPC_MODEL
from tests.support.rpc import start_client
from wolli.tools.sandbox.bwrap import probe

MODEL = ["--model", "local/local-model"]
AVAILABLE = probe()
needs_bwrap = pytest.mark.skipif(not AVAILABLE.usable, reason=f"the sandbox cannot run here: {AVAILABLE.reason}")


@pytest.fixture
def repo(tmp_path, wolli_home, loopback) -> Path:
    write_models_json(wolli_home, loopback.url + "/v1")
    return make_project(tmp_path)


def settings(home: Path, value: object) -> None:
    (home / "settings.json").write_text(json.dumps({"sandbox": value}))


def tool_texts(loopback) -> list[str]:
    return [m["content"] if isinstance(m["content"], str) else json.dumps(m["content"])
            for m in loopback.requests[-1].json["messages"] if m["role"] == "tool"]


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = b"hello through the proxy"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


@pytest.fixture
def web():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


def fetch(port: int) -> str:
    """A request that goes through the proxy (127.0.0.1 is otherwise reached directly: it is the
    sandbox's own loopback)."""
    return f"curl -s -S --max-time 10 --noproxy '' http://127.0.0.1:{port}/"


@pytest.fixture
def outside():
    """A file in a real folder outside the project and outside /tmp (which the sandbox
    replaces with its own): beside this test. Removed afterwards, should the sandbox fail."""
    path = Path(__file__).with_name(f"sandbox-escape-{os.getpid()}.txt")
    yield path
    path.unlink(missing_ok=True)


def _refused(output: str, outside: Path) -> bool:
    """The write outside the project failed the way the sandbox makes it fail: read-only, or
    (for a checkout under /tmp, which the sandbox replaces with its own) not there at all."""
    if str(outside).startswith(("/tmp/", "/var/tmp/")):
        return "Read-only file system" in output or "No such file or directory" in output
    return "Read-only file system" in output


@needs_bwrap
def test_the_project_is_writable_and_nothing_else_is(repo, wolli_home, loopback, outside):
    settings(wolli_home, True)
    loopback.push(tool_call_answer("bash", {"command": f"touch inside.txt; touch {outside}; echo hi > /tmp/t; "
                                                       "cat /tmp/t; ls /usr >/dev/null && echo usr-readable"}),
                  text_answer("done"))
    # default mode: a confined command runs without a question (sandbox.autoAllowBash)
    result = wolli(["-p", *MODEL, "--permission-mode", "default", "go"], repo)
    assert result.returncode == 0, result.stderr
    [output] = tool_texts(loopback)
    assert (repo / "inside.txt").exists() and not outside.exists()
    assert _refused(output, outside) and "hi" in output and "usr-readable" in output
    assert not Path("/tmp/t").exists() or Path("/tmp/t").read_text() != "hi\n"  # its /tmp was its own


@needs_bwrap
def test_the_network_is_closed_except_for_allowed_domains(repo, wolli_home, loopback, web):
    if not any(os.access(os.path.join(p, "curl"), os.X_OK) for p in os.environ.get("PATH", "").split(os.pathsep)):
        pytest.skip("needs curl")
    settings(wolli_home, {"network": {"allowedDomains": ["127.0.0.1"]}})
    loopback.push(tool_call_answer("bash", {"command": fetch(web)}), text_answer("fetched"))
    assert wolli(["-p", *MODEL, "go"], repo).returncode == 0
    assert "hello through the proxy" in tool_texts(loopback)[0]
    settings(wolli_home, True)
    loopback.push(tool_call_answer("bash", {"command": fetch(web) + "; curl -s --max-time 5 http://example.com/ "
                                                                     "|| echo no-route"}), text_answer("refused"))
    assert wolli(["-p", *MODEL, "go"], repo).returncode == 0
    output = tool_texts(loopback)[0]
    assert "does not allow connections to 127.0.0.1" in output and "hello" not in output


@needs_bwrap
def test_a_host_not_listed_is_asked_about_and_allow_always_saves_it(repo, wolli_home, loopback, web):
    settings(wolli_home, True)
    asked: list[dict] = []

    def answer(request: dict) -> object:
        asked.append(request)
        return {"optionId": "allow_always"}

    with start_client(repo, *RPC_MODEL, on_ui_request=answer) as client:
        client.request({"type": "set_permission_requests", "enabled": True})
        loopback.push(tool_call_answer("bash", {"command": fetch(web)}), text_answer("fetched"))
        client.run("fetch it")
        assert client.close() == 0
    network = [r for r in asked if r["method"] == "permission" and r["toolCall"]["toolName"] == "network"]
    assert len(network) == 1 and network[0]["toolCall"]["rawInput"]["host"] == "127.0.0.1"
    assert not [r for r in asked if r["method"] == "permission" and r["toolCall"]["toolName"] == "bash"]
    assert "hello through the proxy" in tool_texts(loopback)[0]
    saved = json.loads((wolli_home / "agents" / "default" / "settings.json").read_text())
    assert saved["sandbox"]["network"]["allowedDomains"] == ["127.0.0.1"]


@needs_bwrap
def test_user_shell_commands_are_confined_too(repo, wolli_home, loopback, outside):
    settings(wolli_home, True)
    with start_client(repo, *RPC_MODEL) as client:
        done = client.request({"type": "bash", "command": f"touch {outside}; touch here.txt; echo $?"})
        assert client.close() == 0
    assert (repo / "here.txt").exists() and not outside.exists()
    assert _refused(done["output"], outside)


def test_without_bubblewrap_the_fallback_refuses_or_asks(repo, wolli_home, loopback, tmp_path):
    env_path = tmp_path / "bin"
    env_path.mkdir()  # a PATH without bwrap: the sandbox cannot run
    old = os.environ["PATH"]
    os.environ["PATH"] = str(env_path)
    try:
        settings(wolli_home, {"fallback": "refuse"})
        loopback.push(tool_call_answer("bash", {"command": "touch ran"}), text_answer("refused"))
        result = wolli(["-p", *MODEL, "go"], repo)
        assert result.returncode == 0, result.stderr
        assert "bwrap (bubblewrap) is not installed" in result.stderr
        assert result.stderr.count("sandbox:") == 1
        assert "sandbox.fallback is refuse" in tool_texts(loopback)[0] and not (repo / "ran").exists()
        settings(wolli_home, True)  # fallback ask: in print mode nobody can answer
        loopback.push(tool_call_answer("bash", {"command": "touch ran"}), text_answer("asked"))
        result = wolli(["-p", *MODEL, "go"], repo)
        assert "would run unconfined" in tool_texts(loopback)[0] and not (repo / "ran").exists()
    finally:
        os.environ["PATH"] = old
