"""Two real processes appending to one session file never interleave a line."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from wolli.ai.types import AssistantMessage, TextContent, UserMessage
from wolli.session.manager import SessionManager

WRITER = textwrap.dedent(
    """
    import sys
    from wolli.session.manager import SessionManager

    path, tag = sys.argv[1], sys.argv[2]
    manager = SessionManager.open(path)
    sys.stdout.write("ready\\n")
    sys.stdout.flush()
    sys.stdin.readline()  # both start appending at the same moment
    for i in range(500):
        # Sizes up to 20 KiB, every 50th 300 KiB: beyond a page and a pipe buffer.
        size = 300_000 if i % 50 == 0 else 1 + (i * 7919) % 20_000
        manager.append_custom_entry("writer", {"tag": tag, "i": i, "pad": tag * size})
    """
)


def test_two_processes_append_500_lines_each(tmp_path):
    manager = SessionManager.create("/proj", tmp_path / "sessions")
    manager.append_message(UserMessage(content="hi"))
    manager.append_message(AssistantMessage(content=[TextContent(text="hello")]))
    path = manager.get_session_file()

    procs = [
        subprocess.Popen(
            [sys.executable, "-c", WRITER, path, tag],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )
        for tag in ("a", "b")
    ]
    for proc in procs:
        assert proc.stdout.readline() == "ready\n"
    for proc in procs:
        proc.stdin.write("go\n")
        proc.stdin.flush()
    for proc in procs:
        _, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err

    with open(path, encoding="utf-8") as handle:
        lines = handle.read().split("\n")
    assert lines[-1] == ""
    parsed = [json.loads(line) for line in lines[:-1]]  # every line is whole JSON
    assert len(parsed) == 1 + 2 + 1000
    for tag in ("a", "b"):
        mine = [d["data"]["i"] for d in parsed if d["type"] == "custom" and d["data"]["tag"] == tag]
        assert mine == list(range(500))

    reopened = SessionManager.open(path)
    assert reopened.load_errors == [] and len(reopened.get_entries()) == 1002
