"""examples/rpc_chat.py, run as a user would: a chat, a tool call, a confirm dialog."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import MODEL, write_models

ROOT = Path(__file__).resolve().parents[2]


def test_the_rpc_chat_example_answers_and_asks_the_confirm_on_the_terminal(project, wolli_home, loopback):
    write_models(wolli_home, loopback.url + "/v1")
    (project / "build").mkdir()
    loopback.push(text_answer("Hello from the model."),
                  tool_call_answer("bash", {"command": "rm -rf build"}), text_answer("Cleaned up."))
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / "rpc_chat.py"), *MODEL, "-e", str(ROOT / "extensions" / "permission_gate.py")],
        cwd=project, input="hi\n/state\nclean up\ny\n\n", capture_output=True, text=True, timeout=120,
        env=os.environ.copy(),
    )
    assert done.returncode == 0, done.stderr
    assert "Hello from the model." in done.stdout
    assert "'sessionId'" in done.stdout
    assert "? Dangerous command" in done.stdout and "[tool] bash" in done.stdout
    assert "Cleaned up." in done.stdout
    assert not (project / "build").exists()
