"""End to end with an independent client: the TypeScript ACP SDK from npm drives Wolli.

The SDK is installed once per machine into the test npm cache (like the npm MCP servers of
tests/mcp); without node/npm, or when the registry cannot be reached, the test is skipped
saying why (.ci/run installs node and npm).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.acp_client import MODEL
from tests.support.openai_chat import text_answer, tool_call_answer
from tests.support.rpc import write_models

# Pinned: the client API (``client()``/``connectWith``) is that of the 2.x line.
SDK = "@agentclientprotocol/sdk@2.4.0"
CACHE = Path(os.environ.get("WOLLI_TEST_NPM_CACHE", Path.home() / ".cache" / "wolli-tests" / "npm")) / "acp-ts"
SCRIPT = Path(__file__).with_name("ts_client.mjs")


@pytest.fixture(scope="session")
def ts_sdk() -> Path:
    """The folder holding ``node_modules/@agentclientprotocol/sdk`` (installed on first use)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not found: the TypeScript ACP client cannot run (install nodejs and npm)")
    if not (CACHE / "node_modules" / "@agentclientprotocol" / "sdk" / "package.json").exists():
        CACHE.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--silent", SDK],
                                  capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install of the TypeScript ACP SDK timed out (registry unreachable?)")
        if done.returncode != 0:
            pytest.skip(f"npm install of the TypeScript ACP SDK failed: {done.stderr.strip()[-300:]}")
    return CACHE


@pytest.mark.timeout(120)
def test_typescript_client_prompts_answers_permission_and_streams(ts_sdk: Path, project: Path, wolli_home: Path,
                                                                   loopback) -> None:
    write_models(wolli_home, loopback.url)
    loopback.push(tool_call_answer("write", {"path": "from_ts.txt", "content": "written for the TS client\n"}),
                  text_answer("The TypeScript editor allowed the write, and here is the streamed answer."))
    script = ts_sdk / "ts_client.mjs"  # beside node_modules, so the import resolves
    shutil.copyfile(SCRIPT, script)
    done = subprocess.run(["node", str(script), sys.executable, str(project), "write the file", *MODEL],
                          capture_output=True, text=True, timeout=100, env=os.environ.copy())
    assert done.returncode == 0, done.stderr[-2000:]
    seen = json.loads(done.stdout.strip().splitlines()[-1])
    assert seen["loadSession"] is True
    assert seen["stopReason"] == "end_turn"
    assert seen["permissions"] and seen["permissions"][0]["options"][:1] == ["allow_once"]
    assert seen["toolCalls"] == [{"kind": "edit", "title": "write from_ts.txt"}]
    assert seen["text"] == "The TypeScript editor allowed the write, and here is the streamed answer."
    assert seen["exitCode"] == 0
    assert (project / "from_ts.txt").read_text() == "written for the TS client\n"
