"""Installing, updating and removing packages of one agent (the CLI and ``/packages`` use it).

Every operation ends with the settings record and the lock written to match the
environment, so what the next start loads is what the record says. Nothing here loads an
extension: the caller reloads (the TUI) or loads them once to report problems (the CLI).
"""

from __future__ import annotations

import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from importlib.metadata import Distribution

from ..base.json_input import parse_json
from ..base.safe_files import CONFIG_FILE_LIMIT, read_text_capped
from ..config.settings import Settings
from .claude_plugin import is_plugin, read_manifest, read_plugin
from .environment import ManagedEnvironment, Output, packages_dir
from .records import (
    Lock,
    PackageRecord,
    declared_entry_points,
    distribution_hash,
    folder_hash,
    installed_distributions,
    lock_entry,
    lock_path,
    read_lock,
    read_records,
    requirement_for,
    write_lock,
)
from .sources import Source, SourceError, canonical_name, parse_source

Confirm = Callable[[str], bool]


class PackageError(RuntimeError):
    """An operation that did not happen; the message says why and what to do."""


@dataclass
class InstallResult:
    record: PackageRecord
    previous_version: str | None = None
    declares: dict[str, list[str]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)


def plugins_dir(agent_home: Path) -> Path:
    return packages_dir(agent_home) / "plugins"


