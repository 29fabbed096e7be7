"""Where MCP configuration lives, and whether a run has any: a check that imports nothing.

Start-up asks :func:`may_have_servers` first; only then are the configuration's modules
(``config``, ``types``, ``sources``: ~7 ms of imports) loaded.
"""

from __future__ import annotations

import os
from pathlib import Path

PROJECT_FILE = ".mcp.json"  # in the working folder
AGENT_FILE = "mcp.json"  # in the agent home


def may_have_servers(agent_home: Path, cwd: str, cli_configs: list[str], *, strict: bool = False) -> bool:
    """False only when no file could name a server (anything at either path counts, even
    something that is not a regular file: reading it is what reports the problem)."""
    if cli_configs:
        return True
    if strict:
        return False
    return os.path.lexists(agent_home / AGENT_FILE) or os.path.lexists(os.path.join(cwd, PROJECT_FILE))
