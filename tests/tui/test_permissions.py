"""The safety net in the full-screen app (Pilot): the permission dialog and its answers,
modes by key and command with the footer, plan mode, and /rewind (Esc Esc)."""

from __future__ import annotations

from textual.widgets import Input

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_tool_call
from wolli.modes.tui.screens.permission_dialog import PermissionDialog
from wolli.modes.tui.screens.select_dialog import SelectDialog

from .helpers import idle_after, running, type_and_send

EDIT = {"path": "calc.py", "edits": [{"old_text": "a - b", "new_text": "a + b"}]}


def _project_file(project) -> None:
    (project / "calc.py").write_text("def add(a, b):\n    return a - b\n")


async def _asked(app) -> PermissionDialog:
    await wait_until(lambda: isinstance(app.screen, PermissionDialog), 5, "the permission dialog")
    return app.screen


def _tool_results(faux) -> list[str]:
    return [m.content[0].text for m in faux.contexts[-1].messages if getattr(m, "role", None) == "toolResult"]


async def test_allow_once_runs_the_call_and_the_next_one_asks_again(make_app, faux, project):
    _project_file(project)
    app = make_app(permission_mode="default")
    async with running(app) as pilot:
        faux.push([faux_tool_call("edit", EDIT)], "fixed")
        await type_and_send(pilot, "fix it")
        dialog = await _asked(app)
        assert "a - b" in str(dialog.detail.render()) and "calc.py" in dialog.title_text
        await pilot.press("y")
        await idle_after(app, pilot, 4)
        assert "a + b" in (project / "calc.py").read_text()
        faux.push([faux_tool_call("bash", {"command": "touch made"})], "ok")
        await type_and_send(pilot, "touch it")
        await _asked(app)
        await pilot.press("escape")  # Esc denies and stops the turn
        await idle_after(app, pilot, 7)
        assert not (project / "made").exists()
        last = app.controller.session.messages[-1]
        assert last.role == "toolResult" and "denied" in last.content[0].text


async def test_allow_always_saves_the_edited_rule_and_stops_asking(make_app, faux, project, wolli_home):
    app = make_app(permission_mode="default")
    async with running(app) as pilot:
        faux.push([faux_tool_call("bash", {"command": "git diff --stat HEAD"})], "first")
        await type_and_send(pilot, "diff")
        dialog = await _asked(app)
        assert dialog.rule_field.value == "Bash(git diff:*)"
        dialog.rule_field.focus()
        dialog.rule_field.value = "Bash(git:*)"  # the user widens it on purpose
        await pilot.press("enter")  # Enter in the rule field: allow always
        await idle_after(app, pilot, 4)
        rules = app.controller.session.permissions.rules
        assert [str(r.rule) for r in rules.allow] == ["Bash(git:*)"]
        faux.push([faux_tool_call("bash", {"command": "git log -1"})], "second")
        await type_and_send(pilot, "log")
        await idle_after(app, pilot, 8)
        assert not isinstance(app.screen, PermissionDialog)
    saved = list((wolli_home / "agents" / "default" / "permissions").glob("*.json"))
    assert len(saved) == 1 and "Bash(git:*)" in saved[0].read_text()


async def test_deny_with_a_message_tells_the_model_and_the_turn_goes_on(make_app, faux, project):
    _project_file(project)
    app = make_app(permission_mode="default")
    async with running(app) as pilot:
        faux.push([faux_tool_call("edit", EDIT)], "understood")
        await type_and_send(pilot, "fix it")
        await _asked(app)
        await pilot.press("m")
        await wait_until(lambda: isinstance(app.focused, Input) and app.focused.id == "permission-message", 5,
                         "the message field")
        await pilot.press(*"write a test first", "enter")
        await idle_after(app, pilot, 4)
        assert "a - b" in (project / "calc.py").read_text()
        assert "write a test first" in _tool_results(faux)[-1]
        assert app.controller.session.messages[-1].content[0].text == "understood"


