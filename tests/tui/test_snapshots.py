"""SVG snapshots of the main screen, a tool row with a diff, each dialog and both themes.

Regenerate after an intended change of look: ``pytest tests/tui/test_snapshots.py
--snapshot-update`` and review the SVGs. The project lives under the (temporary) home
so the footer reads ``~/project``; no clock or spinner is on screen; the cursor does not blink.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_tool_call
from wolli.modes.tui.screens.dialog_base import TimedDialog

from .helpers import idle_after, ready, type_and_send

SIZE = (90, 28)


@pytest.fixture
def home_project(monkeypatch) -> Path:
    folder = Path(os.environ["HOME"]) / "project"
    folder.mkdir(exist_ok=True)
    return folder


@pytest.fixture
def snap_app(make_app, home_project, wolli_home):
    # The start-up summary names the version, which changes; the snapshots leave it out.
    agent = wolli_home / "agents" / "default"
    agent.mkdir(parents=True, exist_ok=True)
    (agent / "settings.json").write_text('{"quietStartup": true}')

    def build(**request):
        request.setdefault("permission_mode", "default")  # the look out of the box (no mode badge)
        app = make_app(cwd=str(home_project), **request)
        app.editor.cursor_blink = False
        return app

    return build


async def _settle(app, pilot) -> None:
    await ready(app)
    await pilot.pause()


def test_main_screen_after_an_answer(snap_compare, snap_app, faux):
    app = snap_app()

    async def run_before(pilot):
        await _settle(app, pilot)
        faux.push("Sure. Here is the plan:\n\n1. Read `app.py`\n2. Fix the bug\n\n```python\ndef add(a, b):\n    return a + b\n```")
        await type_and_send(pilot, "fix add() please")
        await idle_after(app, pilot, 2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_tool_row_with_a_diff(snap_compare, snap_app, faux, home_project):
    (home_project / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    app = snap_app(allowed_tools=["Edit(calc.py)"])

    async def run_before(pilot):
        await _settle(app, pilot)
        faux.push([faux_tool_call("edit", {"path": "calc.py", "edits": [
            {"old_text": "return a - b", "new_text": "return a + b"}]})], "Fixed.")
        await type_and_send(pilot, "fix it")
        await idle_after(app, pilot, 4)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def _dialog_snapshot(snap_compare, app, ask):
    async def run_before(pilot):
        await _settle(app, pilot)
        asyncio.ensure_future(ask(app.ui))
        await wait_until(lambda: isinstance(app.screen, TimedDialog), 5, "the dialog")
        await pilot.pause()

    return snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_confirm_dialog(snap_compare, snap_app):
    assert _dialog_snapshot(snap_compare, snap_app(), lambda ui: ui.confirm("Dangerous command", "Allow rm -rf build?"))


def test_select_dialog(snap_compare, snap_app):
    assert _dialog_snapshot(snap_compare, snap_app(), lambda ui: ui.select("Pick a model", ["fast", "smart", "cheap"]))


def test_input_dialog(snap_compare, snap_app):
    assert _dialog_snapshot(snap_compare, snap_app(), lambda ui: ui.input("Branch name", "feature/..."))


def test_editor_dialog(snap_compare, snap_app):
    assert _dialog_snapshot(snap_compare, snap_app(), lambda ui: ui.editor("Commit message", "Fix add()\n\nIt subtracted."))


def test_permission_dialog(snap_compare, snap_app, home_project):
    from wolli.permissions.prompt import PermissionRequest, describe_call, standard_options

    call = describe_call("call-1", "bash", {"command": "git diff --stat && pytest -q tests/test_calc.py"},
                         str(home_project))
    rules = ("Bash(git diff:*)", "Bash(pytest:*)")
    request = PermissionRequest(call, "default mode asks before shell commands", rules, standard_options(rules))
    assert _dialog_snapshot(snap_compare, snap_app(), lambda ui: ui.ask_permission(request))


def test_plan_mode_in_the_footer(snap_compare, snap_app):
    assert _dialog_snapshot_free(snap_compare, snap_app(permission_mode="plan"))


def _dialog_snapshot_free(snap_compare, app):
    async def run_before(pilot):
        await _settle(app, pilot)

    return snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_light_theme(snap_compare, snap_app, faux, wolli_home):
    app = snap_app()

    async def run_before(pilot):
        await _settle(app, pilot)
        app.ui.set_theme("light")
        faux.push("Light and **readable**.")
        await type_and_send(pilot, "hello")
        await idle_after(app, pilot, 2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_thinking_then_an_answer(snap_compare, snap_app, faux):
    from wolli.ai.providers.faux import faux_text, faux_thinking

    app = snap_app()

    async def run_before(pilot):
        await _settle(app, pilot)
        faux.push([faux_thinking("The user wants a haiku about tests. " * 4 + "\nKeep it short."),
                   faux_text("Green bar at dawn")])
        await type_and_send(pilot, "a haiku please")
        await idle_after(app, pilot, 2)

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_tree_picker_with_a_fork(snap_compare, snap_app, faux):
    from wolli.modes.tui.screens.tree_picker import TreePicker

    app = snap_app()

    async def run_before(pilot):
        await _settle(app, pilot)
        faux.push("Parsed the config.", "Tried approach A.", "Tried approach B.")
        for count, text in ((2, "read the config"), (4, "try approach A")):
            await type_and_send(pilot, text)
            await idle_after(app, pilot, count)
        session = app.controller.session
        first_answer = next(e for e in session.session_manager.get_branch()
                            if e.type == "message" and e.message.role == "assistant")
        await session.navigate_tree(first_answer.id)  # back to the first answer
        await type_and_send(pilot, "try approach B")
        await wait_until(lambda: len(session.messages) == 4 and session.is_idle(), 5, "the second branch")
        await type_and_send(pilot, "/tree")
        await wait_until(lambda: isinstance(app.screen, TreePicker) and app.screen.values, 5, "the tree")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


def test_model_picker(snap_compare, snap_app, wolli_home):
    from wolli.modes.tui.screens.model_picker import ModelPicker

    from .test_commands import two_models

    two_models(wolli_home)
    app = snap_app()

    async def run_before(pilot):
        await _settle(app, pilot)
        await type_and_send(pilot, "/model")
        await wait_until(lambda: isinstance(app.screen, ModelPicker) and app.screen.values, 5, "the picker")
        await pilot.pause()

    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)
