"""ACP sessions driven by the SDK's client side: initialize, new, prompt, cancel, load, bad input."""

from __future__ import annotations

import asyncio
import json
import os
import sys
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.support.acp_client import MODEL, editor
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import hanging_answer, write_models

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url)


async def test_initialize_advertises_what_is_implemented(project: Path, models) -> None:
    async with editor(project, *MODEL, initialize=False) as (conn, _, _):
        answer = await conn.initialize(protocol_version=1)
    caps = answer.agent_capabilities
    assert answer.protocol_version == 1
    assert caps.load_session is True
    assert caps.prompt_capabilities.image is True and caps.prompt_capabilities.embedded_context is True
    assert caps.mcp_capabilities.http is True
    assert answer.agent_info.name == "wolli"


async def test_prompt_streams_chunks_and_ends_the_turn(project: Path, models, loopback) -> None:
    loopback.push(text_answer("Hello from the loopback model, in several pieces."))
    async with editor(project, *MODEL) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        assert session.modes.current_mode_id == "default"  # ACP asks before changes
        assert {m.id for m in session.modes.available_modes} == {"default", "accept-edits", "plan", "yolo"}
        answer = await conn.prompt(session_id=session.session_id, prompt=[text_block("hi")])
        assert answer.stop_reason == "end_turn"
        assert client.text(session.session_id) == "Hello from the loopback model, in several pieces."
        assert len(client.of(session.session_id, "agent_message_chunk")) >= 1
        [usage] = client.of(session.session_id, "usage_update")
        assert usage.size == 32000 and 0 < usage.used < 32000  # the context window of models.json
    sent = loopback.requests[0].json
    assert sent["messages"][-1]["content"] in ("hi", [{"type": "text", "text": "hi"}])


async def test_cancel_mid_stream_then_the_next_prompt_works(project: Path, models, loopback, wolli_home) -> None:
    loopback.push(hanging_answer("Part one of an answer that never ends", pieces=4))
    loopback.push(text_answer("The second answer arrives whole."))
    async with editor(project, *MODEL) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await client.wait_for(sid, "agent_message_chunk")
        await conn.cancel(session_id=sid)
        first = await asyncio.wait_for(turn, 20)
        assert first.stop_reason == "cancelled"
        partial = client.text(sid)
        assert partial and "Part one"[:4] in partial
        second = await conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert second.stop_reason == "end_turn"
        assert client.text(sid).endswith("The second answer arrives whole.")
    # the partial answer was saved in the session
    [file] = list(wolli_home.rglob("*.jsonl"))
    assert "aborted" in file.read_text() and "Part" in file.read_text()


async def test_a_prompt_sent_during_a_turn_is_cancelled_with_it(project: Path, models, loopback) -> None:
    loopback.push(hanging_answer("A first answer that never ends", pieces=4))
    loopback.push(text_answer("An answer nobody asked for any more."))
    async with editor(project, *MODEL) as (conn, client, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        first = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await client.wait_for(sid, "agent_message_chunk")
        second = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("and then")]))
        await asyncio.sleep(0)  # the second prompt is written before the cancel
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(first, 20)).stop_reason == "cancelled"
        assert (await asyncio.wait_for(second, 20)).stop_reason == "cancelled"
        assert "nobody asked" not in client.text(sid)
    assert len(loopback.requests) == 1


