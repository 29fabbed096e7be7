"""What the MCP tests share: the model flag, reading what the model received, the agent's mcp.json."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.mcp.conftest import write_mcp

MODEL = ["--model", "local/local-model"]


def tools_of(request: Any) -> list[dict[str, Any]]:
    return [t["function"] for t in request.json.get("tools") or []]


def tool_names(request: Any) -> list[str]:
    return [t["name"] for t in tools_of(request)]


def tool_texts(request: Any) -> list[str]:
    out = []
    for message in request.json["messages"]:
        if message["role"] == "tool":
            content = message["content"]
            out.append(content if isinstance(content, str) else json.dumps(content))
    return out


def agent_config(home: Path, servers: dict[str, Any]) -> Path:
    folder = home / "agents" / "default"
    folder.mkdir(parents=True, exist_ok=True)
    return write_mcp(folder / "mcp.json", servers)
