"""The record of installed packages: ``packages`` in the agent's settings, and the lock.

Settings hold what the user asked for, one object per package::

    {"name": "wolli-examples", "kind": "python", "source": "git+https://host/repo.git",
     "sourceKind": "git", "ref": "v1", "version": "1.0.0", "enabled": true}

(``kind`` is ``python`` or ``claude-plugin``; ``indexUrl`` when one was given.) The lock,
``packages.lock.json`` beside settings.json, holds what is installed exactly: every
distribution of the environment with its version, where it came from (a git commit, an
archive URL and its hash, as the installer recorded it in ``direct_url.json``) and a
content hash of its installed files, and every plugin with its commit and content hash.
``wolli install`` without a source installs the lock in a fresh agent home and checks each
content hash, so an agent home copied to another machine gets the same code.
"""

from __future__ import annotations

import hashlib
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..base.json_input import parse_json
from ..base.safe_files import read_text_capped
from ..config.settings import write_json_atomic
from .sources import canonical_name

if TYPE_CHECKING:
    from importlib.metadata import Distribution

LOCK_FILE = "packages.lock.json"
LOCK_VERSION = 1
_LOCK_LIMIT = 4 * 1024 * 1024
# Files an installer writes itself (they differ between pip and uv, and between machines).
_INSTALLER_FILES = {"INSTALLER", "REQUESTED", "RECORD", "direct_url.json", "uv_cache.json", "uv_build.json"}


@dataclass
class PackageRecord:
    name: str
    kind: str = "python"  # python | claude-plugin
    source: str = ""
    source_kind: str = "index"
    ref: str | None = None  # the branch, tag or commit asked for (git)
    commit: str | None = None  # the commit installed (git)
    version: str | None = None
    index_url: str | None = None
    enabled: bool = True

    @classmethod
    def from_json(cls, data: object) -> PackageRecord | None:
        if not isinstance(data, dict) or not isinstance(data.get("name"), str):
            return None
        return cls(
            name=data["name"], kind=str(data.get("kind") or "python"), source=str(data.get("source") or ""),
            source_kind=str(data.get("sourceKind") or "index"),
            ref=data.get("ref") if isinstance(data.get("ref"), str) else None,
            commit=data.get("commit") if isinstance(data.get("commit"), str) else None,
            version=data.get("version") if isinstance(data.get("version"), str) else None,
            index_url=data.get("indexUrl") if isinstance(data.get("indexUrl"), str) else None,
            enabled=data.get("enabled") is not False,
        )

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "kind": self.kind, "source": self.source,
                               "sourceKind": self.source_kind}
        if self.ref:
            out["ref"] = self.ref
        if self.commit:
            out["commit"] = self.commit
        if self.version:
            out["version"] = self.version
        if self.index_url:
            out["indexUrl"] = self.index_url
        out["enabled"] = self.enabled
        return out

    @property
    def key(self) -> str:
        return canonical_name(self.name)


def read_records(value: object) -> list[PackageRecord]:
    """settings ``packages`` as records (entries that are not objects with a name are skipped)."""
    if not isinstance(value, list):
        return []
    return [r for r in (PackageRecord.from_json(v) for v in value) if r is not None]


# ---------------------------------------------------------------------------- the lock


@dataclass
class Lock:
    distributions: list[dict[str, Any]] = field(default_factory=list)
    plugins: list[dict[str, Any]] = field(default_factory=list)
    created_settings: bool = False  # install made settings.json: remove takes it away again
    created_settings_lock: bool = False  # ... and settings.json.lock (config/file_lock.py)

    def to_json(self) -> dict[str, Any]:
        return {"version": LOCK_VERSION, "python": f"{sys.version_info[0]}.{sys.version_info[1]}",
                "createdSettings": self.created_settings, "createdSettingsLock": self.created_settings_lock,
                "distributions": self.distributions, "plugins": self.plugins}


def lock_path(agent_home: Path) -> Path:
    return agent_home / LOCK_FILE


