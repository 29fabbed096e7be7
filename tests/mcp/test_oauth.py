"""OAuth end to end against a loopback authorization server built from the SDK's server side
(tests/mcp/oauth_server.py): a server that needs login says so in one line; ``wolli mcp
login`` completes the flow through ``$BROWSER``; the tokens are stored 0600 and used on the
next start; an expired token is refreshed; a refused one is refreshed once; a revoked login
is one clear line; and no code or token ever reaches stdout, stderr, logs or session files.
"""

from __future__ import annotations

import json
import stat
from pathlib import Path
from typing import Any

from tests.mcp.helpers import MODEL, agent_config, tool_texts
from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json

AUTH_FILE = "mcp-auth.json"


def _auth(home: Path) -> dict[str, Any]:
    entries = json.loads((home / AUTH_FILE).read_text())
    assert len(entries) == 1
    return next(iter(entries.values()))


def _lines_about(text: str, name: str) -> list[str]:
    return [line for line in text.splitlines() if name in line]


def _assert_no_secret(secrets: list[str], texts: list[str], home: Path) -> None:
    """No code or token in any output, nor in any file under the agent's home (sessions,
    logs, caches) except the token store itself."""
    assert secrets
    for text in texts:
        for secret in secrets:
            assert secret not in text
    for path in home.rglob("*"):
        if path.is_file() and path.name != AUTH_FILE:
            data = path.read_text("utf-8", "replace")
            leaked = [s for s in secrets if s in data]
            assert not leaked, f"{path} holds a secret"


