"""A real terminal for end-to-end runs: ``tmux`` with a detached session we type into and read."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import uuid

from tests.support.waiting import wait_for_value_sync


class TmuxTerminal:
    def __init__(self, command: list[str], *, cwd: str, env: dict[str, str], width: int = 100, height: int = 30) -> None:
        if shutil.which("tmux") is None:
            raise RuntimeError("tmux is not installed (apt-get install tmux)")
        self.name = f"wolli-e2e-{uuid.uuid4().hex[:8]}"
        self.env = {**os.environ, **env, "TERM": "xterm-256color"}
        self.env.pop("TMUX", None)
        shell = " ".join(shlex.quote(part) for part in command)
        subprocess.run(["tmux", "-L", self.name, "new-session", "-d", "-s", self.name, "-x", str(width),
                        "-y", str(height), "-c", cwd, shell], check=True, env=self.env)
        subprocess.run(["tmux", "-L", self.name, "set-option", "-t", self.name, "remain-on-exit", "on"],
                       check=True, env=self.env)

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.name, *args], capture_output=True, text=True,
                              env=self.env).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", self.name)

    def send(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", self.name, *keys)

    def type(self, text: str) -> None:
        self._tmux("send-keys", "-t", self.name, "-l", text)

    def wait_for(self, text: str, timeout: float = 20.0) -> str:
        return wait_for_value_sync(self.screen, lambda screen: text in screen, timeout,
                                   lambda screen: f"{text!r} did not appear on the screen:\n{screen}", 0.05)

    def wait_gone(self, text: str, timeout: float = 20.0) -> str:
        """Wait until ``text`` is off the screen (a dialog closed). Also what to do after Esc
        before typing on: Esc followed at once by a key reads as Alt+key."""
        return wait_for_value_sync(self.screen, lambda screen: text not in screen, timeout,
                                   lambda screen: f"{text!r} stayed on the screen:\n{screen}", 0.05)

    def exit_status(self, timeout: float = 15.0) -> int:
        def pane() -> list[str]:
            return (self._tmux("display-message", "-p", "-t", self.name,
                               "#{pane_dead} #{pane_dead_status}").split() + ["", ""])[:2]

        _, status = wait_for_value_sync(pane, lambda state: state[0] == "1", timeout,
                                        lambda state: f"wolli did not exit:\n{self.screen()}", 0.05)
        return int(status or 0)

    def close(self) -> None:
        self._tmux("kill-server")
