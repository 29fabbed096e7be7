"""Escape sequences in what a model writes, a tool prints or a file is named never act on
the terminal: in the TUI, the line mode and print mode on a tty they are shown as symbols
(``␛[2J``); through a pipe the answer stays byte for byte what the model wrote."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
import time

import pytest

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.waiting import wait_until_sync

from .conftest import MODEL, Project

# Clear the screen, colour red, retitle the window, set the clipboard (OSC 52), a one-byte CSI.
HOSTILE = "\x1b[2J\x1b[31mRED\x1b[0m \x1b]0;PWNED\x07 \x1b]52;c;ZXZpbA==\x07 \x9b31m \x08\x07"
SHOWN = "␛[2J␛[31mRED␛[0m ␛]0;PWNED␇ ␛]52;c;ZXZpbA==␇ \\x9b31m ␈␇"


def script(project: Project) -> None:
    (project.root / "notes.txt").write_text(f"file: {HOSTILE}\n")
    project.server.push(tool_call_answer("read", {"path": "notes.txt"}), text_answer(f"model: {HOSTILE}"))


def test_print_mode_on_a_tty_shows_escapes_and_a_pipe_gets_the_answer_as_written(hostile):
    script(hostile)
    main, child = pty.openpty()
    try:
        process = subprocess.Popen([sys.executable, "-m", "wolli", *MODEL, "-p", "go"], cwd=hostile.root,
                                   stdout=child, stderr=child, stdin=subprocess.DEVNULL, env=os.environ.copy())
        os.close(child)
        output = b""
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                chunk = os.read(main, 65536)
            except OSError:  # the child closed its end
                break
            if not chunk:
                break
            output += chunk
        assert process.wait(10) == 0
    finally:
        os.close(main)
    text = output.decode("utf-8", "replace")
    assert f"model: {SHOWN}" in text
    assert "\x1b" not in text and "\x9b" not in text and "\x07" not in text
    script(hostile)
    piped = hostile.run(*MODEL, "-p", "go", seconds=30)
    assert piped.stdout == f"model: {HOSTILE}\n"  # data through a pipe is not changed


def _tmux_run(project: Project, *args: str):
    tmux = pytest.importorskip("tests.e2e.tmux_terminal")
    env = {"WOLLI_HOME": str(project.home), "HOME": os.environ["HOME"]}
    return tmux.TmuxTerminal([sys.executable, "-m", "wolli", *MODEL, *args], cwd=str(project.root), env=env)


@pytest.mark.parametrize("mode", ["tui", "plain"])
def test_the_tui_and_the_line_mode_show_escapes_instead_of_obeying_them(hostile, mode):
    script(hostile)
    terminal = _tmux_run(hostile, *(["--plain"] if mode == "plain" else []))
    try:
        title = terminal._tmux("display-message", "-p", "-t", terminal.name, "#{pane_title}")
        terminal.wait_for("Ctrl+D" if mode == "plain" else "/ for commands")
        terminal.type("go")
        terminal.send("Enter")
        screen = terminal.wait_for("model: ␛[2J")
        if mode == "tui":
            terminal.send("C-o")  # expand the tool row: the file's line
        wait_until_sync(lambda: "file: ␛[2J" in terminal.screen(), 10, "the tool output")
        screen = terminal.screen()
        assert "␛]0;PWNED␇" in screen and "␛]52;c;ZXZpbA==␇" in screen
        assert "\\x9b31m" in screen
        assert terminal._tmux("display-message", "-p", "-t", terminal.name, "#{pane_title}") == title
        coloured = terminal._tmux("capture-pane", "-p", "-e", "-t", terminal.name)
        assert "\x1b[31mRED" not in coloured  # the model's colour code did not colour anything
        assert "Wolli" in screen or "wolli" in screen  # not cleared away
    finally:
        terminal.close()
