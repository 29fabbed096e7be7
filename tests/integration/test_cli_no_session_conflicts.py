"""``--no-session`` with ``--session`` or ``--continue``: a usage error, nothing written.

Found by hand: ``wolli --session FILE --no-session -p hi`` appended the new turn to FILE
although ``--no-session`` promises to keep nothing on disk, and ``-c --no-session`` dropped
``-c`` without a word (a fresh, empty session answered).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.cli import session_files, wolli
from tests.support.openai_chat import text_answer, write_models_json

MODEL = ["--model", "local/local-model"]


@pytest.mark.parametrize("given", [["--session", "SESSION"], ["-c"]])
def test_no_session_with_a_session_to_continue_is_refused(project, wolli_home: Path, loopback, given):
    write_models_json(wolli_home, loopback.url + "/v1")
    loopback.push(text_answer("first"), text_answer("never asked"))
    assert wolli([*MODEL, "-p", "first"], project).returncode == 0
    [session] = session_files(wolli_home)
    before = session.read_bytes()
    args = [str(session) if arg == "SESSION" else arg for arg in given]
    result = wolli([*MODEL, *args, "--no-session", "-p", "again"], project)
    option = "--session" if "--session" in given else "--continue"
    assert (result.returncode, result.stderr.strip()) == (
        2, f"wolli: {option} and --no-session contradict each other: give one of them")
    assert session.read_bytes() == before and len(loopback.requests) == 1
