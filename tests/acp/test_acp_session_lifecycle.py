"""ACP session life cycle beyond new/load, driven by the SDK's client side: ``session/resume``
(no replay), ``session/fork`` (a copy to go on in), ``session/close`` (stop and free), and
``session_info_update`` (the title a new or renamed session gets)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.support.acp_client import MODEL, editor
from tests.support.openai_chat import sent_texts, text_answer
from tests.support.rpc import hanging_answer, write_models

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url)


def _user_texts(request) -> list[str]:
    return sent_texts(request, "user")


async def test_initialize_advertises_resume_fork_and_close(project: Path, models) -> None:
    async with editor(project, *MODEL, initialize=False) as (conn, _, _):
        caps = (await conn.initialize(protocol_version=1)).agent_capabilities.session_capabilities
    assert caps.resume is not None and caps.fork is not None and caps.close is not None and caps.list is not None


async def test_resume_goes_on_without_replaying_the_history(project: Path, models, loopback) -> None:
    loopback.push(text_answer("First answer."), text_answer("Second answer."))
    async with editor(project, *MODEL) as (conn, _, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("first question")])
    async with editor(project, *MODEL) as (conn, client, _):
        resumed = await conn.resume_session(cwd=str(project), session_id=sid, mcp_servers=[])
        assert resumed.modes.current_mode_id == "default"
        assert client.of(sid, "user_message_chunk") == [] and client.text(sid) == ""  # nothing replayed
        answer = await conn.prompt(session_id=sid, prompt=[text_block("second question")])
        assert answer.stop_reason == "end_turn" and client.text(sid) == "Second answer."
    assert _user_texts(loopback.requests[-1]) == ["first question", "second question"]


async def test_resume_of_an_unknown_session_is_an_error(project: Path, models) -> None:
    async with editor(project, *MODEL) as (conn, _, _):
        with pytest.raises(RequestError):
            await conn.resume_session(cwd=str(project), session_id="no-such-session", mcp_servers=[])


async def test_fork_copies_the_conversation_and_leaves_the_original(project: Path, models, loopback) -> None:
    loopback.push(text_answer("Shared answer."), text_answer("Forked answer."), text_answer("Original answer."))
    async with editor(project, *MODEL) as (conn, client, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("shared question")])
        fork = await conn.fork_session(cwd=str(project), session_id=sid, mcp_servers=[])
        assert fork.session_id != sid and fork.modes.current_mode_id == "default"
        await conn.prompt(session_id=fork.session_id, prompt=[text_block("only in the fork")])
        assert client.text(fork.session_id) == "Forked answer."
        assert _user_texts(loopback.requests[-1]) == ["shared question", "only in the fork"]
        await conn.prompt(session_id=sid, prompt=[text_block("only in the original")])
        assert _user_texts(loopback.requests[-1]) == ["shared question", "only in the original"]
        listed = {s.session_id for s in (await conn.list_sessions(cwd=str(project))).sessions}
        assert {sid, fork.session_id} <= listed


async def test_close_stops_the_run_and_frees_the_session(project: Path, models, loopback) -> None:
    loopback.push(hanging_answer("An answer that never ends", pieces=3), text_answer("Back again."))
    async with editor(project, *MODEL) as (conn, client, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await client.wait_for(sid, "agent_message_chunk")
        await asyncio.wait_for(conn.close_session(session_id=sid), 20)
        assert (await asyncio.wait_for(turn, 20)).stop_reason == "cancelled"
        with pytest.raises(RequestError) as refused:
            await conn.prompt(session_id=sid, prompt=[text_block("still there?")])
        assert "no open session" in str(refused.value.data)
        # its file stays: loading it opens the session again, with the partial answer
        await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        answer = await conn.prompt(session_id=sid, prompt=[text_block("again")])
        assert answer.stop_reason == "end_turn" and client.text(sid).endswith("Back again.")


async def test_a_new_session_gets_its_title_and_a_rename_updates_it(project: Path, models, loopback) -> None:
    loopback.push(text_answer("Looking."), text_answer("Still looking."))
    async with editor(project, *MODEL) as (conn, client, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        await conn.prompt(session_id=sid, prompt=[text_block("Fix the parser\nit drops the last token")])
        [first] = client.of(sid, "session_info_update")
        assert first.title == "Fix the parser" and first.updated_at.endswith("Z")
        await conn.prompt(session_id=sid, prompt=[text_block("and the lexer")])
        assert len(client.of(sid, "session_info_update")) == 1  # unchanged: not sent again
        await conn.prompt(session_id=sid, prompt=[text_block("/name Parser work")])
        assert [u.title for u in client.of(sid, "session_info_update")] == ["Fix the parser", "Parser work"]
