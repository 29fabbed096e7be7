"""JSON nested deeper than the parser's recursion limit is bad JSON like any other.

Found by hand: a ``settings.json`` (or ``auth.json``, ``keybindings.json``, ``models.json``,
``.mcp.json``) holding ``[[[[...]]]]`` 100,000 deep (200 KB) ended every start in a
``RecursionError`` traceback, and an RPC line like it printed a traceback on stderr and
answered "internal error". ``json.loads`` raises ``RecursionError`` there, not
``JSONDecodeError``, so the "not valid JSON" handling never ran.
"""

from __future__ import annotations

import json

import pytest

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, write_models_json
from tests.support.rpc import MODEL, start_client, write_models
from wolli.base.json_input import parse_json

DEEP = "[" * 100_000 + "]" * 100_000


def test_parse_json_reports_deep_nesting_as_a_decode_error():
    with pytest.raises(json.JSONDecodeError, match="nested too deeply"):
        parse_json(DEEP)
    with pytest.raises(json.JSONDecodeError, match="nested too deeply"):
        parse_json(DEEP.encode())
    assert parse_json('{"a": [1]}') == {"a": [1]}


@pytest.mark.parametrize("where", ["settings.json", "auth.json", "keybindings.json", "project/.mcp.json"])
def test_a_deeply_nested_config_file_is_reported_and_ignored(project, wolli_home, loopback, where):
    write_models_json(wolli_home, loopback.url + "/v1")
    loopback.push(text_answer("still answering"))
    path = project / ".mcp.json" if where.startswith("project/") else wolli_home / where
    path.write_text(DEEP if not where.endswith(".mcp.json") else '{"mcpServers": ' + DEEP + "}")
    result = wolli(["--model", "local/local-model", "-p", "hi"], project)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "still answering\n"
    assert "Traceback" not in result.stderr
    assert f"{path}:1:1: not valid JSON (nested too deeply)" in result.stderr


def test_a_deeply_nested_rpc_line_is_a_parse_error(project, wolli_home, loopback):
    write_models(wolli_home, loopback.url + "/v1")
    with start_client(project, *MODEL) as client:
        client.send_raw(('{"type": "get_state", "x": ' + DEEP + "}\n").encode())
        parse = client.wait_for(lambda r: r.get("type") == "response" and r.get("command") == "parse", timeout=20)
        assert parse["error"] == "Failed to parse command: not JSON: nested too deeply at column 1"
        assert client.get_state()["messageCount"] == 0  # still serving
        assert "Traceback" not in client.stderr
