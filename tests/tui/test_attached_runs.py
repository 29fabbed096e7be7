"""The attached app joining a run in progress (Pilot, a real ``wolli serve``): a tool call
that is running when the app attaches shows as running, then finishes there."""

from __future__ import annotations

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.serve import records_until, settled
from tests.support.waiting import wait_until
from wolli.modes.tui.screens.select_dialog import SelectDialog
from wolli.modes.tui.widgets.simple_messages import InfoView, NoticeView
from wolli.modes.tui.widgets.tool_row import RUNNING, SUCCESS, ToolRow

from .helpers import attached_app, type_and_send

WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.05; done; echo went"


async def test_a_tool_running_at_attach_shows_running_then_done(serve_process, project, wolli_home, loopback):
    other = serve_process.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    loopback.push(tool_call_answer("bash", {"command": WAIT_FOR_GO}), text_answer("It went."))
    other.call({"type": "prompt", "message": "wait for go"})
    records_until(other, lambda r: r.get("type") == "tool_execution_start")
    app = attached_app(serve_process.socket_path, session_id, project, wolli_home / "agents" / "default")
    async with app.run_test(size=(100, 30)):
        await wait_until(lambda: app.controller.ready.is_set() and len(app.query(ToolRow)) == 1, 20, "the attach")
        row = app.query(ToolRow).first()
        assert row.state == RUNNING
        (project / "go").write_text("")
        await wait_until(lambda: row.state == SUCCESS, 20, "the tool to end")
        assert "went" in str(row.result.content[0].text)
    records_until(other, settled)


MARKER = '''
def extension(wolli):
    async def mark(args, ctx):
        ctx.ui.set_status("build", "[b]uild ok")
        ctx.ui.set_widget("todo", ["1. attach", "2. look"])
    wolli.register_command("mark", handler=mark, description="leave a status and a widget")
'''


async def test_statuses_and_widgets_of_the_servers_extensions_show_and_go(serve_with, project, wolli_home):
    server = serve_with(marker=MARKER)
    other = server.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    other.call({"type": "prompt", "message": "/mark"})  # set before the app attaches
    records_until(other, lambda r: r.get("method") == "setWidget")
    app = attached_app(server.socket_path, session_id, project, wolli_home / "agents" / "default")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(lambda: "todo" in app.slot_above.widgets, 20, "the widget")
        assert app.footer.data.statuses == {"build": "[b]uild ok"}  # kept literally
        assert "1. attach" in str(app.slot_above.widgets["todo"].render())
        await type_and_send(pilot, "/new")  # another session: what this one's extension left goes
        await wait_until(lambda: "todo" not in app.slot_above.widgets and not app.footer.data.statuses, 20,
                         "the status and widget gone")


SHORTCUTS = '''
def extension(wolli):
    async def pick(ctx):
        colour = await ctx.ui.select("Pick a colour", ["red", "green"])
        ctx.ui.notify(f"picked {colour}")

    def boom(ctx):
        raise ValueError("no plan yet")

    wolli.register_shortcut("alt+k", handler=pick, description="pick a colour")
    wolli.register_shortcut("alt+b", handler=boom, description="fails")
'''


async def test_the_servers_extension_shortcuts_run_from_the_attached_app(serve_with, project, wolli_home):
    server = serve_with(keys=SHORTCUTS)
    session_id = server.client().call({"type": "attach", "new": True})["sessionId"]
    app = attached_app(server.socket_path, session_id, project, wolli_home / "agents" / "default")

    def notices() -> list[str]:
        return [str(n.render()) for n in app.query(NoticeView)]

    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(lambda: app.controller.shortcut("alt+k") is not None, 20, "the server's shortcuts")
        await pilot.press("alt+k")  # its dialog opens here; the handler runs on the server
        await wait_until(lambda: isinstance(app.screen, SelectDialog), 10, "the dialog")
        await pilot.press("down", "enter")
        await wait_until(lambda: any("picked green" in n for n in notices()), 10, "the handler's notice")
        await pilot.press("alt+b")
        await wait_until(lambda: any("shortcut Alt+B failed: ValueError: no plan yet" in n for n in notices()), 10,
                         "the failure line")
        await type_and_send(pilot, "/hotkeys")
        await wait_until(lambda: app.query(InfoView), 10, "the keys")
        report = str(app.query(InfoView).last().render())
        assert "Alt+K" in report and "pick a colour  [keys]" in report


ASKERS = '''
def extension(wolli):
    def asker(title):
        async def ask(args, ctx):
            choice = await ctx.ui.select(title, ["red", "green"])
            ctx.ui.notify(f"{title}: {choice}")
        return ask
    wolli.register_command("first", handler=asker("First question"), description="ask")
    wolli.register_command("second", handler=asker("Second question"), description="ask")
'''


async def test_a_dialog_answered_elsewhere_under_another_closes_when_uncovered(serve_with, project, wolli_home):
    server = serve_with(askers=ASKERS)
    other = server.client()
    session_id = other.call({"type": "attach", "new": True})["sessionId"]
    app = attached_app(server.socket_path, session_id, project, wolli_home / "agents" / "default")
    async with app.run_test(size=(100, 30)) as pilot:
        await wait_until(lambda: app.controller.ready.is_set(), 20, "the attach")
        other.send({"type": "prompt", "message": "/first"})
        first = records_until(other, lambda r: r.get("method") == "select")[-1]
        await wait_until(lambda: isinstance(app.screen, SelectDialog), 10, "the first dialog")
        other.send({"type": "prompt", "message": "/second"})
        await wait_until(lambda: isinstance(app.screen, SelectDialog) and app.screen.title_text == "Second question",
                         10, "the second dialog on top")
        other.send({"type": "extension_ui_response", "id": first["id"], "value": "green"})  # answered elsewhere
        records_until(other, lambda r: r.get("type") == "extension_ui_closed" and r.get("id") == first["id"])
        await pilot.press("enter")  # the second, answered here: the first must not reappear
        await wait_until(lambda: not isinstance(app.screen, SelectDialog), 10, "both dialogs gone")
        seen = records_until(other, lambda r: r.get("method") == "notify" and "Second question" in r.get("message", ""))
        assert any(r.get("method") == "notify" and r.get("message") == "First question: green" for r in seen)
        assert seen[-1]["message"] == "Second question: red"
