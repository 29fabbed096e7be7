"""Tool search state belongs to a session: two live sessions of one host load tools on their
own, and a resumed session offers what it had loaded (read back from its own history), so
the tools at the head of its requests are the same as before and the provider's cache holds.
"""

from __future__ import annotations

import json

import pytest

from tests.mcp.conftest import python_server
from tests.mcp.helpers import MODEL, agent_config, tools_of
from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.runtime import make_host, start_session
from wolli.ai.providers.faux import FauxProvider, faux_tool_call
from wolli.mcp.config import parse_server
from wolli.mcp.sources import Sources
from wolli.runtime.live.options import SessionOptions

LOAD = {"query": "select:mcp__time__convert_time"}


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


def _names(tools) -> list[str]:
    return [t.name for t in tools]


async def test_two_sessions_of_one_host_load_tools_on_their_own_and_a_reopened_one_gets_them_back(faux, project):
    host = make_host(faux, mcp={"toolSearch": "on"})
    link = host.mcp_link()
    link.apply(Sources(servers=[parse_server("time", python_server("mcp-server-time"), "agent", "test", {})]))
    first = await start_session(host, project, model=faux.model)
    await link.start(interactive=False, wait=True)
    second = await host.create_session(SessionOptions(cwd=str(project), model=faux.model))
    try:
        assert _names(first.agent.state.tools)[-1] == "tool_search"
        faux.push([faux_tool_call("tool_search", LOAD)], "loaded")
        await first.prompt("load the converter")
        assert _names(first.agent.state.tools)[-2:] == ["tool_search", "mcp__time__convert_time"]
        assert "mcp__time__convert_time" not in _names(second.agent.state.tools)
        faux.push("nothing loaded here")
        await second.prompt("hello")
        sent = [tool.name for tool in faux.contexts[-1].tools or []]
        assert "tool_search" in sent and "mcp__time__convert_time" not in sent

        before = [(t.name, t.description, t.json_schema()) for t in first.agent.state.tools]
        path = first.session_file
        assert path is not None
        await host.close_session(first)
        reopened = await host.open_session(path, cwd=str(project))
        assert reopened is not first
        assert [(t.name, t.description, t.json_schema()) for t in reopened.agent.state.tools] == before
    finally:
        await host.shutdown()


def test_a_resumed_session_sends_the_tools_it_had_loaded(project, wolli_home, loopback, local_model):
    agent_config(wolli_home, {"time": python_server("mcp-server-time")})
    (wolli_home / "agents" / "default" / "settings.json").write_text(json.dumps({"mcp": {"toolSearch": "on"}}))
    loopback.push(tool_call_answer("tool_search", LOAD), text_answer("loaded"))
    result = wolli(["-p", *MODEL, "load the converter"], project)
    assert result.returncode == 0, result.stderr
    first, last = tools_of(loopback.requests[0]), tools_of(loopback.requests[1])
    assert [t["name"] for t in first] == [t["name"] for t in last][: len(first)]
    assert json.dumps(last[: len(first)]) == json.dumps(first)  # loading appends, the head stays
    assert last[-1]["name"] == "mcp__time__convert_time"

    loopback.push(text_answer("again"))
    result = wolli(["-p", "-c", *MODEL, "and now?"], project)
    assert result.returncode == 0, result.stderr
    assert json.dumps(tools_of(loopback.requests[2])) == json.dumps(last)

    loopback.push(text_answer("fresh"))
    result = wolli(["-p", *MODEL, "a new session"], project)
    assert result.returncode == 0, result.stderr
    assert json.dumps(tools_of(loopback.requests[3])) == json.dumps(first)
