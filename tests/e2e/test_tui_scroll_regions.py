"""End to end: the transcript's rows moved by the terminal's scroll region stay right.

Two panes run the same conversation against the loopback server, one moving the scrolled rows
with a scroll region (the default) and one drawing every moved row again
(``WOLLI_TERMINAL_SCROLL=0``, the way every row used to be drawn). tmux is a real terminal
emulator: after a long streamed answer, after a resize and another answer, and with the
completion menu open over a streaming answer, both panes must show the same screen.
"""

from __future__ import annotations

import os
import shutil
import sys

import pytest

from tests.support.openai_chat import text_answer, write_models_json
from tests.support.waiting import wait_for_value_sync

from .tmux_terminal import TmuxTerminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")


def paced(text: str):
    reply = text_answer(text)
    reply.chunk_sizes = (90, 90)  # a few tokens a write, 100 writes a second: frames that scroll
    reply.pause = 0.01
    return reply


def answer(marker: str, lines: int) -> str:
    words = " ".join(f"{marker}{i:03d} lorem ipsum dolor" for i in range(lines * 3))
    return f"{words}\n\nThe end of {marker} ZZ{marker}END"


def settled(terminal: TmuxTerminal, text: str) -> str:
    """The screen once ``text`` is on it and two looks 0.3 s apart agree."""
    terminal.wait_for(text, timeout=60)
    previous = [""]

    def look() -> str:
        import time

        time.sleep(0.3)
        return terminal.screen()

    def same(screen: str) -> bool:
        done = screen == previous[0]
        previous[0] = screen
        return done

    return wait_for_value_sync(look, same, 20, lambda screen: f"the screen kept changing:\n{screen}", 0.05)


def test_scrolled_rows_match_a_pane_drawing_every_row(tmp_path, wolli_home, loopback):
    write_models_json(wolli_home, loopback.url + "/v1")
    project = tmp_path / "project"
    project.mkdir()
    panes: list[TmuxTerminal] = []
    try:
        for scroll in ("1", "0"):
            env = {"WOLLI_HOME": str(wolli_home), "HOME": os.environ["HOME"]}
            command = ["env", f"WOLLI_TERMINAL_SCROLL={scroll}", sys.executable, "-m", "wolli",
                       "--model", "local/local-model"]
            panes.append(TmuxTerminal(command, cwd=str(project), env=env, width=90, height=28))
        for pane in panes:
            pane.wait_for("local/local-model")

        def turn(prompt: str, marker: str, lines: int, before_end=None) -> list[str]:
            for pane in panes:
                loopback.push(paced(answer(marker, lines)))
                pane.type(prompt)
                pane.send("Enter")
                if before_end is not None:
                    pane.wait_for(f"{marker}010")
                    before_end(pane)
            return [settled(pane, f"ZZ{marker}END") for pane in panes]

        scrolled, drawn = turn("a long answer please", "A", 60)
        assert "ZZAEND" in scrolled and scrolled == drawn

        for pane in panes:
            pane._tmux("resize-window", "-t", pane.name, "-x", "80", "-y", "24")
        scrolled, drawn = turn("and another after the resize", "B", 40)
        assert scrolled == drawn

        scrolled, drawn = turn("a third", "C", 40, before_end=lambda pane: pane.type("/"))
        assert scrolled == drawn
    finally:
        for pane in panes:
            pane.close()
