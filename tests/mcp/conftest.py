"""MCP test fixtures: real servers from the registries and a loopback model.

``mcp-server-time`` and ``mcp-server-git`` come with the test extras (pyproject). The npm
servers (``@modelcontextprotocol/server-everything``, ``server-filesystem``) are installed
once per machine into a cache folder with ``npm install --prefix``; without node/npm, or
when the registry cannot be reached, the tests that need them are skipped saying why.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

NPM_PACKAGES = ("@modelcontextprotocol/server-everything", "@modelcontextprotocol/server-filesystem")
CACHE = Path(os.environ.get("WOLLI_TEST_NPM_CACHE", Path.home() / ".cache" / "wolli-tests" / "npm"))
PYTHON_BIN = Path(sys.executable).parent


def python_server(name: str, *args: str) -> dict[str, Any]:
    return {"command": str(PYTHON_BIN / name), "args": list(args)}


@pytest.fixture(scope="session")
def npm_servers() -> dict[str, str]:
    """Paths of the npm servers' executables (installed on first use)."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        pytest.skip("node/npm not found: the npm MCP servers cannot run (install nodejs and npm)")
    bins = CACHE / "node_modules" / ".bin"
    wanted = {"everything": bins / "mcp-server-everything", "filesystem": bins / "mcp-server-filesystem"}
    if not all(p.exists() for p in wanted.values()):
        CACHE.mkdir(parents=True, exist_ok=True)
        try:
            done = subprocess.run(["npm", "install", "--prefix", str(CACHE), "--no-audit", "--no-fund", "--silent",
                                   *NPM_PACKAGES], capture_output=True, text=True, timeout=300)
        except subprocess.TimeoutExpired:
            pytest.skip("npm install of the MCP test servers timed out (registry unreachable?)")
        if done.returncode != 0 or not all(p.exists() for p in wanted.values()):
            pytest.skip(f"npm install of the MCP test servers failed: {done.stderr.strip()[-300:]}")
    return {name: str(path) for name, path in wanted.items()}


@pytest.fixture
def local_model(wolli_home: Path, loopback) -> None:
    """The loopback model server as ``local/local-model`` in WOLLI_HOME."""
    from tests.support.openai_chat import write_models_json

    write_models_json(wolli_home, loopback.url + "/v1")


@pytest.fixture
def bearer_server():
    from tests.mcp.http_server import BearerServer

    server = BearerServer()
    yield server
    server.close()


def write_mcp(path: Path, servers: dict[str, Any]) -> Path:
    path.write_text(json.dumps({"mcpServers": servers}))
    return path


@pytest.fixture
def oauth_server():
    from tests.mcp.oauth_server import OAuthServer

    server = OAuthServer()
    yield server
    server.close()


@pytest.fixture
def browser(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``$BROWSER`` set to a small script that does what a person's browser does: open the
    authorization URL and follow its redirect back to Wolli's loopback listener. Returns the
    file it logs each visit to (the status Wolli's listener answered)."""
    visits = tmp_path / "browser-visits.txt"
    script = tmp_path / "browser"
    script.write_text(f"""#!{sys.executable}
import sys, urllib.request
with urllib.request.urlopen(sys.argv[1], timeout=30) as reply:
    body = reply.read().decode()
with open({str(visits)!r}, "a") as log:
    log.write(f"{{reply.status}} {{body}}\\n")
""")
    script.chmod(0o755)
    monkeypatch.setenv("BROWSER", str(script))
    return visits
