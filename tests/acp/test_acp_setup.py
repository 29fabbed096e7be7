"""The set-ups docs/acp.md gives editors: the snippets parse as the editors read them, and
the ``wolli-acp`` command they name answers ``initialize``."""

from __future__ import annotations

import json
import re
import sys
import tomllib
from pathlib import Path

import pytest
from acp import PROTOCOL_VERSION, spawn_agent_process

from tests.support.acp_client import EditorClient

DOC = Path(__file__).resolve().parents[2] / "docs" / "acp.md"


def blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", DOC.read_text("utf-8"), re.S)


def test_zed_snippet_is_a_custom_agent_running_wolli_acp() -> None:
    [snippet] = blocks("json")
    servers = json.loads(snippet)["agent_servers"]
    [(name, entry)] = servers.items()
    assert name == "Wolli"
    assert entry["type"] == "custom" and entry["command"].endswith("/.venv/bin/wolli-acp")
    assert entry["args"] == [] and entry["env"] == {}


def test_toad_entry_is_an_acp_agent_running_wolli_acp() -> None:
    [entry] = [tomllib.loads(b) for b in blocks("toml")]
    assert entry["protocol"] == "acp" and entry["type"] == "coding"
    assert entry["run_command"]["*"].endswith("/.venv/bin/wolli-acp")
    for key in ("identity", "name", "short_name", "url", "author_name", "author_url", "publisher_name",
                "publisher_url", "description", "tags", "help"):
        assert key in entry, key


@pytest.mark.timeout(60)
async def test_the_wolli_acp_command_answers_initialize(project: Path) -> None:
    command = Path(sys.executable).parent / "wolli-acp"
    assert command.exists(), "pip install -e . installs the wolli-acp console script (pyproject)"
    async with spawn_agent_process(EditorClient(), str(command), cwd=project) as (conn, _):
        answer = await conn.initialize(protocol_version=PROTOCOL_VERSION)
    assert answer.agent_info.name == "wolli" and answer.agent_capabilities.load_session is True
