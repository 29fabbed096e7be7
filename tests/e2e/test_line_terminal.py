"""End to end in a real terminal: ``wolli --plain`` (and plain ``wolli`` with ``TERM=dumb``)
under tmux against a loopback OpenAI-compatible server. A prompt and its streamed answer, a
tool call behind an extension's confirm dialog, history, completion, abort, /reload; then
the automatic fallback on a dumb terminal."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.loopback import Reply
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.waiting import wait_for_value_sync

from .tmux_terminal import TmuxTerminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")

EXAMPLES = Path(__file__).resolve().parents[2] / "extensions"
GREETER = '''
def extension(wolli):
    async def hello(args, ctx):
        ctx.ui.notify("hello VERSION")
    wolli.register_command("hello", description="say hello", handler=hello)
'''


def wait_for_prompt(term: TmuxTerminal, prompt: str = "›", timeout: float = 20.0) -> None:
    """Until the empty prompt is the last line on the screen (tmux drops trailing spaces)."""

    def prompt_last(screen: str) -> bool:
        lines = [line for line in screen.split("\n") if line.strip()]
        return bool(lines) and lines[-1] == prompt

    wait_for_value_sync(term.screen, prompt_last, timeout, lambda screen: f"no empty prompt:\n{screen}", 0.05)


def hanging_answer(text: str) -> Reply:
    """``text`` streamed, then the server waits (until the client gives up on it)."""
    body = text_answer(text).body
    end = body.rindex(b"data: ", 0, body.index(b'"finish_reason": "stop"'))
    return Reply(body=body[:end], hang=True)


def test_a_whole_session_in_line_mode(terminal_run, loopback):
    project = terminal_run.project
    greeter = project.parent / "greeter.py"
    greeter.write_text(GREETER.replace("VERSION", "one"))
    (project / "build").mkdir()
    term = terminal_run("--plain", "-e", str(EXAMPLES / "permission_gate.py"), "-e", str(greeter))
    wait_for_prompt(term)

    # a prompt and its streamed answer, then the status line
    loopback.push(text_answer("The answer is **forty-two**."))
    term.type("what is the answer?")
    term.send("Enter")
    screen = term.wait_for("The answer is forty-two.")  # the markdown rendered once the line is complete
    assert "what is the answer?" in screen
    term.wait_for("── local/local-model")

    # a tool call behind the extension's confirm dialog
    loopback.push(tool_call_answer("bash", {"command": "rm -rf build"}), text_answer("Cleaned up."))
    term.type("clean the build folder")
    term.send("Enter")
    term.wait_for("Dangerous command")
    term.send("y")
    screen = term.wait_for("Cleaned up.")
    assert "● $ rm -rf build" in screen
    assert not (project / "build").exists()

    # history: Up brings the last prompt back
    wait_for_prompt(term)
    term.send("Up")
    term.wait_for("› clean the build folder")
    term.send("C-c")  # clears the prompt
    wait_for_prompt(term)

    # completion: a slash command from its first letters
    term.type("/hell")
    term.wait_for("/hello  say hello")  # the menu, while typing
    term.send("Tab")
    term.wait_for("› /hello")
    term.send("Enter")
    term.send("Enter")
    term.wait_for("hello one")
    wait_for_prompt(term)

    # abort: Esc stops a run that would never end
    loopback.push(hanging_answer("Working on a very long answer"))
    term.type("write a novel")
    term.send("Enter")
    term.wait_for("Working on a very long answer")
    term.send("Escape")
    term.wait_for("Stopped.")
    wait_for_prompt(term)

    # /reload picks up the edited extension
    greeter.write_text(GREETER.replace("VERSION", "two"))
    term.type("/reload")
    term.send("Enter")
    term.wait_for("Reloaded:")
    wait_for_prompt(term)
    term.type("/hello")
    term.send("Enter")
    term.wait_for("hello two")
    wait_for_prompt(term)
    term.send("C-d")
    assert term.exit_status() == 0


NAP = '''
import asyncio, os

def extension(wolli):
    naps = []

    async def nap(args, ctx):
        naps.append(args)
        ctx.ui.notify(f"napping {len(naps)}")
        while not os.path.exists(WAKE):
            await asyncio.sleep(0.02)
        ctx.ui.notify("awake")
    wolli.register_command("nap", description="wait for the wake file", handler=nap)
'''


@pytest.mark.parametrize("term_name", ["xterm-256color", "dumb"])
def test_keys_typed_while_no_prompt_is_open_arrive_as_keys(terminal_run, loopback, term_name):
    """Typed while a command runs (no prompt, no run reading keys): Enter must still send and
    Ctrl+D still quit once the prompt is back. A cooked tty in that gap turned Enter into a
    new line and ate Ctrl+D (on a dumb terminal the gap is also there before every prompt)."""
    project = terminal_run.project
    wake = project.parent / "wake"
    napper = project.parent / "napper.py"
    napper.write_text(NAP.replace("WAKE", repr(str(wake))))
    term = terminal_run("--plain", "-e", str(napper), term=term_name)
    prompt = ">" if term_name == "dumb" else "›"
    wait_for_prompt(term, prompt)
    term.type("/nap")
    term.send("Enter")
    term.wait_for("napping 1")
    loopback.push(text_answer("Typed ahead and sent."))
    term.type("hello")
    term.send("Enter")
    wake.write_text("")
    term.wait_for("Typed ahead and sent.")
    assert loopback.last.json["messages"][-1]["content"] == "hello"
    wait_for_prompt(term, prompt)
    wake.unlink()
    term.type("/nap")
    term.send("Enter")
    term.wait_for("napping 2")
    term.send("C-d")
    wake.write_text("")
    assert term.exit_status() == 0


def test_a_dumb_terminal_gets_the_line_mode_in_plain_text(terminal_run, loopback):
    term = terminal_run(term="dumb")
    wait_for_prompt(term, ">")
    loopback.push(text_answer("Plain **text** here."))
    term.type("hello")
    term.send("Enter")
    screen = term.wait_for("Plain **text** here.")  # no colours, no redraw: the markdown as written
    assert "-- local/local-model" in term.wait_for("-- local/local-model")
    assert "\x1b" not in screen
    term.send("C-d")
    assert term.exit_status() == 0
