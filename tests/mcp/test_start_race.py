"""A prompt sent before the front end's background MCP start has run waits for it.

Front ends start MCP servers after their first frame, in a worker (``host.start_mcp(...)``
scheduled, not awaited). On a busy machine, or with a fast typist, the first prompt can get
to the servers' check before that worker's first step: it must wait for the launch and then
for the servers, so the first request carries their tools. The test forces that order with
a gate instead of hoping for it: the start's coroutine is made (as the front end makes it)
but held until the prompt's ``input`` handler opens the gate, and from there the prompt
reaches the check without giving the loop a turn, so the start runs only once the prompt
has looked.
"""

from __future__ import annotations

import asyncio

import pytest

from tests.mcp.conftest import python_server
from tests.support.runtime import make_host, start_session
from wolli.ai.providers.faux import FauxProvider
from wolli.mcp.config import parse_server
from wolli.mcp.sources import Sources


@pytest.fixture
def faux():
    provider = FauxProvider()
    yield provider
    provider.unregister()


async def test_a_prompt_ahead_of_the_background_start_waits_and_sends_the_servers_tools(faux, project):
    host = make_host(faux)
    link = host.mcp_link()
    link.apply(Sources(servers=[parse_server("time", python_server("mcp-server-time"), "agent", "test", {})]))
    session = await start_session(host, project, model=faux.model)
    prompt_under_way = asyncio.Event()
    host.handlers.add("input", lambda event, ctx: prompt_under_way.set())
    starting = host.start_mcp(interactive=True)  # what the TUI hands its worker after the first frame

    async def worker() -> None:  # the worker's first step comes only after the prompt's
        await prompt_under_way.wait()
        await starting

    start = asyncio.create_task(worker())
    faux.push("it is noon in Tokyo")
    try:
        await asyncio.wait_for(session.prompt("what time is it in Tokyo?"), 60)
        sent = [tool.name for tool in faux.contexts[0].tools or []]
        assert "mcp__time__get_current_time" in sent, sent
    finally:
        start.cancel()
        await host.shutdown()
