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
