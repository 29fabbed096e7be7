"""End to end in a real terminal: ``wolli attach`` under tmux shows a run another client of
``wolli serve`` started, text from the model shown literally; what is typed there is a
prompt the other client sees."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.support.openai_chat import text_answer
from tests.support.rpc import write_models
from tests.support.serve import ServeProcess, records_until, settled

from .tmux_terminal import TmuxTerminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")


def test_attach_in_a_terminal_follows_a_run_started_elsewhere(tmp_path: Path, wolli_home: Path, loopback):
    project = tmp_path / "project"
    project.mkdir()
    write_models(wolli_home, loopback.url + "/v1")
    server = ServeProcess(project, project / "s.sock", "--model", "local/local-model")
    term = None
    try:
        other = server.client()
        session_id = other.call({"type": "attach", "new": True})["sessionId"]
        term = TmuxTerminal([sys.executable, "-m", "wolli", "attach", "--plain", "--socket", str(project / "s.sock"), session_id],
                            cwd=str(project), env={"WOLLI_HOME": os.environ["WOLLI_HOME"]})
        term.wait_for("2 client(s)")
        loopback.push(text_answer("plain \x1b[31mred\x1b[0m words"))
        other.call({"type": "prompt", "message": "started elsewhere"})
        screen = term.wait_for("words")
        assert "> started elsewhere" in screen
        assert "␛[31mred" in screen  # the model's escape sequence is shown, not obeyed
        records_until(other, settled)

        loopback.push(text_answer("typed answer"))
        term.type("typed in tmux")
        term.send("Enter")
        seen = records_until(other, settled)
        assert any(r["type"] == "message_start" and "typed in tmux" in str(r["message"]["content"]) for r in seen)
        term.wait_for("typed answer")
        term.type("/detach")
        term.send("Enter")
        assert term.exit_status() == 0
    finally:
        if term is not None:
            term.close()
        server.process.kill()
        server.process.wait(10)
