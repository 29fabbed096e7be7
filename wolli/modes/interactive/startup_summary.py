"""What an interactive client says at start (unless settings ``quietStartup``): which
context files, skills, templates and extensions this session runs with, and where help is."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ...runtime.host.agent_host import AgentHost
    from ...runtime.live.live_session import LiveSession


def _short(path: str) -> str:
    home = os.path.expanduser("~")
    return "~" + path[len(home):] if path.startswith(home + os.sep) else path


def _names(items: list[str], limit: int = 8) -> str:
    shown = ", ".join(items[:limit])
    return shown + (f" and {len(items) - limit} more" if len(items) > limit else "")


def startup_summary(host: AgentHost, session: LiveSession) -> str:
    from ...__about__ import __version__

    resources = host.resources(session.cwd)
    lines = [f"Wolli {__version__} · / for commands · /hotkeys for keys · Ctrl+S command palette"]
    if resources.context_files:
        lines.append("context  " + _names([_short(f.path) for f in resources.context_files]))
    if resources.skills:
        lines.append("skills   " + _names([s.name for s in resources.skills]))
    if resources.prompts:
        lines.append("prompts  " + _names(["/" + p.name for p in resources.prompts]))
    infos = host.extensions.infos()
    if infos:
        failed = [i["name"] for i in infos if i["status"] == "failed"]
        loaded = [i["name"] for i in infos if i["status"] == "loaded"]
        text = "extensions " + _names(loaded) if loaded else "extensions none loaded"
        if failed:
            text += f" · failed: {_names(failed)} (/extensions)"
        lines.append(text)
    return "\n".join(lines)
