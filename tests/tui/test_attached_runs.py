"""The attached app joining a run in progress (Pilot, a real ``wolli serve``): a tool call
that is running when the app attaches shows as running, then finishes there."""

from __future__ import annotations

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.serve import records_until, settled
from tests.support.waiting import wait_until
from wolli.modes.tui.widgets.tool_row import RUNNING, SUCCESS, ToolRow

from .helpers import attached_app

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
