"""End to end: the transcript's rows moved by the terminal's scroll region stay right.

Two panes run the same conversation against the loopback server, one moving the scrolled rows
with a scroll region (the default) and one drawing every moved row again
(``WOLLI_TERMINAL_SCROLL=0``, the way every row used to be drawn). tmux is a real terminal
emulator: while a long answer streams, after a resize and another answer, and with the
completion menu open over a streaming answer, both panes must show the same transcript.
"""

from __future__ import annotations

import os
import shutil
import sys
import time

import pytest

from tests.support.loopback import sse_reply
from tests.support.openai_chat import _chunk, write_models_json
from tests.support.waiting import wait_for_value_sync

from .tmux_terminal import TmuxTerminal

pytestmark = pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux (apt-get install tmux)")


def stalled(text: str):
    """An answer streamed in small paced writes that then stops coming, the run still going:
    the screen holds the last frames drawn while the rows scrolled (a finished answer is
    drawn again as markdown, which would hide a wrong row)."""
    pieces = [_chunk({"role": "assistant", "content": ""})]
    pieces += [_chunk({"content": text[start:start + 9]}) for start in range(0, len(text), 9)]
    return sse_reply("".join(pieces), chunk_sizes=(120, 120), pause=0.01, hang=True)


def answer(marker: str, lines: int) -> str:
    return " ".join(f"{marker}{i:03d} lorem ipsum dolor" for i in range(lines * 3)) + f" ZZ{marker}END"


def transcript(screen: str) -> list[str]:
    """The rows above the working row (its spinner and timer differ between two panes)."""
    rows = screen.splitlines()
    working = next(y for y, row in enumerate(rows) if "Working" in row or "Esc to interrupt" in row)
    return rows[:working]


def settled(terminal: TmuxTerminal, text: str) -> list[str]:
    """The transcript's rows once ``text`` is on screen and two looks 0.3 s apart agree."""
    terminal.wait_for(text, timeout=60)
    previous: list[list[str]] = [[]]

    def look() -> list[str]:
        time.sleep(0.3)
        return transcript(terminal.screen())

    def same(rows: list[str]) -> bool:
        done = rows == previous[0]
        previous[0] = rows
        return done

    return wait_for_value_sync(look, same, 20, lambda rows: "the screen kept changing:\n" + "\n".join(rows), 0.05)


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

        def turn(prompt: str, marker: str, lines: int, while_streaming=None) -> list[list[str]]:
            for pane in panes:
                loopback.push(stalled(answer(marker, lines)))
                pane.type(prompt)
                pane.send("Enter")
                if while_streaming is not None:
                    pane.wait_for(f"{marker}030")
                    while_streaming(pane)
            shown = [settled(pane, f"ZZ{marker}END") for pane in panes]
            for pane in panes:
                pane.send("C-u")  # an empty editor (and no menu): Esc stops the stalled run
                pane.send("Escape")
                pane.wait_gone("Esc to interrupt")
            return shown

        scrolled, drawn = turn("a long answer please", "A", 60)
        assert any("ZZAEND" in row for row in scrolled) and scrolled == drawn

        for pane in panes:
            pane._tmux("resize-window", "-t", pane.name, "-x", "80", "-y", "24")
        scrolled, drawn = turn("and another after the resize", "B", 40)
        assert scrolled == drawn

        scrolled, drawn = turn("a third", "C", 40, while_streaming=lambda pane: (pane.type("/mo"), pane.wait_for("/model")))
        assert scrolled == drawn
    finally:
        for pane in panes:
            pane.close()
