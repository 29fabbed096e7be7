"""Config reading, approvals, import weight, and cancellation against the bearer test server."""

from __future__ import annotations

import asyncio
import subprocess
import sys

import pytest

from tests.support.waiting import wait_until
from wolli.mcp.approval import Approvals
from wolli.mcp.config import expand, parse_text
from wolli.mcp.tools import tool_name


def test_variables_expand_with_defaults_and_a_missing_one_is_reported():
    env = {"HOME_DIR": "/h", "EMPTY": ""}
    assert expand("${HOME_DIR}/x ${NOPE:-dflt} ${EMPTY:-e}", env) == "/h/x dflt e"
    text = ('{"mcpServers": {"a": {"command": "${HOME_DIR}/bin", "env": {"K": "${NOPE}"}},'
            ' "b": {"type": "http", "url": "https://x/${HOME_DIR}", "headers": {"H": "${NOPE:-v}"}},'
            ' "c": {"type": "carrier-pigeon"}}}')
    found = parse_text(text, "f.json", "agent", env)
    assert [s.name for s in found.servers] == ["b"]
    assert found.servers[0].url == "https://x//h" and dict(found.servers[0].headers) == {"H": "v"}
    assert any("NOPE is not set" in e and "mcpServers.a" in e for e in found.errors)
    assert any("carrier-pigeon" in e for e in found.errors)


def test_a_server_with_neither_command_nor_url_says_what_it_needs():
    found = parse_text('{"mcpServers": {"empty": {}, "typo": {"comand": "x"}}}', "f.json", "agent", {})
    assert found.servers == []
    assert len(found.errors) == 2
    assert all('needs a "command" (a stdio server) or a "url" (http or sse)' in e for e in found.errors)


def test_a_malformed_file_is_one_line_naming_it():
    found = parse_text('{"mcpServers": {', "/p/.mcp.json", "project", {})
    assert found.servers == [] and found.errors[0].startswith("/p/.mcp.json:1:")


def test_approval_is_bound_to_the_content(tmp_path):
    approvals = Approvals(tmp_path)
    assert approvals.verdict("/proj", "A") == "unknown"
    approvals.record("/proj", "A", True)
    assert approvals.verdict("/proj", "A") == "approved"
    assert approvals.verdict("/proj", "A changed") == "unknown"
    assert (tmp_path / "mcp-approvals.json").stat().st_mode & 0o777 == 0o600


def test_tool_names_follow_claude_code_and_stay_short():
    assert tool_name("git", "git_status") == "mcp__git__git_status"
    assert tool_name("my.server", "do it") == "mcp__my_server__do_it"
    long = tool_name("s" * 40, "t" * 40)
    assert len(long) == 64 and long != tool_name("s" * 40, "t" * 41)


def test_importing_wolli_and_starting_without_servers_never_imports_the_sdk():
    code = ("import sys, wolli, wolli.runtime.startup.start, wolli.modes.headless.print_mode;"
            "print(sorted(m for m in sys.modules if m == 'mcp' or m.startswith(('mcp.', 'mcp_types', 'wolli.mcp.'))))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


_START_PROBE = """
import asyncio, sys
from wolli.runtime.startup.start import StartupRequest, start
startup = asyncio.run(start(StartupRequest(mode="print", cwd=sys.argv[1], require_model=False, no_session=True)))
print(startup.warnings)
print(sorted(m for m in sys.modules if m.startswith("wolli.mcp.")))
"""


def test_a_run_with_no_mcp_file_loads_no_mcp_configuration_module(tmp_path):
    work = tmp_path / "work"
    work.mkdir()
    run = [sys.executable, "-c", _START_PROBE, str(work)]
    out = subprocess.run(run, capture_output=True, text=True, check=True).stdout.splitlines()
    assert out[-1] == "['wolli.mcp.files']"
    (work / ".mcp.json").write_text('{"mcpServers": {')  # now there is one: it is read (and reported)
    out = subprocess.run(run, capture_output=True, text=True, check=True).stdout.splitlines()
    assert ".mcp.json:1:" in out[-2] and "wolli.mcp.sources" in out[-1]


async def test_an_aborted_call_is_cancelled_on_the_server(bearer_server, tmp_path):
    from wolli.ai.abort import AbortController
    from wolli.mcp.manager import McpManager
    from wolli.mcp.types import McpError, ServerConfig

    manager = McpManager(settings=None, log_dir=tmp_path)
    manager.add(ServerConfig(name="remote", transport="http", url=bearer_server.url,
                             headers=(("Authorization", f"Bearer {bearer_server.token}"),)))
    manager.start()
    await manager.wait_settled(30)
    server = manager.servers["remote"]
    assert server.state == "ready", server.summary()
    controller = AbortController()
    call = asyncio.ensure_future(server.call_tool("wait_long", {"seconds": 30}, controller.signal))
    await wait_until(lambda: "wait started" in bearer_server.events, 5, "the server to start the call")
    controller.abort()
    with pytest.raises((McpError, asyncio.CancelledError)):
        await asyncio.wait_for(call, 5)
    await wait_until(lambda: "wait cancelled" in bearer_server.events, 5, "the server to hear the cancellation")
    await manager.shutdown()


def test_a_project_file_that_is_a_fifo_is_reported_and_never_waited_on(project):
    import os

    from tests.support.cli import wolli

    os.mkfifo(project / ".mcp.json")  # a hostile repository: open() of a FIFO blocks for a writer
    result = wolli(["mcp", "list"], project, timeout=30)
    assert result.returncode == 0, result.stderr
    assert "No MCP servers are configured" in result.stdout
    (line,) = [line for line in result.stderr.splitlines() if ".mcp.json" in line]
    assert "FIFO" in line and "not a regular file" in line


def test_what_a_server_writes_reaches_the_terminal_as_text(project):
    import json

    from tests.support.cli import wolli

    hostile = {"mcpServers": {"bad": {"command": "sh", "args": ["-c", r"printf '\033]0;pwned\007\033[2Jgone\n' >&2; exit 3"]}}}
    result = wolli(["mcp", "list", "--mcp-config", json.dumps(hostile)], project, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stdout and "\x07" not in result.stdout
    assert "␛]0;pwned␇␛[2Jgone" in result.stdout
