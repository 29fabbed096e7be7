"""Built-in slash commands in the TUI: each runs, its picker searches, selects and cancels."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.faux_home import FAUX_1, write_faux_models
from tests.support.waiting import wait_until
from wolli.ai.types import AssistantMessage, TextContent, UserMessage
from wolli.modes.tui.screens.model_picker import ModelPicker
from wolli.modes.tui.screens.session_picker import SessionPicker
from wolli.modes.tui.screens.settings_form import SettingsForm
from wolli.modes.tui.screens.tree_picker import TreePicker
from wolli.modes.tui.widgets.simple_messages import InfoView, NoticeView
from wolli.session.manager import SessionManager

from .helpers import idle_after, running, type_and_send


def notices(app) -> str:
    return "\n".join(str(n.render()) for n in app.query(NoticeView))


def infos(app) -> str:
    return "\n".join(str(n.render()) for n in app.query(InfoView))


async def on_screen(app, cls, what: str) -> None:
    await wait_until(lambda: isinstance(app.screen, cls), 5, what)


def two_models(wolli_home: Path) -> None:
    write_faux_models(wolli_home, FAUX_1, {"id": "faux-2", "name": "Second Faux", "contextWindow": 50000})


def saved_session(wolli_home: Path, cwd: Path, question: str, answer: str, name: str | None = None) -> str:
    manager = SessionManager.create(str(cwd), wolli_home / "agents" / "default" / "sessions")
    manager.append_message(UserMessage(content=question))
    manager.append_message(AssistantMessage(content=[TextContent(text=answer)], provider="faux", model="faux-1"))
    if name:
        manager.append_session_info(name)
    return str(manager.get_session_file())


# --------------------------------------------------------------------------- /model


async def test_model_picker_searches_selects_and_remembers_the_default(make_app, wolli_home):
    two_models(wolli_home)
    app = make_app()
    async with running(app, size=(100, 30)) as pilot:
        await type_and_send(pilot, "/model")
        await on_screen(app, ModelPicker, "the model picker")
        picker = app.screen
        assert [m.id for m in picker.values] == ["faux-1", "faux-2"]
        await pilot.press(*"second")
        assert [m.id for m in picker.values] == ["faux-2"]
        await pilot.press("enter")
        await wait_until(lambda: app.controller.session.model.id == "faux-2", 5, "the model switch")
        settings = json.loads((wolli_home / "agents" / "default" / "settings.json").read_text())
        assert settings["defaultModel"] == "faux-2"
        await wait_until(lambda: "faux/faux-2" in str(app.footer.render()) or app.footer.data.model == "faux/faux-2",
                         5, "the footer")


async def test_model_picker_cancel_keeps_the_model_and_an_exact_argument_skips_it(make_app, wolli_home):
    two_models(wolli_home)
    app = make_app()
    async with running(app, size=(100, 30)) as pilot:
        await pilot.press("ctrl+l")
        await on_screen(app, ModelPicker, "the model picker from Ctrl+L")
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, ModelPicker), 5, "the picker closed")
        assert app.controller.session.model.id == "faux-1"
        await type_and_send(pilot, "/model faux/faux-2")
        await wait_until(lambda: app.controller.session.model.id == "faux-2", 5, "the switch without a picker")
        assert not isinstance(app.screen, ModelPicker)


async def test_ctrl_p_cycles_the_scoped_models(make_app, wolli_home):
    two_models(wolli_home)
    (wolli_home / "agents" / "default").mkdir(parents=True, exist_ok=True)
    (wolli_home / "agents" / "default" / "settings.json").write_text(json.dumps({"enabledModels": ["faux/*"]}))
    app = make_app()
    async with running(app) as pilot:
        await pilot.press("ctrl+p")
        await wait_until(lambda: app.controller.session.model.id == "faux-2", 5, "the next model")
        await pilot.press("ctrl+p")
        await wait_until(lambda: app.controller.session.model.id == "faux-1", 5, "round to the first")


async def test_shift_tab_cycles_thinking_and_clamps_to_the_model(make_app, wolli_home):
    two_models(wolli_home)
    app = make_app()
    async with running(app) as pilot:
        session = app.controller.session
        before = session.thinking_level
        await pilot.press("shift+tab")
        await wait_until(lambda: session.thinking_level != before, 5, "the next level")
        await type_and_send(pilot, "/model faux/faux-2")  # no reasoning: the level clamps to off
        await wait_until(lambda: session.model.id == "faux-2", 5, "the switch")
        assert session.thinking_level == "off"


# --------------------------------------------------------------------------- sessions


async def test_resume_picker_searches_by_name_and_content_opens_and_cancels(make_app, wolli_home, project):
    saved_session(wolli_home, project, "fix the parser", "done with the parser", name="parser work")
    saved_session(wolli_home, project, "write docs", "the word zebracorn is only in here")
    app = make_app()
    async with running(app, size=(110, 34)) as pilot:
        await type_and_send(pilot, "/resume")
        await on_screen(app, SessionPicker, "the session picker")
        picker = app.screen
        assert len(picker.values) == 2
        await pilot.press(*"parser")
        assert len(picker.values) == 1
        await pilot.press(*["backspace"] * 6, *"zebracorn")
        await wait_until(lambda: len(picker.values) == 1 and "found in the conversation" in
                         str(picker.results.get_option_at_index(0).prompt), 5, "a match in the content")
        await pilot.press("enter")
        await wait_until(lambda: any(getattr(m, "role", "") == "user" and m.content == "write docs"
                                     for m in app.controller.session.messages), 5, "the resumed session")
        await pilot.press(*"/resume", "enter")
        await on_screen(app, SessionPicker, "the picker again")
        current = app.controller.session.session_file
        await pilot.press("escape")
        await wait_until(lambda: not isinstance(app.screen, SessionPicker), 5, "cancelled")
        assert app.controller.session.session_file == current


async def test_resume_picker_renames_and_deletes(make_app, wolli_home, project):
    first = saved_session(wolli_home, project, "first question", "first answer")
    saved_session(wolli_home, project, "second question", "second answer")
    app = make_app()
    async with running(app, size=(110, 34)) as pilot:
        await type_and_send(pilot, "/resume")
        await on_screen(app, SessionPicker, "the session picker")
        picker = app.screen
        await pilot.press(*"first")
        assert picker.values == [first]
        await pilot.press("ctrl+r")
        await wait_until(lambda: app.screen is not picker, 5, "the rename dialog")
        await pilot.press(*"renamed", "enter")
        await wait_until(lambda: app.screen is picker, 5, "back in the picker")
        assert SessionManager.open(first).get_session_name() == "renamed"
        await pilot.press("ctrl+d")
        await wait_until(lambda: app.screen is not picker, 5, "the confirmation")
        await pilot.press("y")
        await wait_until(lambda: not Path(first).exists(), 5, "the file deleted")
        assert picker.values == []


async def test_new_name_and_session_report(make_app, faux):
    app = make_app()
    async with running(app, size=(100, 40)) as pilot:
        faux.push("an answer")
        await type_and_send(pilot, "hello")
        await idle_after(app, pilot, 2)
        first_id = app.controller.session.session_id
        await type_and_send(pilot, "/name my work")
        await wait_until(lambda: app.controller.session.session_manager.get_session_name() == "my work", 5, "named")
        await type_and_send(pilot, "/session")
        await wait_until(lambda: "Tokens" in infos(app), 5, "the session report")
        report = infos(app)
        assert first_id in report and "my work" in report and "1 yours, 1 answers" in report
        await type_and_send(pilot, "/new")
        await wait_until(lambda: app.controller.session.session_id != first_id, 5, "a new session")
        assert app.controller.session.messages == []


async def test_fork_puts_the_message_back_in_a_new_session(make_app, faux):
    app = make_app()
    async with running(app, size=(100, 30)) as pilot:
        faux.push("one", "two")
        await type_and_send(pilot, "first question")
        await idle_after(app, pilot, 2)
        await type_and_send(pilot, "second question")
        await idle_after(app, pilot, 4)
        old = app.controller.session.session_id
        await type_and_send(pilot, "/fork")
        await wait_until(lambda: len(app.screen_stack) > 1, 5, "the fork choice")
        await pilot.press("enter")  # the newest message is listed first
        await wait_until(lambda: app.controller.session.session_id != old, 5, "the forked session")
        session = app.controller.session
        assert [m.role for m in session.messages] == ["user", "assistant"]
        assert app.editor.text == "second question"


async def test_tree_moves_the_leaf_and_can_leave_a_branch_summary(make_app, faux):
    app = make_app()
    async with running(app, size=(110, 34)) as pilot:
        faux.push("answer one", "answer two")
        await type_and_send(pilot, "question one")
        await idle_after(app, pilot, 2)
        await type_and_send(pilot, "question two")
        await idle_after(app, pilot, 4)
        session = app.controller.session
        await type_and_send(pilot, "/tree")
        await on_screen(app, TreePicker, "the tree")
        picker = app.screen
        texts = [row.text for row in picker.tree_rows]
        assert texts == ["question one", "answer one", "question two", "answer two"]
        assert picker.tree_rows[picker.results.highlighted].is_leaf
        await pilot.press("up")  # "question two": go back to before it
        faux.push("the summary of the branch")
        await pilot.press("enter")
        await wait_until(lambda: len(app.screen_stack) > 1 and not isinstance(app.screen, TreePicker), 5,
                         "the summary question")
        await pilot.press("down", "enter")  # "Summarize the branch I leave"
        await wait_until(lambda: any(getattr(m, "role", "") == "branchSummary" for m in session.messages), 5,
                         "the branch summary")
        assert app.editor.text == "question two"
        assert [m.role for m in session.messages] == ["user", "assistant", "branchSummary"]
        await pilot.press("ctrl+c")  # clear the editor
        await type_and_send(pilot, "/tree")
        await on_screen(app, TreePicker, "the tree again")
        rows = app.screen.tree_rows
        assert any(row.prefix.startswith(("├─", "└─")) for row in rows)  # the fork is drawn
        await pilot.press("tab")  # filter: no tools (same rows here), then user only
        await pilot.press("tab")
        assert {row.kind for row in app.screen.tree_rows} == {"user"}
        await pilot.press("escape")


# --------------------------------------------------------------------------- the rest


async def test_export_copy_and_hotkeys(make_app, faux, project):
    app = make_app()
    async with running(app, size=(100, 40)) as pilot:
        faux.push("the answer to copy")
        await type_and_send(pilot, "hello")
        await idle_after(app, pilot, 2)
        target = project / "out.html"
        await type_and_send(pilot, f"/export {target}")
        await wait_until(target.exists, 5, "the export")
        assert "the answer to copy" in target.read_text()
        await type_and_send(pilot, "/copy")
        await wait_until(lambda: app.clipboard == "the answer to copy", 5, "the clipboard")
        assert "Copied the last answer" in notices(app)
        await type_and_send(pilot, "/hotkeys")
        await wait_until(lambda: "Ctrl+L" in infos(app), 5, "the keys")


async def test_export_before_the_first_message_says_there_is_nothing_yet(make_app, project):
    # The session file is written with the first message: before it, /export named a file
    # that did not exist ("Session file not found: ...") as if something were broken.
    app = make_app()
    async with running(app, size=(100, 40)) as pilot:
        await type_and_send(pilot, f"/export {project / 'out.html'}")
        await wait_until(lambda: "export" in notices(app), 5, "the answer to /export")
        assert "Nothing to export yet" in notices(app) and "not found" not in notices(app)
        assert not (project / "out.html").exists()


async def test_settings_form_saves_changed_values(make_app, wolli_home):
    app = make_app()
    async with running(app, size=(120, 45)) as pilot:
        await type_and_send(pilot, "/settings")
        await on_screen(app, SettingsForm, "the settings form")
        form = app.screen
        form.inputs["retry.maxRetries"].value = "7"
        form.inputs["hideThinkingBlock"].value = True
        await pilot.press("ctrl+s")
        await wait_until(lambda: not isinstance(app.screen, SettingsForm), 5, "saved")
        saved = json.loads((wolli_home / "agents" / "default" / "settings.json").read_text())
        assert saved["retry"]["maxRetries"] == 7 and saved["hideThinkingBlock"] is True
        assert app.thinking_visible is False
        await type_and_send(pilot, "/settings")
        await on_screen(app, SettingsForm, "the form again")
        app.screen.inputs["retry.maxRetries"].value = "lots"
        await pilot.press("ctrl+s")
        assert "whole number" in str(app.screen.error.render())
        await pilot.press("escape")


async def test_first_run_login_makes_a_model_work_without_a_restart(make_app, wolli_home):
    (wolli_home / "models.json").unlink()
    app = make_app(model=None)
    async with running(app, size=(100, 30)) as pilot:
        assert "/login" in notices(app)
        await type_and_send(pilot, "/login anthropic")
        await wait_until(lambda: len(app.screen_stack) > 1, 5, "the key question")
        await pilot.press(*"sk-test-key", "enter")
        await wait_until(lambda: app.controller.session.model is not None, 5, "a model")
        assert app.controller.session.model.provider == "anthropic"
        auth = json.loads((wolli_home / "auth.json").read_text())
        assert auth["anthropic"]["key"] == "sk-test-key"
        await type_and_send(pilot, "/logout anthropic")
        await wait_until(lambda: "anthropic" not in json.loads((wolli_home / "auth.json").read_text()), 5, "logout")


EXTENSION = '''
def extension(wolli):
    wolli.register_command("greet", handler=lambda args, ctx: ctx.ui.notify("hello " + args),
                           description="say VERSION")
    wolli.register_command("later", handler=lambda args, ctx: None, description="not now",
                           availability="disabled", disabled_reason="needs a git repository")
    wolli.register_command("secret", handler=lambda args, ctx: None, description="hidden one",
                           availability="hidden")
'''


async def test_extensions_and_reload_keep_the_old_version_when_the_new_one_breaks(make_app, project):
    app = make_app(code={"greeter": EXTENSION.replace("VERSION", "one")})
    path = project.parent / "greeter.py"
    async with running(app, size=(110, 40)) as pilot:
        await type_and_send(pilot, "/extensions")
        await wait_until(lambda: "greet" in infos(app), 5, "the extension list")
        assert "commands" in infos(app) and "later" in infos(app)
        path.write_text(EXTENSION.replace("VERSION", "two"))
        await type_and_send(pilot, "/reload")
        await wait_until(lambda: "Reloaded" in notices(app), 5, "the reload")
        assert app.controller.host.find_command("greet").description == "say two"
        path.write_text(EXTENSION.replace("VERSION", "three") + "\n    raise RuntimeError('broken on purpose')\n")
        await type_and_send(pilot, "/reload")
        await wait_until(lambda: notices(app).count("Reloaded") == 2, 5, "the second reload")
        assert "previous version keeps running" in notices(app)
        assert app.controller.host.find_command("greet").description == "say two"


async def test_palette_lists_commands_and_actions_with_availability(make_app):
    from textual.command import CommandPalette

    app = make_app(code={"greeter": EXTENSION.replace("VERSION", "one")})
    async with running(app, size=(110, 40)) as pilot:
        await pilot.press("ctrl+s")
        await wait_until(lambda: CommandPalette.is_open(app), 5, "the palette")
        from wolli.modes.tui.palette import WolliCommands

        hits = WolliCommands(app.screen)._hits()
        texts = [text for text, _, _ in hits]
        assert "Model: /model" in texts and "Session: /tree" in texts and "Model: Choose model" in texts
        assert any(text.endswith("/greet") for text in texts)
        assert not any(text.endswith("/secret") for text in texts)
        later = next(help_text for text, help_text, _ in hits if text.endswith("/later"))
        assert "disabled: needs a git repository" in later
        from textual.command import CommandList

        await pilot.press(*"hotkeys")
        results = app.screen.query_one(CommandList)
        await wait_until(lambda: results.option_count == 1 and results.highlighted == 0, 5, "one search result")
        await pilot.press("enter")
        await wait_until(lambda: "Ctrl+L" in infos(app), 5, "the command ran from the palette")


async def test_command_names_and_builtin_arguments_complete(make_app, wolli_home):
    two_models(wolli_home)
    app = make_app()
    async with running(app, size=(100, 30)) as pilot:
        menu = app.completion.menu
        await pilot.press(*"/tre")
        await wait_until(lambda: menu.open and menu.current()["value"] == "/tree", 5, "the /tree entry")
        await pilot.press("ctrl+c")
        await pilot.press(*"/model sec")
        await wait_until(lambda: menu.open and menu.current()["value"] == "faux/faux-2", 5, "the model argument")
        await pilot.press("tab")
        await wait_until(lambda: app.editor.text == "/model faux/faux-2 ", 5, "the completed argument")


async def test_dash_r_opens_the_session_picker_first(make_app, wolli_home, project):
    saved_session(wolli_home, project, "an older question", "an older answer")
    app = make_app(pick_session=True)
    async with running(app, size=(110, 34)) as pilot:
        await on_screen(app, SessionPicker, "the picker at start")
        await wait_until(lambda: len(app.screen.values) == 1, 5, "the older session listed")
        await pilot.press("enter")
        await wait_until(lambda: len(app.controller.session.messages) == 2, 5, "the older session")


async def test_compact_summarises_and_a_busy_agent_refuses_new(make_app, faux):
    app = make_app()
    async with running(app, size=(100, 30)) as pilot:
        faux.push("one " * 200, "two " * 200, "three " * 200)
        for n, text in enumerate(("first", "second", "third"), start=1):
            await type_and_send(pilot, text)
            await idle_after(app, pilot, 2 * n)
        session = app.controller.session
        session.settings.override({"compaction": {"keepRecentTokens": 10}})
        faux.push("the summary", "the summary of a split turn")  # the second only if a turn is cut
        await type_and_send(pilot, "/compact keep names")
        await wait_until(lambda: any(getattr(m, "role", "") == "compactionSummary" for m in session.messages), 5,
                         "the compaction")
        assert "summarised" in notices(app)
        faux.set_responses([])
        faux.tokens_per_second = 20
        faux.push(" ".join(["slow"] * 200))
        await type_and_send(pilot, "go")
        await wait_until(lambda: session.is_streaming, 5, "streaming")
        before = session.session_id
        await pilot.press(*"/new", "enter")
        await wait_until(lambda: "waits until the agent is idle" in notices(app), 5, "the refusal")
        assert session.session_id == before
        await pilot.press("escape")


async def test_the_start_up_summary_and_quiet_startup(make_app, wolli_home, project):
    (project / "AGENTS.md").write_text("be brief")
    app = make_app(code={"greeter": EXTENSION.replace("VERSION", "one")})
    async with running(app):
        text = notices(app)
        assert "/ for commands" in text and "AGENTS.md" in text and "extensions greeter" in text
    (wolli_home / "agents" / "default" / "settings.json").write_text('{"quietStartup": true}')
    quiet = make_app()
    async with running(quiet):
        assert "/ for commands" not in notices(quiet)
