"""What the installed packages bring to this start: read from the record, nothing imported.

:func:`load_installed` puts the managed environment on ``sys.path`` (when a Python package
is enabled), and lists the enabled plugins and the resource folders packages declare
(entry-point group ``wolli.resources``: a package folder holding ``skills/``, ``prompts/``,
``themes/`` and ``mcp.json``), located through the distribution's files, not by import.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..base.entry_points import entry_points_of
from .sources import canonical_name

if TYPE_CHECKING:  # imported when a package is recorded: a Wolli without any pays nothing
    from importlib.metadata import EntryPoint

    from .claude_plugin import ClaudePlugin
    from .records import PackageRecord

RESOURCES_GROUP = "wolli.resources"


@dataclass
class InstalledPackages:
    """The packages installed for an agent, what they bring and what was wrong with them."""

    records: list[PackageRecord] = field(default_factory=list)
    site_packages: Path | None = None
    plugins: list[ClaudePlugin] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)
    _resource_dirs: list[Path] | None = None

    @property
    def disabled(self) -> set[str]:
        """Canonical names of the Python packages switched off."""
        return {r.key for r in self.records if not r.enabled and r.kind == "python"}

    def skips(self, entry_point: EntryPoint) -> bool:
        """Whether an entry point belongs to a package switched off."""
        disabled = self.disabled
        if not disabled:
            return False
        dist = getattr(entry_point, "dist", None)
        name = dist.metadata["Name"] if dist is not None else None
        return bool(name) and canonical_name(str(name)) in disabled

    def resource_dirs(self) -> list[Path]:
        """The folders named by ``wolli.resources`` entry points of enabled packages."""
        if self._resource_dirs is None:
            found = []
            for ep in sorted(entry_points_of(RESOURCES_GROUP), key=lambda e: e.name):
                if self.skips(ep) or ep.dist is None:
                    continue
                folder = Path(str(ep.dist.locate_file(ep.value.split(":")[0].strip().replace(".", "/"))))
                if folder.is_dir():
                    found.append(folder)
                else:
                    self.problems.append(f"{ep.dist.metadata['Name']}: the wolli.resources entry point {ep.name} "
                                         f"names {ep.value!r}, which is not a folder of the package")
            self._resource_dirs = found
        return self._resource_dirs

    def skill_dirs(self) -> list[Path]:
        return [d / "skills" for d in self.resource_dirs()] + [s for p in self.plugins for s in p.skill_dirs]

    def subagent_sources(self) -> list[Path]:
        """Subagent definitions: packages' ``subagents/`` folders and plugins' ``agents/`` files."""
        return [d / "subagents" for d in self.resource_dirs()] + [f for p in self.plugins for f in p.agent_files]

    def prompt_dirs(self) -> list[Path]:
        return [d / "prompts" for d in self.resource_dirs()]

    def theme_dirs(self) -> list[Path]:
        return [d / "themes" for d in self.resource_dirs()]

    def mcp_files(self) -> list[tuple[str, str]]:
        """(JSON text, where) of every package's and plugin's MCP servers."""
        out = []
        for folder in self.resource_dirs():
            path = folder / "mcp.json"
            if path.is_file():
                out.append((path.read_text("utf-8", "replace"), str(path)))
        out += [(p.mcp_text, p.mcp_where) for p in self.plugins if p.mcp_text is not None]
        return out


def load_installed(agent_home: Path, value: object) -> InstalledPackages:
    if not value or not isinstance(value, list):
        return InstalledPackages()
    from .claude_plugin import read_plugin
    from .environment import activate, packages_dir
    from .records import read_records

    records = read_records(value)
    out = InstalledPackages(records=records)
    if not records:
        return out
    python = [r for r in records if r.kind == "python" and r.enabled]
    if python:
        out.site_packages = activate(agent_home)
        if out.site_packages is None:
            out.problems.append(f"{len(python)} package(s) are recorded in settings but not installed in "
                                f"{packages_dir(agent_home)}: run `wolli install` to install them from the lock")
    for record in records:
        if record.kind != "claude-plugin" or not record.enabled:
            continue
        root = packages_dir(agent_home) / "plugins" / record.name
        if not root.is_dir():
            out.problems.append(f"the plugin {record.name} is recorded in settings but not installed: "
                                "run `wolli install` to install it from the lock")
            continue
        try:
            plugin = read_plugin(root)
        except ValueError as exc:
            out.problems.append(str(exc))
            continue
        out.plugins.append(plugin)
        out.problems += plugin.errors
    return out


def installed_theme_dirs(agent_home: Path, value: object) -> list[Path]:
    """Theme folders of enabled packages (for front ends that list themes before a host loads)."""
    if not value:
        return []
    return [d for d in load_installed(agent_home, value).theme_dirs() if d.is_dir()]
