"""Which servers this run uses: the agent home, the project (once approved), --mcp-config.

:func:`collect` only reads small JSON files: it never imports the SDK, so a Wolli whose
configuration names no server costs nothing more at start-up.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from .approval import Approvals, Verdict
from .config import ConfigFile, load_cli_config, load_file, merge, parse_text
from .files import AGENT_FILE, PROJECT_FILE
from .types import ServerConfig


@dataclass
class Sources:
    servers: list[ServerConfig] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # The project's file when it has servers; ``project_verdict`` says whether they run.
    project: ConfigFile | None = None
    project_verdict: Verdict = "unknown"

    @property
    def project_pending(self) -> bool:
        return self.project is not None and self.project_verdict == "unknown"


def collect(agent_home: Path, cwd: str, cli_configs: list[str], *, strict: bool = False,
            approve_project: bool = False, environ: Mapping[str, str] | None = None,
            package_files: Sequence[tuple[str, str]] = ()) -> Sources:
    """``package_files``: (JSON text, where) of installed packages' and plugins' servers; they
    come after the agent's own file (which wins a name clash) and before the project's."""
    out = Sources()
    groups: list[list[ServerConfig]] = []
    if not strict:
        packaged: list[ServerConfig] = []
        for text, where in package_files:
            found = parse_text(text, where, "package", environ)
            out.warnings += found.errors
            packaged += found.servers
        agent = load_file(agent_home / AGENT_FILE, "agent", environ)
        out.warnings += agent.errors
        groups += [packaged, agent.servers]
        project = load_file(Path(cwd) / PROJECT_FILE, "project", environ)
        out.warnings += project.errors
        if project.servers:
            out.project = project
            out.project_verdict = "approved" if approve_project else Approvals(agent_home).verdict(cwd, project.text)
            if out.project_verdict == "approved":
                groups.append(project.servers)
    cli: list[ServerConfig] = []
    for value in cli_configs:
        found = load_cli_config(value, environ)
        if not found.servers and not found.errors and not value.lstrip().startswith("{") \
                and not os.path.exists(os.path.expanduser(value)):
            found.errors.append(f"{value}: --mcp-config file not found")
        out.warnings += found.errors
        cli += found.servers
    groups.append(cli)
    out.servers = merge(groups)
    return out


def approve_project(agent_home: Path, cwd: str, project: ConfigFile, approved: bool) -> None:
    Approvals(agent_home).record(cwd, project.text, approved)