class PackageManager:
    def __init__(self, agent_home: Path, settings: Settings, *, output: Output | None = None) -> None:
        self.home = agent_home
        self.settings = settings
        self.env = ManagedEnvironment(agent_home)
        self.output = output

    # ------------------------------------------------------------------ reading

    def records(self) -> list[PackageRecord]:
        return read_records(self.settings.file_values("agent").get("packages"))

    def find(self, name: str) -> PackageRecord:
        key = canonical_name(name)
        for record in self.records():
            if record.key == key:
                return record
        known = ", ".join(r.name for r in self.records()) or "none"
        raise PackageError(f"no package named {name!r} is installed (installed: {known}; see wolli list)")

    def plan(self, source: Source, index_url: str | None = None) -> str:
        """What an install will do, for the confirmation question."""
        where = self.env.venv if not self._looks_plugin(source) else plugins_dir(self.home)
        lines = [f"Install {source.describe()}", f"  into {where}"]
        if index_url:
            lines.append(f"  using the index {index_url}")
        lines.append("This runs third-party code with your permissions (build scripts now, extensions "
                     "and hooks whenever Wolli starts).")
        return "\n".join(lines)

    def _looks_plugin(self, source: Source) -> bool:
        return source.kind == "path" and is_plugin(Path(source.target))

    # ------------------------------------------------------------------ install

    def install(self, given: str, *, cwd: str = ".", index_url: str | None = None,
                confirm: Confirm | None = None) -> InstallResult:
        try:
            source = parse_source(given, cwd)
        except SourceError as exc:
            raise PackageError(str(exc)) from None
        if confirm is not None and not confirm(self.plan(source, index_url)):
            raise PackageError("not installed: cancelled")
        return self._install(source, index_url=index_url)

    def _install(self, source: Source, *, index_url: str | None, upgrade: bool = False,
                 enabled: bool = True) -> InstallResult:
        created_settings = not (self.home / "settings.json").exists()
        created_lock = not (self.home / "settings.json.lock").exists()
        with tempfile.TemporaryDirectory(prefix="wolli-install-") as scratch:
            folder: Path | None = None
            commit: str | None = None
            if source.kind == "git":
                folder, commit = self._clone(source, Path(scratch) / "clone")
            elif source.kind == "path" and Path(source.target).is_dir():
                folder = Path(source.target)
            if folder is not None and is_plugin(folder):
                result = self._install_plugin(source, folder, commit, enabled)
            else:
                result = self._install_python(source, folder, commit, index_url, upgrade, enabled)
        self._save_record(result.record)
        self.write_lock(created_settings=created_settings, created_lock=created_lock)
        return result

    def _clone(self, source: Source, into: Path) -> tuple[Path, str]:
        if shutil.which("git") is None:
            raise PackageError("installing from a git repository needs git on PATH")
        self._git(["clone", "--quiet", source.target, str(into)], what=f"cloning {source.target}")
        if source.ref:
            self._git(["-C", str(into), "checkout", "--quiet", source.ref], what=f"checking out {source.ref}")
        commit = self._git(["-C", str(into), "rev-parse", "HEAD"], what="reading the commit").strip()
        return into, commit

    def _git(self, args: list[str], *, what: str) -> str:
        done = subprocess.run(["git", *args], capture_output=True, text=True, errors="replace",
                              stdin=subprocess.DEVNULL, timeout=600,
                              env={**__import__("os").environ, "GIT_TERMINAL_PROMPT": "0"})
        if done.returncode != 0:
            raise PackageError(f"{what} failed: {done.stderr.strip()[-2000:] or done.stdout.strip()[-2000:]}")
        return done.stdout

    def _install_plugin(self, source: Source, folder: Path, commit: str | None, enabled: bool) -> InstallResult:
        try:
            manifest = read_manifest(folder)
        except ValueError as exc:
            raise PackageError(str(exc)) from None
        name = manifest["name"]
        target = plugins_dir(self.home) / name
        previous = self._find_quiet(name)
        staging = target.with_name(f".{name}.new")
        shutil.rmtree(staging, ignore_errors=True)
        staging.parent.mkdir(parents=True, exist_ok=True)
        shutil.copytree(folder, staging, ignore=shutil.ignore_patterns(".git"), symlinks=True)
        plugin = read_plugin(staging)
        declares = {"skills": [p.name for d in plugin.skill_dirs for p in sorted(d.iterdir()) if p.is_dir()],
                    "commands": [p.stem for p in plugin.command_files], "agents": plugin.agents(),
                    "hooks": sorted({h.event for h in plugin.hooks}),
                    "mcpServers": _server_names(plugin.mcp_text)}
        shutil.rmtree(target, ignore_errors=True)
        staging.rename(target)
        record = PackageRecord(name=name, kind="claude-plugin", source=source.target, source_kind=source.kind,
                               ref=source.ref, commit=commit, version=plugin.version, enabled=enabled)
        return InstallResult(record, previous.version if previous else None,
                             {k: v for k, v in declares.items() if v}, list(plugin.errors))

    def _install_python(self, source: Source, folder: Path | None, commit: str | None, index_url: str | None,
                        upgrade: bool, enabled: bool) -> InstallResult:
        if folder is not None:
            _check_pyproject(folder)  # before the venv and the installer: their traceback says less
        self.env.create(self.output)
        before = {canonical_name(d.metadata["Name"]): d.version for d in installed_distributions(self.env.site_packages)}
        if source.kind == "git":
            requirement = f"git+{_pip_git_url(source.target)}@{commit}"
            name = _project_name(folder) if folder else None
        elif source.kind == "path":
            requirement = source.target
            name = _project_name(Path(source.target))
        else:
            requirement, name = source.target, source.name
        try:
            self.env.install([requirement], index_url=index_url, upgrade=upgrade or source.kind != "index",
                             reinstall=name if source.kind != "index" else None, output=self.output)
        except RuntimeError as exc:
            raise PackageError(str(exc)) from None
        after = {canonical_name(d.metadata["Name"]): d for d in installed_distributions(self.env.site_packages)}
        if name is None:
            new = [k for k in after if k not in before]
            name = new[0] if len(new) == 1 else None
        dist = after.get(canonical_name(name)) if name else None
        if dist is None:
            raise PackageError(f"the installer finished but Wolli cannot tell which distribution {source.given!r} is; "
                               "install it by its name or from a folder with a pyproject.toml")
        declares = declared_entry_points(dist)
        warnings = [] if declares else [
            f"{dist.metadata['Name']} declares no wolli.* entry points: nothing of it will load "
            "(see docs/packages.md for the entry-point names)"]
        record = PackageRecord(name=dist.metadata["Name"], kind="python",
                               source=source.target if source.kind != "index" else source.given,
                               source_kind=source.kind, ref=source.ref, commit=commit, version=dist.version,
                               index_url=index_url, enabled=enabled)
        return InstallResult(record, before.get(canonical_name(record.name)), declares, warnings)

    def _find_quiet(self, name: str) -> PackageRecord | None:
        try:
            return self.find(name)
        except PackageError:
            return None

    def _save_record(self, record: PackageRecord) -> None:
        def change(data: dict[str, Any]) -> None:
            current = [r for r in read_records(data.get("packages")) if r.key != record.key]
            data["packages"] = [r.to_json() for r in [*current, record]]

        self.settings.modify(change)

    # ------------------------------------------------------------------ lock

    def write_lock(self, *, created_settings: bool = False, created_lock: bool = False) -> None:
        old = read_lock_quiet(self.home)
        lock = Lock(created_settings=old.created_settings if old else created_settings,
                    created_settings_lock=old.created_settings_lock if old else created_lock)
        lock.distributions = [lock_entry(d) for d in installed_distributions(self.env.site_packages)]
        for record in self.records():
            if record.kind == "claude-plugin":
                root = plugins_dir(self.home) / record.name
                if root.is_dir():
                    lock.plugins.append({"name": record.name, "version": record.version, "source": record.source,
                                         "sourceKind": record.source_kind, "commit": record.commit,
                                         "contentHash": folder_hash(root)})
        write_lock(self.home, lock)

    def install_locked(self) -> list[str]:
        """Install exactly what the lock says (a fresh or copied agent home); returns the
        names installed. Content hashes are checked after the installer ran."""
        lock = read_lock(self.home)
        if lock is None:
            raise PackageError(f"there is no {lock_path(self.home).name} in {self.home}: nothing to install")
        records = self.records()
        index_url = next((r.index_url for r in records if r.index_url), None)
        if lock.distributions:
            self.env.create(self.output)
            wanted = [requirement_for(e) for e in lock.distributions]
            try:
                self.env.install(wanted, index_url=index_url, no_deps=True, output=self.output)
            except RuntimeError as exc:
                raise PackageError(str(exc)) from None
            installed = {canonical_name(d.metadata["Name"]): d for d in installed_distributions(self.env.site_packages)}
            wrong = []
            for entry in lock.distributions:
                dist = installed.get(canonical_name(entry["name"]))
                if dist is None or dist.version != entry.get("version"):
                    wrong.append(f"{entry['name']} {entry.get('version')} (got {dist.version if dist else 'nothing'})")
                elif entry.get("contentHash") and distribution_hash(dist) != entry["contentHash"]:
                    wrong.append(f"{entry['name']} {entry.get('version')} (its files differ from the lock)")
            if wrong:
                raise PackageError("the installed packages do not match the lock: " + "; ".join(wrong)
                                   + ". Nothing was recorded; `wolli update` installs current versions instead")
        for entry in lock.plugins:
            self._install_locked_plugin(entry)
        return [e["name"] for e in lock.distributions] + [p["name"] for p in lock.plugins]

    def _install_locked_plugin(self, entry: dict[str, Any]) -> None:
        source = Source(kind=entry.get("sourceKind", "path"), given=entry.get("source", ""),
                        target=entry.get("source", ""), ref=entry.get("commit"))
        with tempfile.TemporaryDirectory(prefix="wolli-install-") as scratch:
            folder = self._clone(source, Path(scratch) / "clone")[0] if source.kind == "git" else Path(source.target)
            if not is_plugin(folder):
                raise PackageError(f"the plugin {entry['name']} is no longer at {source.target}")
            result = self._install_plugin(source, folder, source.ref if source.kind == "git" else None, True)
        root = plugins_dir(self.home) / result.record.name
        if entry.get("contentHash") and folder_hash(root) != entry["contentHash"]:
            shutil.rmtree(root, ignore_errors=True)
            raise PackageError(f"the plugin {entry['name']} at {source.target} differs from the lock; not installed")

    # ------------------------------------------------------------------ update and remove

    def update(self, name: str | None = None) -> list[InstallResult]:
        records = [self.find(name)] if name else self.records()
        results = []
        for record in records:
            # From where it came, following what was asked for: the index requirement as typed,
            # the git ref (a branch moves on, a tag or commit stays), the path as it is now.
            if record.source_kind == "index":
                source = Source("index", record.source, record.source, name=record.name)
            elif record.source_kind == "git":
                source = Source("git", record.source, record.source, ref=record.ref)
            else:
                source = Source("path", record.source, record.source)
            results.append(self._install(source, index_url=record.index_url, upgrade=True, enabled=record.enabled))
        return results

    def remove(self, name: str) -> PackageRecord:
        record = self.find(name)
        if record.kind == "claude-plugin":
            shutil.rmtree(plugins_dir(self.home) / record.name, ignore_errors=True)
        else:
            remaining = [r.name for r in self.records() if r.key != record.key and r.kind == "python"]
            orphans = _orphans(record.name, remaining, self.env.site_packages)
            try:
                self.env.uninstall([record.name, *orphans], output=self.output)
            except RuntimeError as exc:
                raise PackageError(str(exc)) from None

        def change(data: dict[str, Any]) -> None:
            kept = [r.to_json() for r in read_records(data.get("packages")) if r.key != record.key]
            if kept:
                data["packages"] = kept
            else:
                data.pop("packages", None)

        self.settings.modify(change)
        if self.records():
            self.write_lock()
        else:
            self._forget_everything()
        return record

    def _forget_everything(self) -> None:
        """The last package went: the environment, the lock and (if install made it) an empty
        settings.json go too, so the agent home is as it was."""
        lock = read_lock_quiet(self.home)
        shutil.rmtree(packages_dir(self.home), ignore_errors=True)
        lock_path(self.home).unlink(missing_ok=True)
        settings_file = self.home / "settings.json"
        if lock is not None and lock.created_settings and not self.settings.file_values("agent"):
            settings_file.unlink(missing_ok=True)
            self.settings.reload()
        if lock is not None and lock.created_settings_lock:
            settings_file.with_name(settings_file.name + ".lock").unlink(missing_ok=True)

    def set_enabled(self, name: str, enabled: bool) -> PackageRecord:
        record = self.find(name)

        def change(data: dict[str, Any]) -> None:
            items = read_records(data.get("packages"))
            for item in items:
                if item.key == record.key:
                    item.enabled = enabled
            data["packages"] = [r.to_json() for r in items]

        self.settings.modify(change)
        record.enabled = enabled
        return record


