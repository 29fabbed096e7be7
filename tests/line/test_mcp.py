"""MCP in the line mode: the project ``.mcp.json`` approval asked as a prompt, and ``/mcp
login`` completing an OAuth login through ``$BROWSER`` against the loopback authorization
server (tests/mcp/oauth_server.py)."""

from __future__ import annotations

import json
import stat

from tests.mcp.conftest import python_server, write_mcp
from tests.mcp.helpers import agent_config
from tests.support.waiting import wait_until


def _tool_names(term) -> list[str]:
    return [t.name for t in term.repl.startup.session.agent.state.tools]


async def test_the_project_file_is_approved_at_a_prompt(line, wolli_home, project):
    write_mcp(project / ".mcp.json", {"time": python_server("mcp-server-time")})
    term = await line()
    await term.wait_asked("Project MCP servers")
    assert "wants to start these MCP servers: time" in term.text
    assert "mcp__time__get_current_time" not in _tool_names(term)
    term.type("y")
    await wait_until(lambda: "mcp__time__get_current_time" in _tool_names(term), 30, "the project's server")
    approvals = json.loads((wolli_home / "agents" / "default" / "mcp-approvals.json").read_text())
    assert list(approvals["projects"].values())[0]["verdict"] == "approved"


async def test_a_refused_project_file_starts_nothing(line, wolli_home, project):
    write_mcp(project / ".mcp.json", {"time": python_server("mcp-server-time")})
    term = await line()
    await term.wait_asked("Project MCP servers")
    term.type("n")
    await term.wait_for("project MCP servers not started (time); run /mcp approve to change your mind")
    assert "time" not in term.repl.host.mcp.manager.servers
    approvals = json.loads((wolli_home / "agents" / "default" / "mcp-approvals.json").read_text())
    assert list(approvals["projects"].values())[0]["verdict"] == "denied"


async def test_mcp_login_completes_the_oauth_flow(line, wolli_home, oauth_server, browser):
    agent_config(wolli_home, {"secure": {"type": "http", "url": oauth_server.url}})
    term = await line()
    await term.wait_for("MCP server secure: needs login: run /mcp login secure")
    await term.send("/mcp login secure")
    await term.wait_for("secure: ready, 1 tool", timeout=30)
    assert "Log in to secure" in term.text and "Your browser was asked to open this URL" in term.text
    assert browser.read_text().startswith("200 Logged in.")
    assert "mcp__secure__add" in _tool_names(term)
    assert stat.S_IMODE((wolli_home / "mcp-auth.json").stat().st_mode) == 0o600
    assert not any(secret in term.text for secret in oauth_server.secrets)
