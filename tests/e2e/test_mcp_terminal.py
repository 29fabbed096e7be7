"""End to end in a real terminal: the TUI under tmux with a real MCP server (mcp-server-time)
in the agent's mcp.json. The prompt is typed at once; the request waits for the server seen
for the first time, the model calls its tool, the tool row and the answer are on screen."""

from __future__ import annotations

import shutil

import pytest

from tests.mcp.conftest import python_server
from tests.mcp.helpers import agent_config, tool_names, tool_texts
from tests.support.openai_chat import text_answer, tool_call_answer

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")


def test_an_mcp_tool_call_in_the_tui(terminal_run, loopback, wolli_home):
    agent_config(wolli_home, {"time": python_server("mcp-server-time")})
    loopback.push(tool_call_answer("mcp__time__get_current_time", {"timezone": "Europe/Berlin"}),
                  text_answer("It is evening in Berlin."))
    term = terminal_run()
    term.wait_for("local/local-model")
    term.type("what time is it in Berlin?")
    term.send("Enter")
    term.wait_for("It is evening in Berlin.", timeout=60)
    screen = term.screen()
    assert "get_current_time" in screen and "Europe/Berlin" in screen
    assert "mcp__time__get_current_time" in tool_names(loopback.requests[0])
    answer = tool_texts(loopback.requests[1])[0]
    assert '"timezone": "Europe/Berlin"' in answer and "datetime" in answer
    term.send("C-d")
    assert term.exit_status() == 0
