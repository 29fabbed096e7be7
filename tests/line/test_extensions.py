"""Extensions in the line mode behave as in the TUI: shortcuts fire at the prompt, a failing
command is one line (traceback in the log), and their text is printed literally."""

from __future__ import annotations

import textwrap

from tests.support.waiting import wait_until

MARKUP = "[draft] [bold]b[/bold] [/x]"

EXTENSION = textwrap.dedent(f"""
    MARKUP = {MARKUP!r}

    def extension(wolli):
        for spec in ("alt+p", "ctrl+alt+p", "f6"):
            wolli.register_shortcut(spec, description="says " + spec,
                                    handler=lambda ctx, spec=spec: ctx.ui.notify("fired " + spec))
        wolli.register_shortcut("super+k", description="cannot be pressed here", handler=lambda ctx: None)

        def explode(args, ctx):
            raise ValueError("no plan yet")

        async def show(args, ctx):
            ctx.ui.notify("saved " + MARKUP)
            await ctx.session.send_message({{"custom_type": "note", "content": "custom " + MARKUP, "display": True}})

        wolli.register_command("plan", handler=explode, description="fails")
        wolli.register_command("show", handler=show, description="prints")
""")


async def test_shortcuts_fire_at_the_prompt(line):
    term = await line(code={"keys": EXTENSION})
    await term.wait_idle_prompt()
    assert "shortcut Super+K will not work in this terminal" in term.text
    term.type("draft")
    term.type("\x1bp")  # Alt+P as a terminal sends it
    await term.wait_for("fired alt+p")
    term.type("\x1b\x10")  # Ctrl+Alt+P
    await term.wait_for("fired ctrl+alt+p")
    term.type("\x1b[17~")  # F6
    await term.wait_for("fired f6")
    assert term.repl.prompter.editor_text() == "draft"  # nothing typed into the prompt


async def test_a_failing_command_is_one_line_and_text_is_literal(line, wolli_home):
    term = await line(code={"keys": EXTENSION})
    await term.send("/plan")
    await term.wait_for("keys: /plan failed: ValueError: no plan yet")
    log = (wolli_home / "agents" / "default" / "logs" / "extensions.log").read_text()
    assert 'raise ValueError("no plan yet")' in log
    await term.send("/show")
    await term.wait_for("custom " + MARKUP)
    assert "saved " + MARKUP in term.text
    await wait_until(lambda: term.repl.prompter._main_running, 5, "the prompt again")


async def test_the_documented_extensions_work_in_the_line_mode(line, faux, tmp_path):
    from tests.tui.test_docs_extensions import doc_extensions
    from wolli.ai.providers.faux import faux_tool_call

    term = await line(extensions=doc_extensions(tmp_path))
    await term.send("/paint blue")
    await term.wait_for("painting it blue")
    await term.send("/deploy")
    await term.wait_for("deploy: staging is green")
    await term.send("/ship")  # custom() is None here: the rest goes on
    faux.push([faux_tool_call("count", {"n": "3"})], "counted")
    await term.send("count to three")
    text = await term.wait_for("counted")
    assert "count 3" in text and "✓ 3" in text
    assert "failed" not in text, text
