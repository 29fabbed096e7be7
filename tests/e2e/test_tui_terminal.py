"""End to end in a real terminal: ``wolli`` under tmux against a loopback OpenAI-compatible
server. Type a prompt, see the streamed answer and a tool row, answer an extension's confirm
dialog, and quit cleanly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer, tool_call_answer

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")

EXAMPLES = Path(__file__).resolve().parents[2] / "extensions"


def test_prompt_answer_and_quit(terminal_run, loopback):
    term = terminal_run()
    term.wait_for("local/local-model")
    loopback.push(text_answer("The answer is forty-two."))
    term.type("what is the answer?")
    term.send("Enter")
    term.wait_for("The answer is forty-two.")
    assert "what is the answer?" in term.screen()
    term.send("C-d")
    assert term.exit_status() == 0


def test_a_tool_row_and_an_extension_confirm_dialog(terminal_run, loopback):
    term = terminal_run("-e", str(EXAMPLES / "permission_gate.py"))
    build = terminal_run.project / "build"
    build.mkdir()
    term.wait_for("local/local-model")
    loopback.push(tool_call_answer("bash", {"command": "rm -rf build"}), text_answer("Cleaned up."))
    term.type("clean the build folder")
    term.send("Enter")
    term.wait_for("Dangerous command")
    term.send("y")
    term.wait_for("Cleaned up.")
    screen = term.screen()
    assert "$ rm -rf build" in screen
    assert not build.exists()
    term.send("C-c")
    term.send("C-c")
    assert term.exit_status() == 0


GREETER = '''
def extension(wolli):
    wolli.register_command("greet", handler=lambda args, ctx: ctx.ui.notify("hi"), description="say VERSION")
'''


def test_model_tree_reload_and_resume_commands(terminal_run, loopback, wolli_home, tmp_path):
    import json

    models = json.loads((wolli_home / "models.json").read_text())
    models["providers"]["local"]["models"].append({"id": "local-other", "contextWindow": 32000})
    (wolli_home / "models.json").write_text(json.dumps(models))
    greeter = tmp_path / "greeter.py"
    greeter.write_text(GREETER.replace("VERSION", "one"))
    term = terminal_run("-e", str(greeter))
    term.wait_for("local/local-model")
    loopback.push(text_answer("First answer."))
    term.type("first question")
    term.send("Enter")
    term.wait_for("First answer.")

    term.type("/model")
    term.send("Enter")
    term.wait_for("Choose a model")
    term.type("other")
    term.send("Enter")
    term.wait_for("Model: local/local-other")

    term.type("/tree")
    term.send("Enter")
    term.wait_for("Session tree")
    assert "first question" in term.screen()
    term.send("Escape")
    term.wait_gone("Session tree")

    greeter.write_text(GREETER.replace("VERSION", "two"))
    term.type("/reload")
    term.send("Enter")
    term.wait_for("Reloaded")
    term.type("/gree")
    term.wait_for("say two")
    term.send("C-c")

    term.type("/new")
    term.send("Enter")
    term.wait_for("New session started")
    term.type("/resume")
    term.send("Enter")
    term.wait_for("Resume a session")
    term.type("first")
    term.send("Enter")
    term.wait_for("First answer.")
    term.send("C-c")
    term.send("C-c")
    assert term.exit_status() == 0


def test_ctrl_g_with_an_editor_that_cannot_start_gives_the_screen_back(terminal_run):
    # The editor runs with the app suspended; an editor that does not exist raised inside
    # Textual's suspend(), which then never resumed: a blank terminal in cooked mode, the app
    # still running but deaf to every key.
    term = terminal_run(env={"EDITOR": "/nonexistent/editor", "VISUAL": ""})
    term.wait_for("local/local-model")
    term.type("draft prompt")
    term.send("C-g")
    screen = term.wait_for("cannot start the editor")
    assert "draft prompt" in screen and "local/local-model" in screen
    term.send("C-c")  # clear the editor, then twice to quit: the app has the keys again
    term.send("C-c")
    term.send("C-c")
    assert term.exit_status() == 0


def test_with_stderr_sent_to_a_file_the_app_still_draws_on_the_terminal(terminal_run, loopback, tmp_path, wolli_home):
    # Textual draws on stderr: `wolli 2>wolli.log` left the terminal blank and filled the log
    # with the screen's escape codes.
    import os
    import shlex
    import sys

    from .tmux_terminal import TmuxTerminal

    project = terminal_run.project  # the fixture wrote models.json and made this folder
    log = tmp_path / "wolli.log"
    command = f"exec {shlex.quote(sys.executable)} -m wolli --model local/local-model 2>{shlex.quote(str(log))}"
    term = TmuxTerminal(["sh", "-c", command], cwd=str(project),
                        env={"WOLLI_HOME": str(wolli_home), "HOME": os.environ["HOME"]})
    try:
        term.wait_for("local/local-model")
        loopback.push(text_answer("Drawn on the terminal."))
        term.type("hello")
        term.send("Enter")
        term.wait_for("Drawn on the terminal.")
        term.send("C-d")
        assert term.exit_status() == 0
        assert "\x1b[" not in log.read_text(errors="replace")
    finally:
        term.close()
