"""The line mode's loop through a pipe: a prompt and its streamed answer, a tool call, a
shell command, abort, history shared with the TUI, quitting."""

from __future__ import annotations

import json
import re

from tests.support.sample_extensions import REDACTOR
from tests.support.waiting import wait_until
from wolli.ai.providers.faux import faux_hang, faux_thinking, faux_tool_call

ESC = "\x1b"


async def test_a_prompt_gets_a_streamed_answer_and_a_status_line(line, faux):
    term = await line()
    faux.push("The answer is forty-two.")
    await term.send("what is the answer?")
    await term.wait_for("The answer is forty-two.")
    text = await term.wait_for("-- faux/faux-1")
    assert "what is the answer?" not in text  # typed at the prompt: already on the screen, not echoed
    assert "context " in text.split("-- faux/faux-1")[1]
    await term.wait_idle_prompt()
    term.type("\x04")  # Ctrl+D on the empty prompt quits
    assert await term.task == 0


async def test_plain_output_has_no_escape_codes_and_keeps_the_markdown_source(line, faux):
    term = await line()
    faux.push([faux_thinking("let me think"), "# Title\n\nSome **bold** text.\n\n```python\nx = 1\n```"])
    await term.send("hello")
    text = await term.wait_for("-- faux/faux-1")
    assert "\x1b" not in text
    assert "Thinking: let me think" in text
    assert "# Title\n\nSome **bold** text.\n\n```python\nx = 1\n```\n" in text


async def test_a_tool_call_is_one_line_then_the_first_lines_of_its_result(line, faux, project):
    (project / "notes.txt").write_text("".join(f"line {n}\n" for n in range(1, 31)))
    term = await line()
    faux.push([faux_tool_call("read", {"path": "notes.txt"})], "I read it.")
    await term.send("read the notes")
    text = await term.wait_for("I read it.")
    assert "* read notes.txt\n  line 1\n" in text
    assert "line 6\n" not in text
    assert re.search(r"… \d+ more lines below\n", text)  # no TUI key hint in the line mode
    assert "Ctrl+O" not in text


async def test_a_shell_command_with_bang(line, faux, project):
    term = await line()
    await term.send("!echo from-the-shell")
    text = await term.wait_for("exit 0")
    assert "$ echo from-the-shell\n  from-the-shell\n" in text
    await term.send("!!echo private")
    text = await term.wait_for("(not sent to the model)")


async def test_esc_stops_the_agent_and_the_prompt_comes_back(line, faux):
    term = await line()
    faux.push(faux_hang("Working on it"))
    await term.send("do something long")
    await term.wait_for("Working on it")
    term.type(ESC)
    await term.wait_for("Stopped.")
    await term.wait_idle_prompt()
    faux.push("fine")
    await term.send("next")
    await term.wait_for("fine")


async def test_ctrl_c_stops_the_agent_too(line, faux):
    term = await line()
    faux.push(faux_hang("Working"))
    await term.send("go")
    await term.wait_for("Working")
    term.type("\x03")
    await term.wait_for("Stopped.")
    await term.wait_idle_prompt()


async def test_history_is_the_tuis_file_both_ways(line, faux, wolli_home):
    history = wolli_home / "agents" / "default" / "prompt-history.jsonl"
    history.parent.mkdir(parents=True, exist_ok=True)
    history.write_text(json.dumps("typed in the TUI") + "\n")
    term = await line()
    faux.push("one")
    await term.send("first question")
    await term.wait_for("one")
    assert json.loads(history.read_text().splitlines()[-1]) == "first question"
    await term.wait_idle_prompt()
    term.type("\x1b[A\x1b[A")  # Up twice: past our own prompt to the TUI's
    buffer = term.repl.prompter.main_session().default_buffer
    await wait_until(lambda: buffer.text == "typed in the TUI", what="the TUI's prompt recalled")
    faux.push("two")
    term.type("\r")
    await term.wait_for("two")


