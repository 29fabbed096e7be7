"""Built-in slash commands in the line mode: pickers as numbered lists, reports as text,
/reload picking up an edited extension, /quit."""

from __future__ import annotations

import json

from tests.support.waiting import wait_until

RELOADABLE = '''
def extension(wolli):
    async def hello(args, ctx):
        ctx.ui.notify("hello VERSION")
    wolli.register_command("hello", description="say hello", handler=hello)
'''


async def test_reload_picks_up_an_edited_extension(line, faux, project):
    term = await line(code={"greeter": RELOADABLE.replace("VERSION", "one")})
    await term.send("/hello")
    await term.wait_for("hello one")
    (project.parent / "greeter.py").write_text(RELOADABLE.replace("VERSION", "two"))
    await term.send("/reload")
    await term.wait_for("Reloaded:")
    await term.send("/hello")
    await term.wait_for("hello two")


async def test_model_is_a_numbered_list(line, faux, wolli_home):
    (wolli_home / "models.json").write_text(json.dumps({"providers": {"faux": {
        "api": "faux", "baseUrl": "http://faux.invalid", "apiKey": "none",
        "models": [{"id": "faux-1", "contextWindow": 100000}, {"id": "faux-2", "contextWindow": 100000}]}}}))
    term = await line()
    await term.send("/model")
    text = await term.wait_for("2. faux/faux-2")
    assert "1. faux/faux-1  (current)" in text
    await term.wait_asked("Number, or words to narrow the list:")
    term.type("2\r")
    await term.wait_for("Model: faux/faux-2")
    assert term.repl.session.model.id == "faux-2"
    await term.wait_idle_prompt()
    assert term.text.count("Model: faux/faux-2") == 1  # the event's line, not the command's as well


async def test_resume_lists_sessions_and_shows_the_one_opened(line, faux):
    term = await line()
    faux.push("first answer")
    await term.send("first session question")
    await term.wait_for("first answer")
    await term.send("/new")
    await term.wait_for("New session started.")
    faux.push("second answer")
    await term.send("second session question")
    await term.wait_for("second answer")
    await term.send("/resume")
    text = await term.wait_for("Resume which session?")
    listing = text.split("Resume which session?")[-1]
    assert "first session question" in listing and "second session question  (open)" in listing
    await term.wait_asked("Number, or words to narrow the list:")
    term.type("first\r")  # words narrow the list; one left is opened
    text = await term.wait_for("> first session question")  # the resumed conversation is shown again
    assert text.rstrip().endswith("first answer")
    assert [m.role for m in term.repl.session.messages] == ["user", "assistant"]


async def test_name_session_and_extensions_reports(line, faux):
    term = await line(code={"greeter": RELOADABLE.replace("VERSION", "one")})
    await term.send("/name my work")
    await term.wait_for("Session named 'my work'.")
    await term.send("/session")
    text = await term.wait_for("Cost")
    assert "Name      my work" in text
    await term.send("/extensions")
    text = await term.wait_for("greeter")
    assert "commands   hello" in text


async def test_help_lists_keys_and_every_command(line, faux):
    term = await line(code={"greeter": RELOADABLE.replace("VERSION", "one")})
    await term.send("/help")
    text = await term.wait_for("/hello")
    assert "Ctrl+J, Alt+Enter" in text and "/model" in text and "/resume" in text


async def test_an_unknown_slash_word_goes_to_the_model(line, faux):
    term = await line()
    faux.push("that is a path")
    await term.send("/usr/bin is what?")
    await term.wait_for("that is a path")


async def test_quit(line, faux):
    term = await line()
    await term.send("/quit")
    assert await term.task == 0
    await wait_until(lambda: term.task.done())


async def test_plain_r_starts_with_the_session_list(line, faux):
    first = await line()
    faux.push("an answer")
    await first.send("an earlier question")
    await first.wait_for("an answer")
    await first.send("/quit")
    await first.task
    term = await line(resume=True)
    await term.wait_for("Resume which session?")
    await term.wait_asked("Number, or words to narrow the list:")
    term.type("1\r")
    await term.wait_for("> an earlier question")
