"""A stdio server that never answers the handshake is named when the start-up wait ends.

Found by hand: a server writing only non-protocol text to stdout (``echo not json; sleep``)
held ``wolli -p`` for the whole ``startupTimeoutMs`` and the request then went out without
its tools, with not one line saying so; docs/mcp.md promises a line for a server answering
garbage.
"""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.cli import wolli
from tests.support.openai_chat import text_answer, write_models_json


def test_a_server_that_never_answers_is_reported_in_print_mode(project: Path, wolli_home: Path, loopback):
    write_models_json(wolli_home, loopback.url + "/v1")
    (wolli_home / "settings.json").write_text(json.dumps({"mcp": {"startupTimeoutMs": 500}}))
    silent = {"mcpServers": {"mute": {"command": "sh", "args": ["-c", "echo this is not json-rpc; exec sleep 30"]}}}
    loopback.push(text_answer("answered anyway"))
    result = wolli(["--model", "local/local-model", "--mcp-config", json.dumps(silent), "-p", "hi"], project,
                   timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "answered anyway\n"
    assert ("wolli: MCP server mute: no answer to the MCP handshake within 0.5 s; going on without its tools "
            "for now") in result.stderr.splitlines()
