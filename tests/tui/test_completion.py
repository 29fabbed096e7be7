"""Completion in the running app: ``/`` commands with arguments, ``@`` files, Tab paths."""

from __future__ import annotations

import textwrap

from tests.support.waiting import wait_until

from .helpers import running

DEPLOY = textwrap.dedent("""
    def extension(wolli):
        async def deploy(args, ctx):
            ctx.ui.notify("deploying " + args)

        wolli.register_command("deploy", description="Deploy somewhere", handler=deploy,
                               get_argument_completions=lambda prefix: [e for e in ("dev", "staging", "prod")
                                                                         if e.startswith(prefix)])
""")


async def test_slash_shows_commands_and_their_arguments_and_enter_accepts(make_app, tmp_path):
    app = make_app(code={"deploy": DEPLOY})
    async with running(app) as pilot:
        menu = app.completion.menu
        await pilot.press("/", "d", "e", "p")
        await wait_until(lambda: menu.open, 5, "the command menu")
        assert menu.current()["value"] == "/deploy"
        await pilot.press("enter")
        assert app.editor.text == "/deploy "
        await pilot.press("s")
        await wait_until(lambda: menu.open and menu.current()["value"] == "staging", 5, "the argument menu")
        await pilot.press("tab")
        assert app.editor.text == "/deploy staging "
        assert not menu.open
        await pilot.press("enter")
        await wait_until(lambda: [n.message for n in app._notifications] == ["deploying staging"], 5, "the command")


async def test_at_completes_project_files_and_escape_closes(make_app, project):
    (project / "src").mkdir()
    (project / "src" / "server.py").write_text("x")
    (project / "README.md").write_text("x")
    app = make_app()
    async with running(app) as pilot:
        menu = app.completion.menu
        await pilot.press(*"explain @srvpy")
        await wait_until(lambda: menu.open, 5, "the file menu")
        assert menu.current()["value"] == "@src/server.py"
        await pilot.press("escape")
        assert not menu.open and app.editor.text == "explain @srvpy"
        await pilot.press("backspace")
        await wait_until(lambda: menu.open, 5, "the file menu again")
        await pilot.press("enter")
        assert app.editor.text == "explain @src/server.py "


async def test_tab_completes_a_path_with_one_candidate(make_app, project):
    (project / "documentation").mkdir()
    app = make_app()
    async with running(app) as pilot:
        await pilot.press(*"ls docu", "tab")
        await wait_until(lambda: app.editor.text == "ls documentation/", 5, "the completed path")


SLOW_PROVIDER = textwrap.dedent("""
    import asyncio

    def extension(wolli):
        def wrap(current):
            async def get_suggestions(lines, line, col, options):
                if len(lines[line][:col]) > SHORT:  # short words are answered at once, longer ones slowly
                    await asyncio.sleep(0.5)
                return await current.get_suggestions(lines, line, col, options)
            return {"get_suggestions": get_suggestions}

        async def on_start(event, ctx):
            ctx.ui.add_autocomplete_provider(wrap)
        wolli.on("session_start", on_start)
""")


async def test_keys_typed_faster_than_suggestions_arrive_act_on_the_text_typed(make_app):
    """Enter while the menu still shows the suggestions for an earlier prefix must not apply
    that old suggestion at the new cursor ('/model' became '/mod/model '): it acts on what
    is typed now."""
    from wolli.modes.tui.screens.model_picker import ModelPicker

    app = make_app(code={"slow": SLOW_PROVIDER.replace("SHORT", "2")})
    async with running(app) as pilot:
        menu = app.completion.menu
        await pilot.press("/", "m")
        await wait_until(lambda: menu.open and menu.prefix == "/m", 5, "the menu for /m")
        await pilot.press("o", "d", "e", "l", "enter")  # before the slow answer for '/model'
        await wait_until(lambda: isinstance(app.screen, ModelPicker), 5, "the model picker")
        assert app.editor.text == ""


async def test_a_late_answer_for_text_no_longer_there_is_not_shown(make_app):
    app = make_app(code={"slow": SLOW_PROVIDER.replace("SHORT", "0")})
    async with running(app) as pilot:
        menu = app.completion.menu
        await pilot.press("/", "m", "o")  # every answer is slow: no menu yet
        await pilot.press("home", "x")  # 'x/mo' with the cursor after x: nothing to complete
        await wait_until(lambda: not any(w.group == "completion" and not w.is_finished for w in app.workers),
                         5, "the slow query to end")
        await pilot.pause()
        assert not menu.open and not app.editor.menu_open
        await pilot.press("enter")
        await wait_until(lambda: app.editor.text == "", 5, "the prompt sent")
        assert app.controller.session.messages[0].content == "x/mo"


