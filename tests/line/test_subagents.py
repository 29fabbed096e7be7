"""Subagents in line mode: one line per step of a child, never its tokens."""

from __future__ import annotations

from tests.support.subagents import write_definition
from wolli.ai.providers.faux import faux_tool_call
from wolli.config import paths


async def test_one_line_per_child_step(line, faux, project):
    (project / "notes.txt").write_text("hello\n")
    write_definition(paths.agent_home() / "subagents", "scout", "You scout.", tools="Read")
    term = await line()
    call = {"subagent_type": "scout", "description": "read the notes", "prompt": "read notes.txt"}
    faux.push([faux_tool_call("task", call)], [faux_tool_call("read", {"path": "notes.txt"})],
              "The notes say hello, a long answer the parent will summarise.", "The scout says hello.")
    await term.send("send the scout")
    text = await term.wait_for("The scout says hello.")
    assert "* task scout · read the notes\n" in text
    assert "  | scout started: read the notes on faux/faux-1\n" in text
    assert "  | scout › read notes.txt\n" in text
    assert "  | scout › The notes say hello, a long answer the parent will summarise.\n" in text
    assert "  | scout done (" in text
    # The child's answer streamed as tokens: none of them reached the screen on their own.
    assert text.count("The notes say hello") == 2  # its step line, and the task's result below