async def test_ctrl_c_clears_the_prompt_and_twice_on_an_empty_one_quits(line, faux):
    term = await line()
    await term.wait_idle_prompt()
    buffer = term.repl.prompter.main_session().default_buffer
    term.type("half a thought")
    await wait_until(lambda: buffer.text == "half a thought", what="typed text")
    term.type("\x03")
    await wait_until(lambda: buffer.text == "", what="a cleared prompt")
    term.type("\x03")
    await term.wait_for("Press Ctrl+C again")
    await term.wait_idle_prompt()
    term.type("\x03")
    assert await term.task == 0


async def test_multi_line_prompts_with_ctrl_j(line, faux):
    term = await line()
    faux.push("ok")
    await term.wait_idle_prompt()
    term.type("first line\nsecond line\r")  # Ctrl+J is "\n" on the wire, Enter "\r"
    await term.wait_for("ok")
    user = next(m for m in term.repl.session.messages if m.role == "user")
    assert user.content == "first line\nsecond line"


RENDERED_TOOL = '''
def extension(wolli):
    async def execute(tool_call_id, params, signal, on_update, ctx):
        return {"content": [{"type": "text", "text": "weather data"}], "details": {"temp": 21}}

    wolli.register_tool({
        "name": "weather", "description": "the weather", "parameters": {"type": "object", "properties": {}},
        "execute": execute,
        "render_call": lambda args, theme, context: theme.fg("accent", "Weather lookup"),
        "render_result": lambda result, options, theme, context: ["Sunny", "21 degrees"],
    })

    async def note(args, ctx):
        await ctx.session.send_message({"custom_type": "note", "content": "remember this", "display": True})
    wolli.register_command("note", description="leave a note", handler=note)
    wolli.register_message_renderer("note", lambda message, options, theme: "NOTE: " + message.content)

    async def count(args, ctx):
        await ctx.session.send_message({"custom_type": "count", "content": "three", "display": True})
    wolli.register_command("count", description="count", handler=count)
    wolli.register_message_renderer("count", lambda message, options, theme: 3)  # not text: shown as str()
'''


async def test_extension_renderers_print_as_text(line, faux):
    term = await line(code={"weather": RENDERED_TOOL})
    faux.push([faux_tool_call("weather", {})], "Nice day.")
    await term.send("weather?")
    text = await term.wait_for("Nice day.")
    assert "* Weather lookup\n  Sunny\n  21 degrees\n" in text
    await term.send("/note")
    await term.wait_for("NOTE: remember this")
    await term.send("/count")
    text = await term.wait_for("\n3\n")
    assert "[count] three" not in text  # the renderer's value, as in the full-screen app


async def test_a_failed_answer_is_one_error_line(line, faux):
    from wolli.ai.providers.faux import faux_error

    term = await line()
    faux.push(faux_error("the model is on fire"))
    await term.send("hi")
    text = await term.wait_for("-- faux/faux-1")
    assert text.count("the model is on fire") == 1
    assert "x the model is on fire" in text


async def test_keys_typed_while_the_agent_works_wait_in_the_next_prompt(line, faux):
    term = await line()
    faux.push(faux_hang("Working"))
    await term.send("go")
    await term.wait_for("Working")
    term.type("nexx\x7ft")  # typed ahead, with a backspace
    term.type(ESC)
    await term.wait_for("Stopped.")
    await term.wait_idle_prompt()
    buffer = term.repl.prompter.main_session().default_buffer
    await wait_until(lambda: buffer.text == "next", what="the typed-ahead text in the prompt")


async def test_shift_tab_cycles_the_thinking_level(line, faux):
    term = await line()
    await term.wait_idle_prompt()
    before = term.repl.session.thinking_level
    term.type("\x1b[Z")  # Shift+Tab
    await term.wait_for("Thinking: ")
    assert term.repl.session.thinking_level != before



async def test_an_answer_an_extension_rewrote_at_its_end_is_printed_again_as_kept(line, faux):
    term = await line(code={"redactor": REDACTOR})
    faux.push("The secret is 42.")
    await term.send("tell me")
    text = await term.wait_for("-- faux/faux-1")
    assert "The secret is 42." in text  # scrollback cannot be taken back
    said = text.index("An extension changed this answer when it ended; as kept:")
    assert "[redacted]" in text[said:]
