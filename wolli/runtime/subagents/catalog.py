"""Which subagents exist for a working directory, and where each was defined.

Sources, later ones winning on a name (docs/subagents.md, "Where definitions live"):

1. the built-in ``general-purpose`` subagent;
2. folders added by packages and Claude Code plugins (:meth:`SubagentCatalog.add_directory`);
3. the paths of settings ``subagents.paths`` (folders or single files);
4. the agent home's ``subagents/`` folder;
5. the project's ``.claude/agents/`` (Claude Code's place), once the user approved that
   folder's files: a repository's definitions steer what the model does, so, like a
   project's ``.mcp.json``, they are used only after a yes, asked again when they change;
6. ``wolli.register_subagent(...)`` of extensions.

A broken file is skipped and reported (``errors``), never fatal. Results are cached per
folder until :meth:`clear` (``/reload``).
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from ...config.subagent_files import SubagentDefinition, SubagentFileError, load_subagent_file

if TYPE_CHECKING:
    from ...config.settings import Settings

APPROVALS_FILE = "subagent-approvals.json"
PROJECT_FOLDER = (".claude", "agents")
# A folder of definitions is read to this depth (Claude Code plugins group them in folders).
_MAX_DEPTH = 2
_MAX_FILES = 500

GENERAL_PURPOSE = SubagentDefinition(
    name="general-purpose",
    description=(
        "General-purpose agent for researching complex questions, searching for code and carrying out "
        "multi-step tasks on its own. Use it when a search or a piece of work would fill your context "
        "with files and output you will not need afterwards."
    ),
    system_prompt=(
        "You are a subagent of Wolli, a coding agent: another agent handed you one task. Do it completely "
        "with the tools you have, then answer with what that agent needs to continue: the findings or "
        "the result, the exact file paths involved, and anything left undone. Your answer is all the other "
        "agent sees of your work, so make it self-contained and concise; do not ask questions back."
    ),
    source="builtin",
)

ProjectVerdict = Literal["approved", "denied", "unknown", "none"]


@dataclass
class Loaded:
    definitions: dict[str, SubagentDefinition] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    # The project's folder and what the user said about its files.
    project_dir: Path | None = None
    project_verdict: ProjectVerdict = "none"
    project_names: list[str] = field(default_factory=list)


class SubagentCatalog:
    def __init__(self, home: Path, settings: Settings, registered: dict[str, SubagentDefinition] | None = None,
                 installed: Callable[[], list[Path]] | None = None) -> None:
        self.home = home
        self.settings = settings
        # Files and folders of definitions from installed packages and Claude Code plugins,
        # asked at each read (an install or /reload changes them).
        self.installed = installed
        # Extensions' definitions (the extension registry's live dict: a reload empties it).
        self.registered: dict[str, SubagentDefinition] = registered if registered is not None else {}
        self._directories: list[Path] = []
        self._cache: dict[str, Loaded] = {}

    # ------------------------------------------------------------------ sources

    def register(self, definition: SubagentDefinition) -> None:
        """An extension's subagent (``wolli.register_subagent``); replaces one of that name."""
        self.registered[definition.name] = definition
        self._cache.clear()

    def unregister(self, name: str) -> bool:
        self._cache.clear()
        return self.registered.pop(name, None) is not None

    def add_directory(self, folder: str | os.PathLike[str]) -> None:
        """A folder of definition files from a package or a Claude Code plugin."""
        path = Path(folder)
        if path not in self._directories:
            self._directories.append(path)
            self._cache.clear()

    def clear(self) -> None:
        """Read the files again at the next use (``/reload``)."""
        self._cache.clear()

    # ------------------------------------------------------------------ reading

    def load(self, cwd: str) -> Loaded:
        key = os.path.abspath(cwd)
        found = self._cache.get(key)
        if found is None:
            found = self._cache[key] = self._read(key)
        return found

    def definitions(self, cwd: str) -> dict[str, SubagentDefinition]:
        return self.load(cwd).definitions

    def find(self, cwd: str, name: str) -> SubagentDefinition | None:
        """A subagent by name; Claude Code's spellings differ in case now and then."""
        definitions = self.definitions(cwd)
        found = definitions.get(name)
        if found is None:
            lowered = name.strip().lower()
            found = next((d for n, d in definitions.items() if n.lower() == lowered), None)
        return found

    def _read(self, cwd: str) -> Loaded:
        loaded = Loaded()
        out = loaded.definitions
        out[GENERAL_PURPOSE.name] = GENERAL_PURPOSE
        for folder in self._directories:
            self._take(folder, out, loaded.errors)
        for entry in self.installed() if self.installed is not None else []:
            self._take(entry, out, loaded.errors)
        for entry in self._setting_paths():
            self._take(entry, out, loaded.errors)
        self._take(self.home / "subagents", out, loaded.errors)
        project = project_agents_dir(cwd)
        if project is not None:
            files = _definition_files(project)
            if files:
                loaded.project_dir = project
                loaded.project_verdict = self.project_verdict(project, files)
                found: dict[str, SubagentDefinition] = {}
                self._take(project, found, loaded.errors)
                loaded.project_names = sorted(found)
                if loaded.project_verdict == "approved":
                    out.update(found)
        out.update(self.registered)
        return loaded

    def _setting_paths(self) -> list[Path]:
        value = (self.settings.get("subagents") or {}).get("paths") if self.settings is not None else None
        return [Path(str(p)).expanduser() for p in value or [] if isinstance(p, str)]

    @staticmethod
    def _take(where: Path, out: dict[str, SubagentDefinition], errors: list[str]) -> None:
        files = [where] if where.is_file() else _definition_files(where)
        for path in files:
            try:
                definition = load_subagent_file(path)
            except SubagentFileError as exc:
                errors.append(str(exc))
                continue
            out[definition.name] = definition

    # ------------------------------------------------------------------ project approval

    def project_verdict(self, folder: Path, files: list[Path] | None = None) -> ProjectVerdict:
        from ...mcp.approval import Approvals

        return Approvals(self.home, APPROVALS_FILE).verdict(str(folder), _fingerprint_text(files or _definition_files(folder)))

    def approve_project(self, cwd: str, approved: bool = True) -> list[str]:
        """Record the user's answer about the project's definitions as they are now; their names."""
        from ...mcp.approval import Approvals

        folder = project_agents_dir(cwd)
        if folder is None:
            return []
        files = _definition_files(folder)
        Approvals(self.home, APPROVALS_FILE).record(str(folder), _fingerprint_text(files), approved)
        self._cache.clear()
        return self.load(cwd).project_names


