"""What an extension prints never mixes with the answer (-p) or the events (--mode json).

Found by hand: an extension calling ``print`` (at load and in a ``session_start`` handler) or
writing to descriptor 1 put its lines into ``wolli -p``'s answer and between the JSON lines of
``--mode json``, although print mode promises "the final answer on stdout and everything else
on stderr" and RPC mode already kept such output off its protocol channel.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, write_models_json

NOISY = """import os


def extension(wolli):
    print("noise at load")

    def started(event, ctx):
        print("noise in a handler")
        os.write(1, b"noise on descriptor 1\\n")

    wolli.on("session_start", started)
"""
NOISE = ["noise at load", "noise in a handler", "noise on descriptor 1"]


@pytest.fixture
def noisy(tmp_path: Path, wolli_home: Path, loopback) -> Path:
    write_models_json(wolli_home, loopback.url + "/v1")
    loopback.push(text_answer("the answer"))
    path = tmp_path / "noisy.py"
    path.write_text(NOISY)
    return path


def test_print_mode_stdout_holds_only_the_answer(project, noisy):
    result = wolli(["--model", "local/local-model", "-e", str(noisy), "-p", "hi"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "the answer\n"
    assert [line for line in result.stderr.splitlines() if line.startswith("noise")] == NOISE


def test_json_mode_stdout_holds_only_json_lines(project, noisy):
    result = wolli(["--model", "local/local-model", "-e", str(noisy), "--mode", "json", "hi"], project)
    assert result.returncode == 0, result.stderr
    records = [json.loads(line) for line in result.stdout.splitlines()]  # each line is JSON
    assert records[0]["type"] == "session" and records[-1]["type"] == "session_shutdown"
    assert [line for line in result.stderr.splitlines() if line.startswith("noise")] == NOISE
