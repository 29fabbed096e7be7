"""Reading a Claude Code plugin folder: ``.claude-plugin/plugin.json`` and what sits beside it.

``skills/<name>/SKILL.md`` become skills, ``commands/*.md`` prompt templates (as ``/name``
and ``/plugin:name``), ``agents/*.md`` are listed (kept for subagents), ``.mcp.json`` (or
``mcpServers`` in plugin.json) are MCP servers, ``hooks/hooks.json`` (or ``hooks`` in
plugin.json) command hooks. Paths in plugin.json (``commands``, ``agents``, ``skills``: a
string or a list) add to the default folders. Nothing here runs anything.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..base.json_input import parse_json
from ..base.safe_files import read_text_capped
from .claude_hooks import CommandHook, parse_hooks, read_hooks_file

MANIFEST = Path(".claude-plugin") / "plugin.json"
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*$")
_LIMIT = 1024 * 1024


def is_plugin(path: Path) -> bool:
    return (path / MANIFEST).is_file()


@dataclass
class ClaudePlugin:
    name: str
    root: Path
    version: str | None = None
    description: str = ""
    skill_dirs: list[Path] = field(default_factory=list)
    command_files: list[Path] = field(default_factory=list)
    agent_files: list[Path] = field(default_factory=list)
    mcp_text: str | None = None  # the {"mcpServers": ...} JSON, ${CLAUDE_PLUGIN_ROOT} expanded
    mcp_where: str = ""
    hooks: list[CommandHook] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)

    def agents(self) -> list[str]:
        return [p.stem for p in self.agent_files]


def read_manifest(root: Path) -> dict[str, Any]:
    path = root / MANIFEST
    try:
        data = parse_json(read_text_capped(path, _LIMIT))
    except (OSError, ValueError) as exc:
        raise ValueError(f"{path}: cannot be read as JSON ({exc})") from None
    if not isinstance(data, dict):
        raise ValueError(f"{path}: must hold a JSON object")
    name = data.get("name")
    if not isinstance(name, str) or not _NAME.match(name):
        raise ValueError(f"{path}: needs a \"name\" (letters, digits, '-', '_' or '.')")
    return data


def read_plugin(root: Path) -> ClaudePlugin:
    """Everything a plugin folder brings; problems go to ``errors`` (the rest still loads)."""
    manifest = read_manifest(root)
    plugin = ClaudePlugin(name=manifest["name"], root=root,
                          version=manifest.get("version") if isinstance(manifest.get("version"), str) else None,
                          description=str(manifest.get("description") or ""))
    where = str(root / MANIFEST)

    def folders(key: str, default: str) -> list[Path]:
        found = [root / default]
        extra = manifest.get(key)
        extra_list = [extra] if isinstance(extra, str) else extra if isinstance(extra, list) else []
        for item in extra_list:
            if isinstance(item, str):
                path = (root / item).resolve()
                if not path.is_relative_to(root.resolve()):
                    plugin.errors.append(f"{where}: {key} path {item!r} leaves the plugin folder; skipped")
                    continue
                found.append(path)
        return found

    for path in folders("skills", "skills"):
        if path.is_dir():
            plugin.skill_dirs.append(path)
    for key, default, out in (("commands", "commands", plugin.command_files), ("agents", "agents", plugin.agent_files)):
        for path in folders(key, default):
            if path.is_file() and path.suffix == ".md":
                out.append(path)
            elif path.is_dir():
                out.extend(sorted(p for p in path.rglob("*.md") if p.is_file()))
    _read_mcp(plugin, manifest, where)
    _read_hooks(plugin, manifest, where)
    return plugin


def expand_root(text: str, root: Path) -> str:
    return text.replace("${CLAUDE_PLUGIN_ROOT}", str(root))


def _read_mcp(plugin: ClaudePlugin, manifest: dict[str, Any], where: str) -> None:
    inline = manifest.get("mcpServers")
    root = plugin.root
    if isinstance(inline, dict):
        plugin.mcp_text, plugin.mcp_where = json.dumps({"mcpServers": inline}), where
    elif isinstance(inline, str):
        path = (root / inline).resolve()
        if path.is_relative_to(root.resolve()) and path.is_file():
            plugin.mcp_text, plugin.mcp_where = read_text_capped(path, _LIMIT), str(path)
        else:
            plugin.errors.append(f"{where}: mcpServers file {inline!r} not found in the plugin")
    elif (root / ".mcp.json").is_file():
        plugin.mcp_text, plugin.mcp_where = read_text_capped(root / ".mcp.json", _LIMIT), str(root / ".mcp.json")
    if plugin.mcp_text is not None:
        plugin.mcp_text = expand_root(plugin.mcp_text, root)


def _read_hooks(plugin: ClaudePlugin, manifest: dict[str, Any], where: str) -> None:
    root = str(plugin.root)
    inline = manifest.get("hooks")
    if isinstance(inline, dict):
        hooks, problems = parse_hooks(inline.get("hooks", inline), where, root)
    elif isinstance(inline, str):
        hooks, problems = read_hooks_file(plugin.root / inline, root)
    elif (plugin.root / "hooks" / "hooks.json").is_file():
        hooks, problems = read_hooks_file(plugin.root / "hooks" / "hooks.json", root)
    else:
        hooks, problems = [], []
    plugin.hooks += hooks
    plugin.errors += problems
