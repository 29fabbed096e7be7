"""On TERM=dumb the line mode writes plain text: not one escape byte, read off a real pty (tmux
shows the screen, not the bytes that drew it)."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time

from tests.support.openai_chat import text_answer, write_models_json


class PtyRun:
    """``wolli`` on a pseudo-terminal; every byte it writes is kept."""

    def __init__(self, args: list[str], cwd: str, env: dict[str, str]) -> None:
        self.master, slave = pty.openpty()
        self.process = subprocess.Popen([sys.executable, "-m", "wolli", *args], cwd=cwd, env=env,
                                        stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
        os.close(slave)
        self.output = b""

    def read_until(self, needle: bytes, timeout: float = 20.0) -> bytes:
        deadline = time.monotonic() + timeout
        while needle not in self.output and time.monotonic() < deadline:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if ready:
                try:
                    self.output += os.read(self.master, 65536)
                except OSError:  # the program ended
                    break
        assert needle in self.output, f"{needle!r} never came; got {self.output[-2000:]!r}"
        return self.output

    def send(self, data: bytes) -> None:
        os.write(self.master, data)

    def finish(self, timeout: float = 15.0) -> int:
        try:
            code = self.process.wait(timeout)
        finally:
            if self.process.poll() is None:
                os.killpg(self.process.pid, signal.SIGKILL)
            try:
                while select.select([self.master], [], [], 0.05)[0]:
                    chunk = os.read(self.master, 65536)
                    if not chunk:
                        break
                    self.output += chunk
            except OSError:
                pass
            os.close(self.master)
        return code


def test_not_one_escape_byte_on_a_dumb_terminal(tmp_path, wolli_home, loopback):
    write_models_json(wolli_home, loopback.url + "/v1")
    project = tmp_path / "project"
    project.mkdir()
    env = {**os.environ, "TERM": "dumb", "WOLLI_HOME": str(wolli_home)}
    env.pop("NO_COLOR", None)
    run = PtyRun(["--model", "local/local-model"], str(project), env)
    try:
        run.read_until(b"\n> ")
        loopback.push(text_answer("Plain **text** [here]."))
        run.send(b"hello\r")
        run.read_until(b"Plain **text** [here].")
        run.read_until(b"-- local/local-model")
        run.read_until(b"\n> ", timeout=10)
        run.send(b"/model\r")
        run.read_until(b"Number, or words")
        run.send(b"\x1b")  # cancels the list
        run.read_until(b"> ")
        run.send(b"\x04")
    finally:
        code = run.finish()
    assert code == 0, run.output[-2000:]
    assert b"\x1b" not in run.output, run.output[max(0, run.output.find(b"\x1b") - 200):][:400]
