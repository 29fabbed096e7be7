"""Extension-author mistakes that used to pass in silence: each is now one line on stderr.

Found by hand with two ``-e`` files under ``wolli -p``: a second extension registering a tool
name the first one had took it over without a word (the same for a flag or a shortcut is
reported), and a ``tool_call`` gate returning a plain value (``"yes please"``, ``True``
meant as "block") was ignored without a word, so the call ran.
"""

from __future__ import annotations

from pathlib import Path

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, tool_call_answer, write_models_json

MODEL = ["--model", "local/local-model"]


def _extension(folder: Path, name: str, body: str) -> Path:
    path = folder / f"{name}.py"
    path.write_text("def extension(wolli):\n" + body)
    return path


def test_a_tool_registered_twice_says_which_one_wins(project, wolli_home, loopback, tmp_path):
    write_models_json(wolli_home, loopback.url + "/v1")
    first = _extension(tmp_path, "first", "    wolli.register_tool({'name': 'count', 'description': 'c', "
                       "'execute': lambda *a: 'from first'})\n")
    second = _extension(tmp_path, "second", "    wolli.register_tool({'name': 'count', 'description': 'c', "
                        "'execute': lambda *a: 'from second'})\n")
    loopback.push(tool_call_answer("count", {}), text_answer("done"))
    result = wolli([*MODEL, "-e", str(first), "-e", str(second), "-p", "count"], project)
    assert result.returncode == 0, result.stderr
    assert "wolli: extension second: tool count was already registered by first; the later one wins" \
        in result.stderr.splitlines()
    tool_message = [m for m in loopback.requests[1].json["messages"] if m["role"] == "tool"][0]
    assert tool_message["content"] == "from second"


def test_one_extension_registering_its_tool_again_is_not_a_conflict(project, wolli_home, loopback, tmp_path):
    write_models_json(wolli_home, loopback.url + "/v1")
    again = _extension(tmp_path, "again", "    for text in ('old', 'new'):\n"
                       "        wolli.register_tool({'name': 'count', 'description': 'c', "
                       "'execute': lambda *a, t=text: t})\n")
    loopback.push(text_answer("done"))
    result = wolli([*MODEL, "-e", str(again), "-p", "hi"], project)
    assert result.returncode == 0 and "already registered" not in result.stderr, result.stderr


def test_a_gate_returning_a_plain_value_is_reported(project, wolli_home, loopback, tmp_path):
    write_models_json(wolli_home, loopback.url + "/v1")
    gate = _extension(tmp_path, "gate", "    wolli.on('tool_call', lambda event, ctx: True)\n")
    loopback.push(tool_call_answer("ls", {}), text_answer("done"))
    result = wolli([*MODEL, "-e", str(gate), "-p", "list"], project)
    assert result.returncode == 0, result.stderr
    assert (f"wolli: {gate}: tool_call handler failed: returned bool True instead of a dict "
            "(abort, allow, block, reason, result) or None; it was ignored") in result.stderr.splitlines()
