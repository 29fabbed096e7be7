"""``ctx.ui`` in the line mode: dialogs as prompts (answered, timed out, aborted), notices,
statuses in the status line, the editor text, and ``ctx.mode == "plain"``."""

from __future__ import annotations

from pathlib import Path

from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_tool_call

EXAMPLES = Path(__file__).resolve().parents[2] / "extensions"

DIALOGS = '''
def extension(wolli):
    async def ask(args, ctx):
        seen = []
        seen.append(ctx.mode)
        seen.append(await ctx.ui.select("Pick a colour", ["red", {"label": "Green", "value": "green"}, "blue"]))
        seen.append(await ctx.ui.input("Your name", "e.g. Ada"))
        seen.append(await ctx.ui.editor("A poem", "roses"))
        seen.append(await ctx.ui.confirm("Sure?", "Really sure?", timeout=0.3))
        ctx.ui.set_status("dialogs", "asked " + str(len(seen)))
        ctx.ui.notify("answers: " + repr(seen), "info")
    wolli.register_command("ask", description="ask everything", handler=ask)

    async def prefill(args, ctx):
        ctx.ui.set_editor_text("prefilled text")
    wolli.register_command("prefill", description="fill the prompt", handler=prefill)
'''


async def test_a_confirm_dialog_answered_with_y_lets_the_tool_run(line, faux, project):
    build = project / "build"
    build.mkdir()
    term = await line(extensions=[str(EXAMPLES / "permission_gate.py")])
    faux.push([faux_tool_call("bash", {"command": "rm -rf build"})], "Cleaned up.")
    await term.send("clean the build folder")
    await term.wait_asked("Dangerous command")
    assert "Allow this command?" in term.text  # the message is printed above the question
    term.type("y")
    text = await term.wait_for("Cleaned up.")
    assert not build.exists()
    assert "* $ rm -rf build" in text


async def test_a_confirm_dialog_answered_with_n_blocks_the_tool(line, faux, project):
    build = project / "build"
    build.mkdir()
    term = await line(extensions=[str(EXAMPLES / "permission_gate.py")])
    faux.push([faux_tool_call("bash", {"command": "rm -rf build"})], "Fine, I left it.")
    await term.send("clean the build folder")
    await term.wait_asked("Dangerous command")
    term.type("n")
    await term.wait_for("Fine, I left it.")
    assert build.exists()


async def test_every_dialog_and_the_mode(line, faux):
    term = await line(code={"dialogs": DIALOGS})
    await term.send("/ask")
    await term.wait_for("Pick a colour")
    assert "  2. Green\n" in term.text
    await term.wait_asked("Number, or words to narrow the list:")
    term.type("2\r")
    await term.wait_asked("Your name")
    term.type("Ada\r")
    await term.wait_asked("A poem")
    assert "A poem" in term.text
    term.type(" are red\x1b\r")  # Esc Enter ends a multi-line answer
    await term.wait_asked("Sure?")  # then left to time out: no
    text = await term.wait_for("answers:")
    assert "answers: ['plain', 'green', 'Ada', 'roses are red', False]" in text
    faux.push("ok")
    await term.send("hi")
    await term.wait_for("asked 5")  # the extension's status is in the status line


async def test_select_narrows_by_words_and_esc_cancels(line, faux):
    code = '''
def extension(wolli):
    async def pick(args, ctx):
        ctx.ui.notify("picked " + repr(await ctx.ui.select("Fruit", ["apple", "banana", "cherry", "blueberry"])))
    wolli.register_command("pick", description="pick", handler=pick)
'''
    term = await line(code={"pick": code})
    await term.send("/pick")
    await term.wait_asked("Number, or words to narrow the list:")
    term.type("rr\r")  # two match: the list is printed again, narrowed
    await wait_until(lambda: term.text.count("Fruit") == 2, what="the narrowed list")
    assert "  1. cherry\n  2. blueberry\n" in term.text.split("Fruit")[-1]
    await term.wait_asked("Number, or words to narrow the list:")
    term.type("2\r")
    await term.wait_for("picked 'blueberry'")
    await term.send("/pick")
    await wait_until(lambda: term.text.count("Fruit") == 3, what="the second list")
    await term.wait_asked("Number, or words to narrow the list:")
    term.type("\x1b")
    await term.wait_for("picked None")


async def test_a_dialog_aborted_by_its_signal(line, faux):
    code = '''
from wolli.ai.abort import AbortController

def extension(wolli):
    async def ask(args, ctx):
        import asyncio
        controller = AbortController()
        asyncio.get_running_loop().call_later(0.2, controller.abort)
        answer = await ctx.ui.input("Never answered", signal=controller.signal)
        ctx.ui.notify("got " + repr(answer))
    wolli.register_command("ask", description="ask", handler=ask)
'''
    term = await line(code={"ask": code})
    await term.send("/ask")
    await term.wait_for("got None")


async def test_set_editor_text_fills_the_next_prompt(line, faux):
    term = await line(code={"dialogs": DIALOGS})
    await term.send("/prefill")
    await term.wait_idle_prompt()
    buffer = term.repl.prompter.main_session().default_buffer
    await wait_until(lambda: buffer.text == "prefilled text", what="the prompt prefilled")
    assert term.repl.ui.get_editor_text() == "prefilled text"


async def test_a_dialog_while_the_prompt_waits_takes_it_away_and_gives_it_back(line, faux):
    term = await line()
    await term.wait_idle_prompt()
    buffer = term.repl.prompter.main_session().default_buffer
    term.type("half typed")
    await wait_until(lambda: buffer.text == "half typed", what="typed text")
    import asyncio

    asked = asyncio.ensure_future(term.repl.ui.confirm("From the background", "ok?"))
    await term.wait_asked("From the background")
    term.type("y")
    assert await asked is True
    await term.wait_idle_prompt()
    await wait_until(lambda: buffer.text == "half typed", what="the prompt back with its text")


async def test_notify_from_a_worker_thread(line, faux):
    import asyncio

    term = await line()
    await asyncio.to_thread(term.repl.ui.notify, "from a thread", "warning")
    await term.wait_for("! from a thread")


async def test_a_dialog_asked_from_another_thread_and_loop(line, faux):
    import asyncio

    term = await line()
    await term.wait_idle_prompt()
    answer = asyncio.ensure_future(asyncio.to_thread(lambda: asyncio.run(term.repl.ui.input("Elsewhere"))))
    await term.wait_asked("Elsewhere")
    term.type("from afar\r")
    assert await answer == "from afar"


async def test_on_a_dumb_terminal_dialogs_still_time_out_and_answer(line, faux, monkeypatch):
    monkeypatch.setenv("TERM", "dumb")  # prompt_toolkit's basic prompt: another Application each time
    term = await line(code={"dialogs": DIALOGS}, dumb=True)
    await term.send("/ask")
    await term.wait_asked("Number, or words to narrow the list:")
    term.type("1\r")
    await term.wait_asked("Your name")
    term.type("Ada\r")
    await term.wait_asked("A poem")
    term.type("\x1b\r")
    await term.wait_asked("Sure?")  # left to time out
    await term.wait_for("answers: ['plain', 'red', 'Ada', 'roses', False]")