HANGING_PROVIDER = textwrap.dedent("""
    import asyncio

    def extension(wolli):
        def wrap(current):
            async def get_suggestions(lines, line, col, options):
                before = lines[line][:col]
                if before.endswith("#i"):
                    return {"prefix": "#i", "items": [{"value": "#issue-42", "label": "#issue-42"}]}
                if "#i" in before:
                    await asyncio.Event().wait()  # never answers
                return await current.get_suggestions(lines, line, col, options)
            return {"trigger_characters": ["#"], "get_suggestions": get_suggestions}

        async def on_start(event, ctx):
            ctx.ui.add_autocomplete_provider(wrap)
        wolli.on("session_start", on_start)
""")


async def test_enter_on_an_old_menu_with_a_provider_that_never_answers_sends_the_text(make_app):
    """Enter waits a moment for a fresh answer, then sends what is typed: a hanging provider
    must not freeze the app."""
    app = make_app(code={"hang": HANGING_PROVIDER})
    async with running(app) as pilot:
        menu = app.completion.menu
        await pilot.press(*"fix #i")
        await wait_until(lambda: menu.open and menu.prefix == "#i", 5, "the menu for #i")
        await pilot.press("s", "enter")
        await wait_until(lambda: app.controller.session.messages, 5, "the prompt sent")
        assert app.controller.session.messages[0].content == "fix #is"
        assert not menu.open


async def test_the_menu_joins_the_screen_above_the_editor_with_its_first_suggestions(make_app):
    """A start that completes nothing mounts no menu (nor its OptionList stylesheet); the
    first suggestions put it above the editor, where it then stays."""
    from textual.widgets import OptionList

    app = make_app()
    async with running(app) as pilot:
        assert not app.query(OptionList)  # nothing hidden was composed for later
        await pilot.press("h", "i", "backspace", "backspace", "/")
        menu = app.completion.menu
        await wait_until(lambda: menu.open, 5, "the command menu")
        await pilot.pause()
        assert list(app.editor_area.children) == [menu, app.editor]
        assert menu.region.bottom <= app.editor.region.y and menu.region.height > 0
        await pilot.press("escape")
        assert not menu.open
        await pilot.press("backspace", "/")
        await wait_until(lambda: menu.open, 5, "the command menu again")
        assert list(app.query(OptionList)) == [menu]  # the same widget, mounted once


async def test_a_custom_editor_keeps_the_menu_above_it(make_app):
    from wolli.modes.tui.custom_editor import CustomEditor

    app = make_app()
    async with running(app) as pilot:
        await pilot.press("/")
        menu = app.completion.menu
        await wait_until(lambda: menu.open, 5, "the command menu")
        await pilot.press("escape", "backspace")
        app.ui.set_editor_component(lambda app_, theme, keys: CustomEditor())
        await pilot.pause()
        assert isinstance(app.editor, CustomEditor)
        assert list(app.editor_area.children) == [menu, app.editor]
        await pilot.press("/")
        await wait_until(lambda: menu.open, 5, "the command menu over the custom editor")
        await pilot.pause()
        assert menu.region.bottom <= app.editor.region.y


async def test_a_file_name_with_a_newline_or_tab_stays_on_one_row_of_the_menu(make_app, project):
    # A name may hold any byte but "/" and NUL: a newline in one drew it over two rows, so
    # the rows no longer matched the entries the arrows move through.
    (project / "new\nline.txt").write_text("x")
    (project / "tab\there.txt").write_text("x")
    app = make_app()
    async with running(app, (80, 24)) as pilot:
        menu = app.completion.menu
        await pilot.press("@")
        await wait_until(lambda: menu.open and len(menu.items) == 2, 5, "the file menu")
        await pilot.pause()
        rows = [strip.text for strip in app.screen._compositor.render_strips()]
        assert any("new␊line.txt" in row for row in rows), "\n".join(rows)
        assert any("tab␉here.txt" in row for row in rows), "\n".join(rows)
