"""Headless modes whose stdout cannot take the answer: closed at start, or failing on write.

Found by running ``wolli -p hi >&-`` and ``wolli -p hi > /dev/full``: both ended in a
Python traceback (``'NoneType' object has no attribute 'isatty'``, ``OSError: [Errno 28]``).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.cli import session_files
from tests.support.openai_chat import text_answer, write_models_json

MODEL = ["--model", "local/local-model"]


@pytest.fixture
def local_model(wolli_home: Path, loopback) -> None:
    write_models_json(wolli_home, loopback.url + "/v1")


def _run(args: list[str], cwd: Path, stdout: int | object, *, close_stdout: bool = False,
         stdin: str = "") -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "wolli", *args]
    if close_stdout:  # the shell's ``>&-``: descriptor 1 is not open in the child at all
        command = ["sh", "-c", 'exec "$@" >&-', "sh", *command]
    return subprocess.run(command, cwd=cwd, input=stdin, stdout=stdout, stderr=subprocess.PIPE,
                          text=True, timeout=60, env=os.environ.copy())


@pytest.mark.parametrize("mode", [["-p", "hi"], ["--mode", "json", "hi"], ["--mode", "rpc"]])
def test_a_closed_stdout_is_refused_before_anything_is_sent(project, wolli_home, loopback, local_model, mode):
    loopback.push(text_answer("never read"))
    result = _run([*MODEL, *mode], project, subprocess.DEVNULL, close_stdout=True,
                  stdin='{"type": "get_state"}\n')
    assert result.returncode == 1, result.stderr
    assert result.stderr.strip().splitlines() == [
        "wolli: stdout is closed: there is nowhere to write the answer "
        "(redirect it to a file or to /dev/null instead)"]
    assert loopback.requests == []
    assert session_files(wolli_home) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_print_mode_says_when_stdout_cannot_take_the_answer(project, wolli_home, loopback, local_model):
    loopback.push(text_answer("kept in the session"))
    with open("/dev/full", "w") as full:
        result = _run([*MODEL, "-p", "hi"], project, full)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == \
        "wolli: cannot write the answer to stdout: No space left on device"
    [session] = session_files(wolli_home)
    assert "kept in the session" in session.read_text()  # the answer is not lost


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full (Linux)")
def test_json_mode_stops_before_sending_when_stdout_cannot_take_events(project, wolli_home, loopback, local_model):
    loopback.push(text_answer("never asked for"))
    with open("/dev/full", "w") as full:
        result = _run([*MODEL, "--mode", "json", "hi"], project, full)
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines()[-1] == \
        "wolli: cannot write events to stdout: No space left on device"
    assert loopback.requests == []