def test_login_tokens_refresh_and_revocation(project, wolli_home, loopback, oauth_server, browser):
    write_models_json(wolli_home, loopback.url + "/v1")
    agent_config(wolli_home, {"secure": {"type": "http", "url": oauth_server.url}})
    outputs: list[str] = []

    def run(*args: str) -> Any:
        result = wolli(list(args), project)
        outputs.extend([result.stdout, result.stderr])
        return result

    # Never logged in: the server needs a login, said in one line, no traceback.
    listed = run("mcp", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    status = json.loads(listed.stdout)["servers"][0]
    assert status["state"] == "needs-login" and status["tools"] == []
    assert status["summary"] == "needs login: run /mcp login secure (or wolli mcp login secure)"
    assert "Traceback" not in listed.stderr and listed.stderr == ""
    loopback.push(text_answer("fine"))
    result = run("-p", *MODEL, "hi")
    assert result.returncode == 0, result.stderr
    assert _lines_about(result.stderr, "secure") == [
        "wolli: MCP server secure: needs login: run /mcp login secure (or wolli mcp login secure)"]
    assert "Traceback" not in result.stderr

    # The login: the browser script follows the authorization URL back to Wolli's listener.
    login = run("mcp", "login", "secure")
    assert login.returncode == 0, login.stderr
    assert "Opening your browser to log in to secure" in login.stdout
    assert "Logged in: secure is ready, 1 tool." in login.stdout
    assert browser.read_text().startswith("200 Logged in.")
    assert oauth_server.count("register") == 1 and oauth_server.count("code exchanged") == 1
    path = wolli_home / AUTH_FILE
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    stored = _auth(wolli_home)
    first_access = stored["tokens"]["access_token"]
    assert first_access in oauth_server.secrets and stored["tokens"]["refresh_token"]
    assert stored["expiresAt"] > 0 and stored["client"]["client_id"]

    # The next start uses the stored token: no new authorization.
    loopback.push(tool_call_answer("mcp__secure__add", {"a": 2, "b": 40}), text_answer("done"))
    result = run("-p", *MODEL, "add")
    assert result.returncode == 0, result.stderr
    assert tool_texts(loopback.requests[-1])[0].strip() == "42"
    assert oauth_server.count("authorize") == 1 and oauth_server.count("refreshed") == 0

    # The stored token has run out: it is refreshed before use, the new one stored.
    data = json.loads(path.read_text())
    next(iter(data.values()))["expiresAt"] = 1
    path.write_text(json.dumps(data))
    loopback.push(tool_call_answer("mcp__secure__add", {"a": 1, "b": 1}), text_answer("done"))
    result = run("-p", *MODEL, "add")
    assert result.returncode == 0, result.stderr
    assert tool_texts(loopback.requests[-1])[0].strip() == "2"
    assert oauth_server.count("refreshed") == 1 and oauth_server.count("authorize") == 1
    second_access = _auth(wolli_home)["tokens"]["access_token"]
    assert second_access != first_access
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    # The server refuses the access token (revoked) but the refresh token still works:
    # refreshed once, no login needed.
    oauth_server.revoke(refresh_too=False)
    loopback.push(tool_call_answer("mcp__secure__add", {"a": 3, "b": 3}), text_answer("done"))
    result = run("-p", *MODEL, "add")
    assert result.returncode == 0, result.stderr
    assert tool_texts(loopback.requests[-1])[0].strip() == "6"
    assert oauth_server.count("refreshed") == 2 and oauth_server.count("authorize") == 1
    assert _lines_about(result.stderr, "secure") == []

    # Revoked altogether: back to needs login, one clear line, and the model gets an error.
    oauth_server.revoke(refresh_too=True)
    loopback.push(tool_call_answer("mcp__secure__add", {"a": 4, "b": 4}), text_answer("noted"))
    result = run("-p", *MODEL, "add")
    assert result.returncode == 0, result.stderr
    assert _lines_about(result.stderr, "secure") == [
        "wolli: MCP server secure: needs login: the saved login was refused (expired or revoked); "
        "run /mcp login secure"]
    assert "Traceback" not in result.stderr
    answer = tool_texts(loopback.requests[-1])[0]
    assert "needs-login" in answer and "/mcp login secure" in answer
    assert oauth_server.count("authorize") == 1  # never a browser without the user asking

    _assert_no_secret(oauth_server.secrets, outputs, wolli_home)
    sdk_log = wolli_home / "agents" / "default" / "logs" / "mcp-sdk.log"
    assert sdk_log.exists()  # the SDK's own complaints went to the log, not the terminal


def test_a_second_login_registers_again_when_the_port_changed(project, wolli_home, oauth_server, browser):
    agent_config(wolli_home, {"secure": {"type": "http", "url": oauth_server.url}})
    assert wolli(["mcp", "login", "secure"], project).returncode == 0
    data = json.loads((wolli_home / AUTH_FILE).read_text())
    entry = next(iter(data.values()))
    entry["client"]["redirect_uris"] = ["http://127.0.0.1:1/callback"]  # a port it cannot have again
    (wolli_home / AUTH_FILE).write_text(json.dumps(data))
    oauth_server.revoke(refresh_too=True)
    login = wolli(["mcp", "login", "secure"], project)
    assert login.returncode == 0, login.stdout + login.stderr
    assert oauth_server.count("register") == 2 and oauth_server.count("code exchanged") == 2


def test_a_configured_authorization_header_is_not_an_oauth_login(project, wolli_home, bearer_server):
    config = {"remote": {"type": "http", "url": bearer_server.url, "headers": {"Authorization": "Bearer wrong"}}}
    agent_config(wolli_home, config)
    listed = wolli(["mcp", "list", "--json"], project)
    status = json.loads(listed.stdout)["servers"][0]
    assert status["state"] == "failed"
    assert status["summary"].startswith("failed: the server refused the credentials (HTTP 401): check the "
                                        "Authorization header in ")
    assert listed.stderr == ""
    login = wolli(["mcp", "login", "remote"], project)
    assert login.returncode == 1
    assert login.stderr.startswith("wolli: remote sends its own Authorization header (")
    assert login.stderr.rstrip().endswith("there is no OAuth login for it")