def read_lock_quiet(agent_home: Path) -> Lock | None:
    try:
        return read_lock(agent_home)
    except ValueError:
        return None


def _pip_git_url(url: str) -> str:
    """git's ``user@host:path`` and plain-path spellings as URLs installers understand."""
    import re

    if url.startswith("/"):
        return f"file://{url}"
    match = re.match(r"^([A-Za-z0-9._-]+@[A-Za-z0-9.-]+):(?!//)(.+)$", url)
    return f"ssh://{match.group(1)}/{match.group(2)}" if match else url


def _check_pyproject(folder: Path) -> None:
    """A project folder's ``pyproject.toml`` that cannot be built: one line naming the file.
    Broken TOML made pip print its own traceback; a ``[project]`` table without a ``name``
    was built by setuptools as the distribution ``UNKNOWN`` and recorded as such."""
    path = folder / "pyproject.toml"
    try:
        text = read_text_capped(path, CONFIG_FILE_LIMIT)
    except FileNotFoundError:
        return  # a setup.py project: the installer knows what to do with it
    except (OSError, UnicodeDecodeError) as exc:
        raise PackageError(f"{path}: cannot be read ({exc}); nothing was installed") from None
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise PackageError(f"{path}: not valid TOML ({exc}); nothing was installed") from None
    project = data.get("project")
    if project is not None and not (isinstance(project, dict) and isinstance(project.get("name"), str)
                                    and project["name"].strip()):
        raise PackageError(f"{path}: the [project] table needs a name (name = \"...\"); nothing was installed")


