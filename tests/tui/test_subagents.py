"""Subagents in the TUI (Pilot): running children as collapsible rows, and a resumed
session opening a child's session from /tree."""

from __future__ import annotations

from typing import Any

from tests.support.subagents import write_definition
from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_hang, faux_tool_call
from wolli.config import paths
from wolli.modes.tui.screens.tree_picker import TreePicker
from wolli.modes.tui.widgets.subagent_row import SubagentRow

from .helpers import idle_after, running, type_and_send


def _definitions() -> None:
    write_definition(paths.agent_home() / "subagents", "alpha", "You are ALPHA-MARKER.", tools="Read")
    write_definition(paths.agent_home() / "subagents", "beta", "You are BETA-MARKER.", tools="LS")


def _router(answers: dict[str, list[Any]]) -> Any:
    """A faux answer chosen by who asks (children run at once: their order is not fixed)."""

    def answer(context: Any, options: Any) -> Any:
        prompt = context.system_prompt or ""
        for marker, queue in answers.items():
            if marker in prompt:
                return queue.pop(0)
        return answers["parent"].pop(0)

    return answer


def _task(name: str, prompt: str) -> Any:
    return faux_tool_call("task", {"subagent_type": name, "description": f"{name} job", "prompt": prompt})


def _body(row: SubagentRow) -> str:
    return str(row.body.render())


async def test_running_children_are_rows_that_expand_to_their_transcript_and_stop_on_esc(make_app, faux, project):
    (project / "notes.txt").write_text("hello\n")
    _definitions()
    answers = {
        "parent": [[_task("alpha", "read the notes"), _task("beta", "list the folder")]],
        "ALPHA-MARKER": [[faux_tool_call("read", {"path": "notes.txt"})], faux_hang("alpha is writing its report")],
        "BETA-MARKER": [[faux_tool_call("ls", {})], faux_hang("beta is writing its report")],
    }
    faux.push(*([_router(answers)] * 5))
    app = make_app()
    async with running(app, size=(120, 40)) as pilot:
        await type_and_send(pilot, "send both")
        host = app.controller.host
        await wait_until(lambda: len(host.subagent_runs) == 2 and all(
            p.tool_calls == 1 and p.current_tool is None for p in host.subagent_runs.values()), 10, "both children")
        rows = {row.subagent: row for row in app.query(SubagentRow)}
        assert set(rows) == {"alpha", "beta"}
        # The rows redraw on their own timer: under load one can still say "running read" a
        # moment after the run's state moved on, so wait for the line the state calls for.
        await wait_until(lambda: all(f"↳ {name} · working · 1 tool calls ·" in _body(row) for name, row in rows.items()),
                         5, "the status lines")
        assert "read notes.txt" not in _body(rows["alpha"])  # collapsed: the status line only
        await pilot.click(SubagentRow, offset=(2, 0))  # the first row (alpha) expands
        await wait_until(lambda: "alpha › read notes.txt" in _body(rows["alpha"]), 5, "alpha's transcript")
        await wait_until(lambda: "│ alpha is writing its report" in _body(rows["alpha"]), 5, "alpha's answer, live")
        assert "beta ›" not in _body(rows["beta"])  # still collapsed
        await pilot.press("escape")
        await wait_until(lambda: app.controller.session.is_idle() and not host.subagent_runs, 10, "both stopped")
        await wait_until(lambda: all(r.state == "error" for r in rows.values()), 5, "rows finished")
        assert "↳ beta · failed" in _body(rows["beta"])


async def test_a_resumed_session_opens_a_childs_session_from_tree(make_app, faux, project):
    _definitions()
    faux.push(_task("alpha", "read the notes"), "alpha: the notes say hello", "The notes say hello.")
    first = make_app()
    async with running(first, size=(110, 34)) as pilot:
        await type_and_send(pilot, "ask alpha")
        await idle_after(first, pilot, 4)
        parent_file = first.controller.session.session_file
        child_id = first.controller.session.messages[2].details["sessionId"]
    app = make_app(session=parent_file)
    async with running(app, size=(110, 34)) as pilot:
        assert app.controller.session.session_file == parent_file
        await type_and_send(pilot, "/tree")
        await wait_until(lambda: isinstance(app.screen, TreePicker), 5, "the tree")
        picker = app.screen
        kinds = [row.kind for row in picker.tree_rows]
        assert "subagent" in kinds
        target = kinds.index("subagent")
        assert picker.tree_rows[target].text.startswith("↳ subagent alpha ok: alpha: the notes say hello")
        while picker.results.highlighted != target:
            await pilot.press("up")
        await pilot.press("enter")
        await wait_until(lambda: not isinstance(app.screen, TreePicker) and len(app.screen_stack) > 1, 5,
                         "the open-or-move question")
        await pilot.press("enter")  # "Open the session of subagent alpha"
        await wait_until(lambda: app.controller.session.session_id == child_id, 5, "the child's session")
        child = app.controller.session
        assert [m.role for m in child.messages] == ["user", "assistant"]
        assert child.messages[0].content == "read the notes"
        assert child.session_manager.get_header().subagent.name == "alpha"
