"""Built-in commands of the app attached to ``wolli serve`` that change the server's session
(Pilot, a real server process, the model scripted on a loopback server): /fork, /clone,
/rewind, /export, /plan, /permissions. Each does what its standalone twin does, on the server."""

from __future__ import annotations

from pathlib import Path

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.serve import records_until, settled
from tests.support.waiting import wait_until
from wolli.modes.tui.screens.select_dialog import SelectDialog

from .helpers import attached_app, type_and_send


def _prompt(client, text: str) -> None:
    client.call({"type": "prompt", "message": text})
    records_until(client, settled)


def _attached(server, session_id: str, project: Path, wolli_home: Path):
    return attached_app(server.socket_path, session_id, project, wolli_home / "agents" / "default")


def _two_turns(server, loopback, questions: tuple[str, str], answers: tuple[str, str]):
    """Another client's session on the server, with two questions answered: (client, id)."""
    other = server.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    loopback.push(*(text_answer(a) for a in answers))
    for question in questions:
        _prompt(other, question)
    return other, session_id


async def test_fork_moves_this_client_to_a_new_session_and_refills_the_editor(serve_process, project, wolli_home, loopback):
    other, session_id = _two_turns(serve_process, loopback, ("first question", "second question"), ("one", "two"))
    app = _attached(serve_process, session_id, project, wolli_home)
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        await type_and_send(pilot, "/fork")
        await wait_until(lambda: len(app.screen_stack) > 1, 10, "the fork choice")
        await pilot.press("enter")  # the newest message is listed first
        await wait_until(lambda: app.controller.session.session_id != session_id, 10, "the forked session")
        await wait_until(lambda: app.editor.text == "second question", 10, "the message back in the editor")
        assert [m.role for m in app.controller.session.messages] == ["user", "assistant"]
    assert other.call({"type": "get_state"})["sessionId"] == session_id  # the other client stayed


async def test_rewind_restores_the_file_and_the_conversation_on_the_server(serve_process, project, wolli_home, loopback):
    target = project / "notes.txt"
    target.write_text("before\n")
    other = serve_process.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    other.call({"type": "set_permission_mode", "mode": "accept-edits"})
    loopback.push(tool_call_answer("write", {"path": "notes.txt", "content": "after\n"}), text_answer("written"))
    _prompt(other, "change the notes")
    assert target.read_text() == "after\n"
    app = _attached(serve_process, session_id, project, wolli_home)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        await pilot.press("escape", "escape")  # as standalone: Esc twice on an empty editor
        await wait_until(lambda: isinstance(app.screen, SelectDialog), 10, "the rewind points")
        assert "change the notes" in app.screen.options[0] and "notes.txt" in app.screen.options[0]
        await pilot.press("enter")  # before "change the notes"
        await wait_until(lambda: isinstance(app.screen, SelectDialog) and app.screen.title_text == "Restore what?", 10,
                         "what to restore")
        await pilot.press("enter")  # code and conversation
        await wait_until(lambda: target.read_text() == "before\n", 10, "the file restored")
        await wait_until(lambda: app.editor.text == "change the notes", 10, "the message back in the editor")
        await wait_until(lambda: app.controller.session.messages == [], 10, "the conversation rewound")
    assert other.call({"type": "get_messages"})["messages"] == []


async def test_export_plan_and_permissions_act_on_the_server(serve_process, project, wolli_home, loopback):
    other = serve_process.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    loopback.push(text_answer("an answer to export"))
    _prompt(other, "a question")
    app = _attached(serve_process, session_id, project, wolli_home)
    notices: list[str] = []
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        front = app.front
        notify = front.notify
        front.notify = lambda text, level="info": (notices.append(text), notify(text, level))[1]  # type: ignore[method-assign]

        await type_and_send(pilot, "/export out.html")
        await wait_until(lambda: (project / "out.html").exists(), 10, "the export")
        assert "an answer to export" in (project / "out.html").read_text()
        assert any("out.html" in n for n in notices)

        before = other.call({"type": "get_state"})["permissionMode"]
        await type_and_send(pilot, "/plan")
        await wait_until(lambda: other.call({"type": "get_state"})["permissionMode"] == "plan", 10, "plan mode")
        await type_and_send(pilot, "/plan")  # again: back to the mode before
        await wait_until(lambda: other.call({"type": "get_state"})["permissionMode"] == before != "plan", 10, "back")

        await type_and_send(pilot, "/permissions deny Bash(rm *) session")
        await wait_until(lambda: any(r["rule"] == "Bash(rm *)" and r["kind"] == "deny"
                                     for r in other.call({"type": "get_permissions"})["rules"]), 10, "the rule")
        await type_and_send(pilot, "/permissions remove deny Bash(rm *) session")
        await wait_until(lambda: not any(r["rule"] == "Bash(rm *)"
                                         for r in other.call({"type": "get_permissions"})["rules"]), 10, "removed")