def read_lock(agent_home: Path) -> Lock | None:
    try:
        data = parse_json(read_text_capped(lock_path(agent_home), _LOCK_LIMIT))
    except FileNotFoundError:
        return None
    except (OSError, ValueError) as exc:
        raise ValueError(f"{lock_path(agent_home)}: cannot be read ({exc}); run `wolli update` to write it again") from None
    if not isinstance(data, dict):
        raise ValueError(f"{lock_path(agent_home)}: not a lock file (expected a JSON object)")
    dists = [d for d in data.get("distributions") or [] if isinstance(d, dict) and isinstance(d.get("name"), str)]
    plugins = [p for p in data.get("plugins") or [] if isinstance(p, dict) and isinstance(p.get("name"), str)]
    return Lock(dists, plugins, data.get("createdSettings") is True, data.get("createdSettingsLock") is True)


def write_lock(agent_home: Path, lock: Lock) -> None:
    write_json_atomic(lock_path(agent_home), lock.to_json())


def installed_distributions(site_packages: Path) -> list[Any]:
    """The distributions of the managed environment alone (not Wolli's own)."""
    from importlib.metadata import distributions

    if not site_packages.is_dir():
        return []
    found: dict[str, Any] = {}
    for dist in distributions(path=[str(site_packages)]):
        name = dist.metadata["Name"]
        if name:
            found.setdefault(canonical_name(name), dist)
    return [found[k] for k in sorted(found)]


def lock_entry(dist: Distribution) -> dict[str, Any]:
    entry: dict[str, Any] = {"name": dist.metadata["Name"], "version": dist.version,
                             "contentHash": distribution_hash(dist)}
    origin = direct_url(dist)
    if origin is not None:
        entry["directUrl"] = origin
    return entry


def direct_url(dist: Distribution) -> dict[str, Any] | None:
    text = dist.read_text("direct_url.json")
    if not text:
        return None
    try:
        data = parse_json(text)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def distribution_hash(dist: Distribution) -> str:
    """sha256 over the (path, hash) lines of RECORD for the files the wheel brought:
    the same for pip and uv and on every machine (scripts, bytecode and the installer's own
    files are left out: they are rewritten per installation)."""
    text = dist.read_text("RECORD") or ""
    lines = []
    for row in text.splitlines():
        parts = row.rsplit(",", 2)
        if len(parts) != 3 or not parts[1]:
            continue
        path, digest = parts[0], parts[1]
        if path.startswith("..") or "__pycache__" in path or path.endswith(".pyc"):
            continue
        if ".dist-info/" in path and path.rsplit("/", 1)[-1] in _INSTALLER_FILES:
            continue
        lines.append(f"{path},{digest}")
    return "sha256:" + hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def folder_hash(root: Path) -> str:
    """sha256 over every file's relative path and content hash (a plugin folder; ``.git`` skipped)."""
    lines = []
    for folder, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if d != ".git")
        for name in sorted(files):
            path = Path(folder) / name
            if path.is_symlink():
                lines.append(f"{path.relative_to(root).as_posix()},link:{os.readlink(path)}")
                continue
            digest = hashlib.sha256(path.read_bytes()).hexdigest()
            lines.append(f"{path.relative_to(root).as_posix()},{digest}")
    return "sha256:" + hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def requirement_for(entry: dict[str, Any]) -> str:
    """What to give the installer to get exactly this lock entry."""
    name, version = entry["name"], entry.get("version")
    origin = entry.get("directUrl") or {}
    url = origin.get("url") if isinstance(origin, dict) else None
    if isinstance(url, str) and url:
        vcs = origin.get("vcs_info")
        if isinstance(vcs, dict) and vcs.get("commit_id"):
            return f"{name} @ {vcs.get('vcs', 'git')}+{url}@{vcs['commit_id']}"
        return f"{name} @ {url}"
    return f"{name}=={version}"


def declared_entry_points(dist: Distribution) -> dict[str, list[str]]:
    """The ``wolli.*`` entry points of a distribution, by group."""
    out: dict[str, list[str]] = {}
    for ep in dist.entry_points:
        if ep.group.startswith("wolli."):
            out.setdefault(ep.group, []).append(ep.name)
    return out