def project_agents_dir(cwd: str) -> Path | None:
    """``.claude/agents`` of the project ``cwd`` belongs to (the working directory first)."""
    from ...permissions.project import find_project_root

    for base in dict.fromkeys((os.path.abspath(cwd), find_project_root(cwd))):
        folder = Path(base, *PROJECT_FOLDER)
        if folder.is_dir():
            return folder
    return None


def _definition_files(folder: Path, depth: int = 0) -> list[Path]:
    """``*.md`` files of a folder and its subfolders (to ``_MAX_DEPTH``), in name order."""
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError:
        return []
    out: list[Path] = []
    for entry in entries:
        if entry.name.startswith("."):
            continue
        try:
            if entry.is_file() and entry.name.endswith(".md"):
                out.append(Path(entry.path))
            elif entry.is_dir() and depth + 1 < _MAX_DEPTH:
                out += _definition_files(Path(entry.path), depth + 1)
        except OSError:
            continue
        if len(out) >= _MAX_FILES:
            break
    return out[:_MAX_FILES]


def _fingerprint_text(files: list[Path]) -> str:
    """What an approval is bound to: every file's name and bytes (any edit asks again)."""
    from ...base.safe_files import read_head
    from ...config.subagent_files import MAX_FILE_BYTES

    parts = []
    for path in files:
        try:
            data = read_head(path, MAX_FILE_BYTES)[0]
        except OSError:
            data = b""
        parts.append(f"{path.name}\0{data.decode('utf-8', 'replace')}")
    return "\0\0".join(parts)