async def test_reload_reloads_the_servers_extensions(serve_with, project, wolli_home):
    server = serve_with(greeter=GREETER.format(name="hello"))
    session_id = server.client().call({"type": "attach", "new": True})["sessionId"]
    app = _attached(server, session_id, project, wolli_home)
    notices: list[str] = []
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        names = lambda: {e.name for e in app.controller.command_entries()}  # noqa: E731
        await wait_until(lambda: "hello" in names(), 10, "the extension's command")
        notify = app.front.notify
        app.front.notify = lambda text, level="info": (notices.append(text), notify(text, level))[1]  # type: ignore[method-assign]
        (project.parent / "greeter.py").write_text(GREETER.format(name="goodbye"))
        await type_and_send(pilot, "/reload")
        await wait_until(lambda: "goodbye" in names() and "hello" not in names(), 10, "the new command")
        assert any(n.startswith("Reloaded: 1 extension loaded") for n in notices)


GREETER = '''
def extension(wolli):
    async def greet(args, ctx):
        ctx.ui.notify("hi")
    wolli.register_command("{name}", handler=greet, description="say hi")
'''


async def test_mcp_drives_the_servers_mcp_servers(serve_with, project, wolli_home):
    from tests.mcp.conftest import python_server
    from tests.mcp.helpers import agent_config
    from wolli.modes.tui.widgets.simple_messages import InfoView

    from .test_mcp import _pick

    agent_config(wolli_home, {"time": python_server("mcp-server-time")})
    server = serve_with()
    other = server.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]

    def time_server() -> dict:
        found = [s for s in other.call({"type": "get_mcp_servers"})["servers"] if s["name"] == "time"]
        return found[0] if found else {}

    app = _attached(server, session_id, project, wolli_home)
    async with app.run_test(size=(110, 32)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set() and time_server().get("state") == "ready", 60,
                         "the server's MCP server ready")
        await type_and_send(pilot, "/mcp")
        labels = await _pick(app, pilot, "MCP servers", "time")
        assert labels[0] == "time — ready, 2 tools"
        await _pick(app, pilot, "time", "tools")
        await _pick(app, pilot, "time: switch a tool on or off", "on  convert_time")
        await wait_until(lambda: not next(t for t in time_server()["tools"] if t["name"] == "convert_time")["enabled"],
                         10, "the tool switched off on the server")
        await type_and_send(pilot, "/mcp list")
        await wait_until(lambda: any("(off: convert_time)" in str(v.render()) for v in app.query(InfoView)), 10,
                         "the report")
        await type_and_send(pilot, "/mcp log time")
        await wait_until(lambda: any("MCP server time: log" in str(v.border_title or "") for v in app.query(InfoView)),
                         10, "the log")


async def test_extensions_lists_and_switches_the_servers_extensions(serve_with, project, wolli_home):
    from wolli.modes.tui.widgets.simple_messages import InfoView

    server = serve_with(greeter=GREETER.format(name="hello"))
    session_id = server.client().call({"type": "attach", "new": True})["sessionId"]
    app = _attached(server, session_id, project, wolli_home)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(lambda: "hello" in {e.name for e in app.controller.command_entries()}, 20, "the attach")
        await type_and_send(pilot, "/extensions")
        await wait_until(lambda: any("greeter (extension, loaded)" in str(v.render()) for v in app.query(InfoView)),
                         10, "the report")
        await type_and_send(pilot, "/extensions disable greeter")
        await wait_until(lambda: "hello" not in {e.name for e in app.controller.command_entries()}, 10,
                         "the command gone")
        await type_and_send(pilot, "/extensions enable greeter")
        await wait_until(lambda: "hello" in {e.name for e in app.controller.command_entries()}, 10, "back")


async def test_agents_lists_and_approves_the_projects_subagents_on_the_server(serve_with, project, wolli_home):
    from tests.support.subagents import write_definition
    from wolli.modes.tui.widgets.simple_messages import InfoView

    write_definition(project / ".claude" / "agents", "reviewer", "Review the change.")
    serve_process = serve_with()
    other = serve_process.client()
    session_id = other.call({"type": "attach", "new": True, "cwd": str(project)})["sessionId"]
    app = _attached(serve_process, session_id, project, wolli_home)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        await type_and_send(pilot, "/agents")
        await wait_until(lambda: any("reviewer" in str(v.render()) and "waiting for approval" in str(v.render())
                                     for v in app.query(InfoView)), 10, "the list")
        await type_and_send(pilot, "/agents approve")
        await wait_until(lambda: any(r["name"] == "reviewer" for r in other.call({"type": "get_subagents"})["subagents"]),
                         10, "the project's subagent offered")
        assert other.call({"type": "get_subagents"})["project"] is None


