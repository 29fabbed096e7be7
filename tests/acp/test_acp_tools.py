"""Tool calls in an editor: diffs, the user's consent, the editor's buffers and terminals,
slash commands."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import text_block

from tests.support.acp_client import MODEL, editor
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import write_models
from tests.support.waiting import wait_until

pytestmark = pytest.mark.timeout(90)


@pytest.fixture
def models(wolli_home: Path, loopback) -> None:
    write_models(wolli_home, loopback.url)


async def test_write_allowed_once_is_written_with_a_diff(project: Path, models, loopback) -> None:
    target = project / "hello.py"
    target.write_text("print('old')\n")
    loopback.push(tool_call_answer("write", {"path": "hello.py", "content": "print('new')\n"}),
                  text_answer("Written."))
    async with editor(project, *MODEL) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        client.permission_answers = ["allow_once"]
        answer = await conn.prompt(session_id=sid, prompt=[text_block("rewrite hello")])
        assert answer.stop_reason == "end_turn"
        [(tool_call, options)] = client.permission_requests
        assert tool_call.kind == "edit" and "hello.py" in tool_call.title
        assert {o.kind for o in options} == {"allow_once", "allow_always", "reject_once", "reject_always"}
        asked_diff = [c for c in tool_call.content if c.type == "diff"]
        assert asked_diff and asked_diff[0].old_text == "print('old')\n" and asked_diff[0].new_text == "print('new')\n"
        [start] = client.of(sid, "tool_call")
        assert start.kind == "edit" and start.raw_input["path"] == "hello.py"
        assert start.locations[0].path == str(target)
        end = client.of(sid, "tool_call_update")[-1]
        assert end.status == "completed"
        [diff] = [c for c in end.content if c.type == "diff"]
        assert diff.path == str(target) and diff.old_text == "print('old')\n" and diff.new_text == "print('new')\n"
        assert client.text(sid) == "Written."
    assert target.read_text() == "print('new')\n"


async def test_write_rejected_leaves_the_file_and_the_turn_goes_on(project: Path, models, loopback) -> None:
    target = project / "keep.txt"
    target.write_text("original\n")
    loopback.push(tool_call_answer("write", {"path": "keep.txt", "content": "clobbered\n"}),
                  text_answer("Understood, I left it alone."))
    async with editor(project, *MODEL) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        client.permission_answers = ["reject_once"]
        answer = await conn.prompt(session_id=sid, prompt=[text_block("overwrite keep.txt")])
        assert answer.stop_reason == "end_turn"
        assert client.text(sid) == "Understood, I left it alone."
        end = client.of(sid, "tool_call_update")[-1]
        assert end.status == "failed"
    assert target.read_text() == "original\n"
    assert len(loopback.requests) == 2  # the model heard of the refusal and answered
    assert "denied" in str(loopback.requests[1].json["messages"][-1]).lower()


async def test_an_answer_that_was_not_offered_refuses_the_call_and_says_so(project: Path, models,
                                                                          loopback) -> None:
    loopback.push(tool_call_answer("write", {"path": "new.txt", "content": "text\n"}), text_answer("unreached"))
    async with editor(project, *MODEL) as (conn, client, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        client.permission_answers = ["yes-please"]  # no option has this id
        await conn.prompt(session_id=sid, prompt=[text_block("write new.txt")])
        assert "'yes-please', which was not one of the options offered" in client.text(sid)
        assert client.of(sid, "tool_call_update")[-1].status == "failed"
    assert not (project / "new.txt").exists()


async def test_edit_goes_through_the_editors_buffer(project: Path, models, loopback) -> None:
    target = project / "app.py"
    target.write_text("value = 'disk'\n")
    loopback.push(tool_call_answer("read", {"path": "app.py"}),
                  tool_call_answer("edit", {"path": "app.py", "edits": [{"old_text": "buffer", "new_text": "edited"}]},
                                   call_id="call_2"),
                  text_answer("Done."))
    async with editor(project, *MODEL, "--permission-mode", "accept-edits", fs=True) as (conn, client, _):
        client.buffers[str(target)] = "value = 'buffer'  # unsaved\n"
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        assert (await conn.prompt(session_id=sid, prompt=[text_block("fix app.py")])).stop_reason == "end_turn"
        read_result = client.of(sid, "tool_call_update")[0]
        assert "buffer" in read_result.content[0].content.text and "disk" not in read_result.content[0].content.text
        assert client.fs_writes == [(str(target), "value = 'edited'  # unsaved\n")]
        [diff] = [c for c in client.of(sid, "tool_call_update")[-1].content if c.type == "diff"]
        assert diff.old_text == "value = 'buffer'  # unsaved\n" and diff.new_text == "value = 'edited'  # unsaved\n"
    assert target.read_text() == "value = 'disk'\n"  # the editor saves when the user says so
    assert str(target) in client.fs_reads


async def test_bash_runs_in_the_editors_terminal(project: Path, models, loopback) -> None:
    loopback.push(tool_call_answer("bash", {"command": "echo from-the-terminal"}), text_answer("Ran it."))
    async with editor(project, *MODEL, "--permission-mode", "yolo", terminal=True) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        assert (await conn.prompt(session_id=sid, prompt=[text_block("run it")])).stop_reason == "end_turn"
        [terminal] = client.terminals.values()
        assert terminal["command"][-1] == "echo from-the-terminal" and terminal.get("released")
        embedded = [c for u in client.of(sid, "tool_call_update") for c in (u.content or []) if c.type == "terminal"]
        assert embedded and embedded[0].terminal_id == "term-1"
        end = client.of(sid, "tool_call_update")[-1]
        assert end.status == "completed" and "from-the-terminal" in end.raw_output["content"]
    assert "from-the-terminal" in str(loopback.requests[1].json["messages"][-1])



async def test_loading_a_session_while_its_command_waits_still_shows_the_terminal(project: Path, models,
                                                                                 loopback) -> None:
    loopback.push(tool_call_answer("bash", {"command": "echo from-the-terminal"}), text_answer("Ran it."))
    async with editor(project, *MODEL, terminal=True) as (conn, client, _):
        sid = (await conn.new_session(cwd=str(project), mcp_servers=[])).session_id
        client.hold_permission = asyncio.Event()
        client.permission_answers = ["allow_once"]
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("run it")]))
        await wait_until(lambda: bool(client.permission_requests), 20, "the permission question")
        # The editor opens the thread again (a second window) while the command waits for consent:
        # replaying the history must not make Wolli forget the call that is still running.
        await conn.load_session(cwd=str(project), session_id=sid, mcp_servers=[])
        client.hold_permission.set()
        assert (await asyncio.wait_for(turn, 20)).stop_reason == "end_turn"
        assert client.terminals
        embedded = [c for u in client.of(sid, "tool_call_update") for c in (u.content or []) if c.type == "terminal"]
        assert embedded and embedded[0].terminal_id == "term-1"

EXTENSION = '''
def extension(wolli):
    async def greet(args, ctx):
        color = await ctx.ui.select("Colour?", ["red", {"label": "Blue", "value": "b"}])
        ok = await ctx.ui.confirm("Greet?", "say hello to " + args)
        name = await ctx.ui.input("Name?")
        ctx.ui.notify(f"greeted {args}: {ok} in {ctx.mode}, colour {color}, input {name}")

    wolli.register_command("greet", handler=greet, description="Greets after asking")
'''


async def test_slash_commands_are_listed_and_run(project: Path, models, loopback, wolli_home: Path) -> None:
    (project / ".wolli").mkdir()
    prompts = wolli_home / "agents" / "default" / "prompts"
    prompts.mkdir(parents=True)
    (prompts / "review.md").write_text("---\ndescription: Review the change\n---\nPlease review $ARGUMENTS carefully.\n")
    extension = project / "greet_ext.py"
    extension.write_text(EXTENSION)
    loopback.push(text_answer("Reviewed."))
    async with editor(project, *MODEL, "-e", str(extension)) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        [listed] = await client.wait_for(sid, "available_commands_update")
        names = {c.name for c in listed.available_commands}
        assert {"greet", "review", "model", "session", "compact", "permissions"} <= names
        assert not names & {"quit", "new", "resume", "login", "copy"}
        client.permission_answers = ["1", "yes"]
        assert (await conn.prompt(session_id=sid, prompt=[text_block("/greet world")])).stop_reason == "end_turn"
        assert "greeted world: True in acp, colour b, input None" in client.text(sid)
        (select_call, select_options), (confirm_call, _) = client.permission_requests
        assert select_call.title == "Colour?" and [o.name for o in select_options] == ["red", "Blue", "Cancel"]
        assert confirm_call.title == "Greet?" and "say hello to world" in confirm_call.content[0].content.text
        assert (await conn.prompt(session_id=sid, prompt=[text_block("/review main.py")])).stop_reason == "end_turn"
        assert "Please review main.py carefully." in str(loopback.requests[0].json["messages"][-1])
        assert (await conn.prompt(session_id=sid, prompt=[text_block("/session")])).stop_reason == "end_turn"
        assert sid in client.text(sid)


async def test_modes_and_config_options(project: Path, models, loopback) -> None:
    async with editor(project, *MODEL) as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        ids = {o.id for o in session.config_options}
        assert {"mode", "model"} <= ids
        await conn.set_session_mode(session_id=sid, mode_id="plan")
        [update] = await client.wait_for(sid, "current_mode_update")
        assert update.current_mode_id == "plan"
        answer = await conn.set_config_option(config_id="model", session_id=sid, value="local/local-thinker")
        model = next(o for o in answer.config_options if o.id == "model")
        assert model.current_value == "local/local-thinker"
        assert any(o.id == "thought_level" for o in answer.config_options)  # a reasoning model
        answer = await conn.set_config_option(config_id="thought_level", session_id=sid, value="high")
        assert next(o for o in answer.config_options if o.id == "thought_level").current_value == "high"


THREADED = '''
def extension(wolli):
    def threaded(tool_call_id, params, signal, on_update, ctx):  # sync: runs in a worker thread
        import asyncio

        ok = asyncio.run(ctx.ui.confirm("From a thread?"))
        return {"content": [{"type": "text", "text": f"thread confirmed={ok}"}]}

    wolli.register_tool({"name": "threaded", "description": "Asks from a worker thread",
                         "parameters": {"type": "object", "properties": {}}, "execute": threaded})
'''


async def test_a_question_from_a_tools_worker_thread_reaches_the_editor(project: Path, models, loopback,
                                                                         tmp_path: Path) -> None:
    extension = tmp_path / "threaded.py"
    extension.write_text(THREADED)
    loopback.push(tool_call_answer("threaded", {}), text_answer("Asked."))
    async with editor(project, *MODEL, "-e", str(extension), "--permission-mode", "yolo") as (conn, client, _):
        session = await conn.new_session(cwd=str(project), mcp_servers=[])
        sid = session.session_id
        client.permission_answers = ["yes"]
        assert (await conn.prompt(session_id=sid, prompt=[text_block("ask")])).stop_reason == "end_turn"
        [(call, _)] = client.permission_requests
        assert call.title == "From a thread?"
        assert "thread confirmed=True" in client.of(sid, "tool_call_update")[-1].raw_output["content"]