async def test_an_empty_prompt_is_refused_and_nothing_is_sent(project: Path, models, loopback) -> None:
    async with editor(project, *MODEL) as (conn, client, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        for empty in ([], [text_block("  \n")]):
            with pytest.raises(RequestError) as refused:
                await conn.prompt(session_id=sid, prompt=empty)
            assert refused.value.code == -32602 and "the prompt is empty" in str(refused.value.data)
        loopback.push(text_answer("still fine"))
        assert (await conn.prompt(session_id=sid, prompt=[text_block("hi")])).stop_reason == "end_turn"
    assert len(loopback.requests) == 1
    assert loopback.requests[0].json["messages"][-1]["content"] in ("hi", [{"type": "text", "text": "hi"}])


async def test_load_replays_history_and_continues(project: Path, models, loopback) -> None:
    (project / "notes.txt").write_text("alpha\n")
    loopback.push(tool_call_answer("read", {"path": "notes.txt"}), text_answer("The file says alpha."))
    async with editor(project, *MODEL) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        assert (await conn.prompt(session_id=sid, prompt=[text_block("read notes")])).stop_reason == "end_turn"
    loopback.push(text_answer("Still here."))
    async with editor(project, *MODEL) as (conn, client, _):
        listed = await conn.list_sessions(cwd=str(project))
        assert sid in [s.session_id for s in listed.sessions]
        loaded = await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        assert loaded.modes.current_mode_id == "default"
        # the whole history arrived before the answer
        assert client.text(sid, "user_message_chunk") == "read notes"
        assert client.text(sid) == "The file says alpha."
        [start] = client.of(sid, "tool_call")
        assert start.kind == "read" and start.raw_input == {"path": "notes.txt"}
        [end] = client.of(sid, "tool_call_update")
        assert end.status == "completed" and "alpha" in end.content[0].content.text
        answer = await conn.prompt(session_id=sid, prompt=[text_block("and now?")])
        assert answer.stop_reason == "end_turn"
        assert client.text(sid).endswith("Still here.")
    assert len(loopback.requests[-1].json["messages"]) >= 5  # the history went with the new prompt


async def test_load_of_an_unknown_session_is_an_error(project: Path, models) -> None:
    async with editor(project, *MODEL) as (conn, _, _):
        with pytest.raises(RequestError):
            await conn.load_session(cwd=str(project), session_id="does-not-exist", mcp_servers=[])


async def test_several_sessions_in_one_process(project: Path, models, loopback) -> None:
    other = project / "other"
    other.mkdir()
    loopback.push(text_answer("one"), text_answer("two"))
    async with editor(project, *MODEL) as (conn, client, _):
        a = await conn.new_session(cwd=str(project), mcp_servers=[])
        b = await conn.new_session(cwd=str(other), mcp_servers=[])
        assert a.session_id != b.session_id
        await conn.prompt(session_id=a.session_id, prompt=[text_block("first")])
        await conn.prompt(session_id=b.session_id, prompt=[text_block("second")])
        assert client.text(a.session_id) == "one"
        assert client.text(b.session_id) == "two"


async def test_bad_messages_get_errors_and_the_agent_stays_up(project: Path, models, loopback) -> None:
    from acp.schema import ClientCapabilities  # noqa: F401  (the SDK is what the editor uses)

    env = os.environ.copy()
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "wolli", "--mode", "acp", *MODEL, cwd=project, env=env,
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    assert process.stdin is not None and process.stdout is not None

    async def send(raw: bytes) -> dict:
        process.stdin.write(raw + b"\n")
        await process.stdin.drain()
        return json.loads(await asyncio.wait_for(process.stdout.readline(), 20))

    try:
        parse = await send(b"{not json")
        assert parse["error"]["code"] == -32700 and parse["id"] is None
        invalid = await send(b"[1, 2]")
        assert invalid["error"]["code"] == -32600
        unknown = await send(json.dumps({"jsonrpc": "2.0", "id": 7, "method": "session/nope", "params": {}}).encode())
        assert unknown["id"] == 7 and unknown["error"]["code"] == -32601
        params = await send(json.dumps({"jsonrpc": "2.0", "id": 8, "method": "session/new",
                                        "params": {"cwd": 42}}).encode())
        assert params["id"] == 8 and params["error"]["code"] == -32602
        ok = await send(json.dumps({"jsonrpc": "2.0", "id": 9, "method": "initialize",
                                    "params": {"protocolVersion": 1}}).encode())
        assert ok["id"] == 9 and ok["result"]["agentCapabilities"]["loadSession"] is True
    finally:
        process.stdin.close()
        code = await asyncio.wait_for(process.wait(), 20)
    assert code == 0  # stdin closed: a clean exit


async def test_embedded_context_and_links_reach_the_model(project: Path, models, loopback) -> None:
    from acp import embedded_text_resource, resource_block, resource_link_block

    note = project / "note.md"
    loopback.push(text_answer("Seen."))
    async with editor(project, *MODEL) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        prompt = [text_block("look at these"),
                  resource_block(embedded_text_resource(f"file://{note}", "# buffer text of the note")),
                  resource_link_block(name="main.py", uri=f"file://{project}/main%20file.py")]
        assert (await conn.prompt(session_id=session.session_id, prompt=prompt)).stop_reason == "end_turn"
    sent = json.dumps(loopback.requests[0].json["messages"][-1])
    assert f'<context ref=\\"{note}\\">\\n# buffer text of the note\\n</context>' in sent
    assert f"{project}/main file.py" in sent


def _finishing(reason: str, text: str):
    reply = text_answer(text)
    reply.body = reply.body.replace(b'"finish_reason": "stop"', f'"finish_reason": "{reason}"'.encode())
    assert reason.encode() in reply.body
    return reply


async def test_stop_reasons_for_the_output_limit_and_a_refusal(project: Path, models, loopback) -> None:
    loopback.push(_finishing("length", "An answer cut by the output"), _finishing("content_filter", "I will"))
    async with editor(project, *MODEL) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        assert (await conn.prompt(session_id=sid, prompt=[text_block("long")])).stop_reason == "max_tokens"
        assert (await conn.prompt(session_id=sid, prompt=[text_block("bad")])).stop_reason == "refusal"
        assert "content filter" in client.text(sid)