async def test_tree_moves_the_servers_session_and_labels_its_entries(serve_process, project, wolli_home, loopback):
    from wolli.modes.tui.screens.tree_picker import TreePicker

    other, session_id = _two_turns(serve_process, loopback, ("question one", "question two"),
                                   ("answer one", "answer two"))
    app = _attached(serve_process, session_id, project, wolli_home)
    async with app.run_test(size=(110, 34)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        await type_and_send(pilot, "/tree")
        await wait_until(lambda: isinstance(app.screen, TreePicker), 10, "the tree")
        picker = app.screen
        assert [row.text for row in picker.tree_rows] == ["question one", "answer one", "question two", "answer two"]
        assert picker.tree_rows[picker.results.highlighted].is_leaf
        await pilot.press("up")  # "question two"
        await pilot.press("ctrl+l")
        await wait_until(lambda: len(app.screen_stack) > 2, 10, "the label input")
        await pilot.press(*"retry here", "enter")
        await wait_until(lambda: any(e.get("label") == "retry here" for e in other.call({"type": "get_tree"})["entries"]),
                         10, "the label saved on the server")
        await pilot.press("enter")  # go to before "question two"
        await wait_until(lambda: isinstance(app.screen, SelectDialog), 10, "the summary question")
        await pilot.press("enter")  # no summary
        await wait_until(lambda: app.editor.text == "question two", 10, "the message back in the editor")
        await wait_until(lambda: [m.role for m in app.controller.session.messages] == ["user", "assistant"], 10,
                         "the transcript moved")
    assert [m["role"] for m in other.call({"type": "get_messages"})["messages"]] == ["user", "assistant"]


async def test_settings_edits_the_servers_settings_and_applies_here(serve_process, project, wolli_home):
    import json

    from wolli.modes.tui.screens.settings_form import SettingsForm

    other = serve_process.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    app = _attached(serve_process, session_id, project, wolli_home)
    async with app.run_test(size=(120, 45)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        await type_and_send(pilot, "/settings")
        await wait_until(lambda: isinstance(app.screen, SettingsForm), 10, "the settings form")
        app.screen.inputs["retry.maxRetries"].value = "7"
        app.screen.inputs["hideThinkingBlock"].value = True
        await pilot.press("ctrl+s")
        await wait_until(lambda: not isinstance(app.screen, SettingsForm), 10, "saved")
        await wait_until(lambda: other.call({"type": "get_settings"})["values"]["retry.maxRetries"] == 7, 10,
                         "the server's settings")
        saved = json.loads((wolli_home / "agents" / "default" / "settings.json").read_text())
        assert saved["retry"]["maxRetries"] == 7 and saved["hideThinkingBlock"] is True
        assert app.thinking_visible is False  # what applies to this app applied here


async def test_login_and_logout_store_a_key_on_the_server(serve_process, project, wolli_home):
    from wolli.modes.tui.screens.input_dialog import InputDialog

    other = serve_process.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    auth = Path(other.call({"type": "get_login_providers"})["path"])
    app = _attached(serve_process, session_id, project, wolli_home)
    async with app.run_test(size=(110, 30)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        await type_and_send(pilot, "/login openai")
        await wait_until(lambda: isinstance(app.screen, InputDialog), 10, "the key's input")
        await pilot.press(*"sk-attached-secret", "enter")
        await wait_until(lambda: auth.exists() and "sk-attached-secret" in auth.read_text(), 10, "the key stored")
        assert "openai" in other.call({"type": "get_login_providers"})["stored"]
        await type_and_send(pilot, "/logout openai")
        await wait_until(lambda: "openai" not in other.call({"type": "get_login_providers"})["stored"], 10,
                         "the key removed")
        assert not any("sk-attached-secret" in str(n.render()) for n in app.query("NoticeView"))


async def test_the_servers_mcp_resources_complete_in_the_attached_app(serve_with, project, wolli_home):
    from tests.mcp.helpers import agent_config
    from tests.mcp.http_server import BearerServer

    bearer = BearerServer()
    try:
        agent_config(wolli_home, {"remote": {"type": "http", "url": bearer.url,
                                             "headers": {"Authorization": f"Bearer {bearer.token}"}}})
        server = serve_with()
        session_id = server.client().call({"type": "attach", "new": True})["sessionId"]
        app = _attached(server, session_id, project, wolli_home)
        async with app.run_test(size=(110, 30)):
            await wait_until(lambda: any(r["value"] == "@remote:memo://greeting" for r in app.controller.mcp_resources()),
                             30, "the server's MCP resource offered for completion")
            from wolli.modes.interactive.completion import suggestions

            line = "see @remote:me"
            found = await suggestions(app.completion.provider(), [line], 0, len(line))
            assert found is not None and any(item["value"] == "@remote:memo://greeting" for item in found["items"])
    finally:
        bearer.close()