async def test_alt_m_cycles_the_mode_and_the_footer_shows_it(make_app):
    app = make_app(permission_mode="default")
    async with running(app) as pilot:
        assert "accept edits" not in str(app.footer.render_text())
        await pilot.press("alt+m")
        await wait_until(lambda: app.controller.session.permissions.mode == "accept-edits", 5, "accept-edits")
        await pilot.pause()
        assert "accept edits" in str(app.footer.render_text())
        await pilot.press("alt+m")
        await wait_until(lambda: app.controller.session.permissions.mode == "plan", 5, "plan")
        await pilot.pause()
        assert "plan mode" in str(app.footer.render_text())
        await pilot.press("alt+m")
        await wait_until(lambda: app.controller.session.permissions.mode == "default", 5, "back to default")


async def test_plan_mode_refuses_edits_without_asking_and_leaving_it_is_a_command(make_app, faux, project):
    _project_file(project)
    app = make_app(permission_mode="default")
    async with running(app) as pilot:
        await type_and_send(pilot, "/plan")
        await wait_until(lambda: app.controller.session.permissions.mode == "plan", 5, "plan mode")
        faux.push([faux_tool_call("edit", EDIT)], "Here is the plan.")
        await type_and_send(pilot, "plan the fix")
        await idle_after(app, pilot, 4)
        assert "a - b" in (project / "calc.py").read_text() and not isinstance(app.screen, PermissionDialog)
        assert "plan mode" in _tool_results(faux)[-1]
        assert "The session is in plan mode" in faux.contexts[-1].system_prompt
        await type_and_send(pilot, "/permissions accept-edits")
        await wait_until(lambda: app.controller.session.permissions.mode == "accept-edits", 5, "accept-edits")
        faux.push([faux_tool_call("edit", EDIT)], "done")
        await type_and_send(pilot, "go ahead")
        await idle_after(app, pilot, 8)
        assert "a + b" in (project / "calc.py").read_text()
        sent = " ".join(str(getattr(m, "content", "")) for m in faux.contexts[-1].messages)
        assert "left plan mode" in sent  # the model is told the planning is over


async def test_escape_twice_opens_rewind_and_restores_code_and_conversation(make_app, faux, project):
    _project_file(project)
    app = make_app()  # yolo: the edit runs without a question
    async with running(app) as pilot:
        faux.push([faux_tool_call("edit", EDIT)], "fixed")
        await type_and_send(pilot, "fix the bug")
        await idle_after(app, pilot, 4)
        assert "a + b" in (project / "calc.py").read_text()
        await pilot.press("escape", "escape")
        await wait_until(lambda: isinstance(app.screen, SelectDialog), 5, "the rewind points")
        assert "fix the bug" in app.screen.options[0] and "calc.py" in app.screen.options[0]
        await pilot.press("enter")
        await wait_until(lambda: isinstance(app.screen, SelectDialog) and app.screen.title_text == "Restore what?", 5,
                         "what to restore")
        await pilot.press("enter")  # code and conversation
        await wait_until(lambda: app.editor.text == "fix the bug", 5, "the message back in the editor")
        assert "a - b" in (project / "calc.py").read_text()
        assert [m.role for m in app.controller.session.messages] == []


async def test_in_a_short_terminal_the_permission_answers_stay_on_screen(make_app, faux, project):
    # 60x15: the title, the reason and a long call fill the box; the answers must still be
    # on screen, or the user cannot tell what y, a, n, m and d do.
    app = make_app(permission_mode="default")
    async with running(app, (60, 15)) as pilot:
        faux.push([faux_tool_call("bash", {"command": "echo " + "long-argument-" * 20})], "done")
        await type_and_send(pilot, "run it")
        await _asked(app)
        await pilot.pause()
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "y  Allow once" in screen, screen
        await pilot.press("down")
        await pilot.pause()
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "a  Allow always" in screen, screen


async def test_a_terminal_made_short_while_it_asks_keeps_the_answers_on_screen(make_app, faux, project):
    app = make_app(permission_mode="default")
    async with running(app, (120, 40)) as pilot:
        faux.push([faux_tool_call("bash", {"command": "echo " + "long-argument-" * 20})], "done")
        await type_and_send(pilot, "run it")
        await _asked(app)
        await pilot.resize_terminal(60, 15)
        await pilot.pause()
        await pilot.pause()
        screen = "\n".join(strip.text for strip in app.screen._compositor.render_strips())
        assert "y  Allow once" in screen, screen