def _project_name(path: Path) -> str | None:
    """The distribution name of a project folder, a wheel or an sdist, without building it."""
    if path.is_dir():
        try:
            data = tomllib.loads((path / "pyproject.toml").read_text("utf-8"))
        except (OSError, ValueError):
            return None
        name = data.get("project", {}).get("name")
        return name if isinstance(name, str) else None
    if path.suffix == ".whl":
        return path.name.split("-", 1)[0]
    return None


def _requirement_names(dist: Distribution) -> list[str]:
    import re

    out = []
    for text in dist.requires or []:
        if "extra ==" in text.replace('"', " ").replace("'", " ") or "extra==" in text:
            continue
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", text)
        if match:
            out.append(canonical_name(match.group(1)))
    return out


def _orphans(removing: str, remaining: list[str], site_packages: Path) -> list[str]:
    """Distributions only ``removing`` needed: what no remaining package requires."""
    dists = {canonical_name(d.metadata["Name"]): d for d in installed_distributions(site_packages)}

    def closure(roots: list[str]) -> set[str]:
        seen: set[str] = set()
        stack = [canonical_name(r) for r in roots]
        while stack:
            name = stack.pop()
            if name in seen or name not in dists:
                continue
            seen.add(name)
            stack.extend(_requirement_names(dists[name]))
        return seen

    kept = closure(remaining)
    return sorted(n for n in closure([removing]) - kept if n != canonical_name(removing))


def _server_names(text: str | None) -> list[str]:

    try:
        servers = parse_json(text).get("mcpServers") if text else None
    except (ValueError, AttributeError):
        return []
    return sorted(servers) if isinstance(servers, dict) else []
