"""``--export SESSION OUT``: an OUT that is a FIFO, a device or a symlink is written through.

Found by hand: ``wolli --export s.jsonl /dev/full`` printed ``/dev/full`` and exited 0: the
page was written to a temporary file beside the target and renamed over it, so (as root) the
device node itself became a regular HTML file. A FIFO or a symlink was replaced the same way.
"""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from tests.support.cli import session_files, wolli
from tests.support.openai_chat import text_answer, write_models_json


@pytest.fixture
def session(project: Path, wolli_home: Path, loopback) -> Path:
    write_models_json(wolli_home, loopback.url + "/v1")
    loopback.push(text_answer("worth exporting"))
    assert wolli(["--model", "local/local-model", "-p", "hi"], project).returncode == 0
    [path] = session_files(wolli_home)
    return path


def test_a_fifo_is_written_into_not_replaced(project, session, tmp_path):
    fifo = tmp_path / "page.fifo"
    os.mkfifo(fifo)
    received: list[bytes] = []

    def read() -> None:
        with open(fifo, "rb") as stream:  # blocks until the export opens it for writing
            received.append(stream.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    result = wolli(["--export", str(session), str(fifo)], project)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(os.stat(fifo).st_mode)  # still the FIFO
    reader.join(10)
    assert received and b"worth exporting" in received[0]


def test_a_symlink_is_kept_and_its_target_written(project, session, tmp_path):
    real = tmp_path / "real.html"
    link = tmp_path / "link.html"
    link.symlink_to(real)
    result = wolli(["--export", str(session), str(link)], project)
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and "worth exporting" in real.read_text()


# No case writes to a real device (/dev/full): the old code, run as root, replaced the node
# itself, and a regression must not be able to damage the machine the tests run on. The FIFO
# above is the same path through the code (a special file is written into).
