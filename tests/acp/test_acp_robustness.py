"""What an editor relies on: MCP servers it passes, plans, notices, a clean stdout, and a
clean end when it goes away."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import text_block
from acp.schema import McpServerStdio

from tests.support.acp_client import MODEL, editor
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import hanging_answer, write_models
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(120)
TODO = str(Path(__file__).resolve().parents[2] / "extensions" / "todo.py")


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url)


async def test_mcp_servers_from_session_new_are_connected(project: Path, models, loopback) -> None:
    server = McpServerStdio(name="time", command=str(Path(sys.executable).parent / "mcp-server-time"),
                            args=["--local-timezone", "UTC"], env=[])
    loopback.push(tool_call_answer("mcp__time__get_current_time", {"timezone": "Europe/Berlin"}),
                  text_answer("It is time."))
    async with editor(project, *MODEL, "--permission-mode", "yolo") as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[server])
        sid = session.session_id
        assert (await conn.prompt(session_id=sid, prompt=[text_block("time?")])).stop_reason == "end_turn"
        end = client.of(sid, "tool_call_update")[-1]
        assert end.status == "completed" and "Europe/Berlin" in end.raw_output["content"]
    offered = [t["function"]["name"] for t in loopback.requests[0].json.get("tools", [])]
    assert "mcp__time__get_current_time" in offered


async def test_todo_list_becomes_a_plan(project: Path, models, loopback) -> None:
    loopback.push(tool_call_answer("todo", {"action": "add", "text": "write the tests"}),
                  tool_call_answer("todo", {"action": "add", "text": "ship it"}, call_id="call_2"),
                  tool_call_answer("todo", {"action": "done", "text": "write the tests"}, call_id="call_3"),
                  text_answer("Planned."))
    async with editor(project, *MODEL, "-e", TODO, "--permission-mode", "yolo") as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        assert (await conn.prompt(session_id=sid, prompt=[text_block("plan")])).stop_reason == "end_turn"
        plans = client.of(sid, "plan")
        assert len(plans) == 3
        assert [(e.content, e.status) for e in plans[-1].entries] == [
            ("write the tests", "completed"), ("ship it", "pending")]


PRINTER = '''
import sys

def extension(wolli):
    print("printed while loading: must not reach the protocol")

    def shout(args, ctx):
        print("printed by a command")
        sys.stdout.write("written to stdout directly\\n")
        ctx.ui.notify("shouted " + args, "warning")

    wolli.register_command("shout", handler=shout, description="Prints")
'''


async def test_extension_output_never_reaches_the_protocol(project: Path, models, tmp_path: Path) -> None:
    extension = tmp_path / "printer.py"
    extension.write_text(PRINTER)
    async with editor(project, *MODEL, "-e", str(extension)) as (conn, client, _):
        # every line on stdout parsed as a JSON-RPC message, or this would have failed
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        assert (await conn.prompt(session_id=sid, prompt=[text_block("/shout loud")])).stop_reason == "end_turn"
        assert "Warning: shouted loud" in client.text(sid)


async def test_client_going_away_ends_cleanly_with_the_session_saved(project: Path, models, loopback,
                                                                    wolli_home: Path) -> None:
    loopback.push(hanging_answer("An answer cut short when the editor closes", pieces=4))
    async with editor(project, *MODEL) as (conn, client, process):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("a question to keep")]))
        await client.wait_for(sid, "agent_message_chunk")
        assert process.stdin is not None
        process.stdin.close()  # the editor quits
        code = await asyncio.wait_for(process.wait(), 30)
        turn.cancel()
    assert code == 0
    await wait_until(lambda: bool(list(wolli_home.rglob("*.jsonl"))), 5, "the session file")
    [file] = list(wolli_home.rglob("*.jsonl"))
    text = file.read_text()
    assert "a question to keep" in text and "An answer" in text
