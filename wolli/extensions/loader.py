"""Finding extension modules and importing them, fresh, with errors that name file and line.

Where extensions come from, in load order (docs/extensions.md, "Where extensions live, and the load order"):

1. the agent home: ``<agent home>/extensions/*.py`` and ``*/__init__.py``, by file name;
2. the ``extensions`` paths of settings.json, in the order given;
3. ``-e/--extension PATH`` on the command line, in the order given;
4. installed packages: the entry-point group ``wolli.extensions``, by entry-point name.

A path given twice (the same file through settings and ``-e``) loads once, at its first
place. Each module is imported under a private name (``wolli_ext_<n>_<stem>``), so two
extensions may share a file name and a reload can drop every module it imported, helpers
inside an extension folder included, and import them again from disk. A folder extension
may vendor its own dependencies in ``<folder>/deps`` (``pip install --target deps ...``);
that folder goes on ``sys.path`` before the extension is imported.

Nothing here runs the ``extension(wolli)`` factory; :mod:`.runtime` does.
"""

from __future__ import annotations

import importlib.machinery
import importlib.util
import itertools
import re
import sys
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path
from types import CodeType, ModuleType
from typing import TYPE_CHECKING, Any

from ..base.records import record

if TYPE_CHECKING:
    import importlib.metadata

from ..base.entry_points import entry_points_of

ENTRY_POINT_GROUP = "wolli.extensions"
MODULE_PREFIX = "wolli_ext_"
_counter = itertools.count(1)


class _FreshSourceLoader(importlib.machinery.SourceFileLoader):
    """Compiles the source every time, never bytecode from ``__pycache__``: Python checks a
    cached ``.pyc`` by the source's mtime in whole seconds and its size, so an extension
    saved twice within a second at the same length (``"one"`` -> ``"two"``) would reload as
    its old version. Extensions are small; compiling them costs a few milliseconds."""

    def get_code(self, fullname: str) -> CodeType:
        return self.source_to_code(self.get_data(self.path), self.path)


class _FreshFinder:
    """Finds an extension's own submodules (a folder's helpers) with the fresh loader too."""

    @staticmethod
    def find_spec(
        fullname: str, path: Sequence[str] | None = None, target: ModuleType | None = None
    ) -> importlib.machinery.ModuleSpec | None:
        if not fullname.startswith(MODULE_PREFIX) or path is None:
            return None
        spec = importlib.machinery.PathFinder.find_spec(fullname, path)
        if spec is not None and type(spec.loader) is importlib.machinery.SourceFileLoader:
            spec.loader = _FreshSourceLoader(spec.loader.name, spec.loader.path)
        return spec


def _install_finder() -> None:
    if not any(isinstance(f, _FreshFinder) for f in sys.meta_path):
        sys.meta_path.insert(0, _FreshFinder())


class ExtensionLoadError(Exception):
    """An extension that could not be imported or set up; the message names file and line."""


@record(frozen=True)
class ExtensionSource:
    """Where one extension comes from: a file or folder, or an installed entry point."""

    name: str
    origin: str  # "agent" | "settings" | "cli" | "package"
    path: Path | None = None  # the .py file, or the folder's __init__.py
    entry_point: importlib.metadata.EntryPoint | None = None  # for packages
    package_name: str | None = None  # a Claude Code plugin's name (its hooks)

    @property
    def package(self) -> str | None:
        """The distribution an entry point belongs to."""
        if self.package_name is not None:
            return self.package_name
        dist = getattr(self.entry_point, "dist", None)
        return dist.metadata["Name"] if dist is not None else None

    @property
    def label(self) -> str:
        if self.path is not None:
            return str(self.path)
        entry = self.entry_point.value if self.entry_point is not None else self.name  # one of the two is set
        return f"{entry} (package {self.package or self.name})"


def discover(
    agent_home: Path,
    settings_paths: list[str] | None = None,
    cli_paths: list[str] | None = None,
    *,
    cwd: str | Path = ".",
    packages: bool = True,
    skip: Callable[[Any], bool] | None = None,
) -> tuple[list[ExtensionSource], list[str]]:
    """Every extension to load, in load order, and a problem line for each path that is not one."""
    sources: list[ExtensionSource] = []
    problems: list[str] = []
    seen: set[Path] = set()

    def add(path: Path, origin: str) -> None:
        resolved = path.resolve()
        if resolved in seen:
            return
        seen.add(resolved)
        name = path.parent.name if path.name == "__init__.py" else path.stem
        sources.append(ExtensionSource(name=name, origin=origin, path=path))

    folder = agent_home / "extensions"
    if folder.is_dir():
        for entry in sorted(folder.iterdir(), key=lambda p: p.name):
            if entry.name.startswith((".", "_")):
                continue
            if entry.is_file() and entry.suffix == ".py":
                add(entry, "agent")
            elif entry.is_dir() and (entry / "__init__.py").is_file():
                add(entry / "__init__.py", "agent")
    base = Path(cwd)
    for origin, given in (("settings", settings_paths or []), ("cli", cli_paths or [])):
        for raw in given:
            if not isinstance(raw, str) or not raw.strip():
                problems.append(f"extension path {raw!r} ({origin}): expected a path to a .py file or a folder")
                continue
            path = Path(raw).expanduser()
            path = path if path.is_absolute() else base / path
            if path.is_dir() and (path / "__init__.py").is_file():
                add(path / "__init__.py", origin)
            elif path.is_file() and path.suffix == ".py":
                add(path, origin)
            elif path.is_dir():
                problems.append(f"{path}: not an extension (a folder needs an __init__.py)")
            else:
                problems.append(f"{path}: no such extension file" + (" (from settings.json 'extensions')" if origin == "settings" else ""))
    if packages:
        sources += [ExtensionSource(name=ep.name, origin="package", entry_point=ep)
                    for ep in package_entry_points(ENTRY_POINT_GROUP, skip)]
    return sources, problems


def package_entry_points(
    group: str, skip: Callable[[importlib.metadata.EntryPoint], bool] | None = None
) -> list[importlib.metadata.EntryPoint]:
    """The entry points of ``group`` by name, without those ``skip`` says no to (a package
    switched off)."""
    found = sorted(entry_points_of(group), key=lambda e: e.name)
    return [ep for ep in found if skip is None or not skip(ep)]


def import_source(source: ExtensionSource) -> ModuleType:
    """Import one extension freshly; raises :class:`ExtensionLoadError` naming file and line."""
    if source.entry_point is not None:
        try:
            loaded = source.entry_point.load()
        except Exception as exc:
            raise ExtensionLoadError(f"{source.label}: {_where(exc, None)}") from None
        if isinstance(loaded, ModuleType):
            return loaded
        module = ModuleType(f"{MODULE_PREFIX}pkg_{source.name}")
        module.extension = loaded  # type: ignore[attr-defined]  # the entry point names the factory
        return module
    assert source.path is not None
    path = source.path
    is_package = path.name == "__init__.py"
    folder = path.parent
    module_name = f"{MODULE_PREFIX}{next(_counter)}_{_identifier(source.name)}"
    deps = folder / "deps"
    if is_package and deps.is_dir() and str(deps) not in sys.path:
        sys.path.insert(0, str(deps))
    _install_finder()
    spec = importlib.util.spec_from_file_location(
        module_name, path, loader=_FreshSourceLoader(module_name, str(path)),
        submodule_search_locations=[str(folder)] if is_package else None,
    )
    if spec is None or spec.loader is None:
        raise ExtensionLoadError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except SyntaxError as exc:
        forget(module_name)
        line = exc.lineno or 0
        raise ExtensionLoadError(f"{exc.filename or path}:{line}: SyntaxError: {exc.msg}") from None
    except BaseException as exc:  # an import-time crash, SystemExit included, must not end Wolli
        forget(module_name)
        if isinstance(exc, KeyboardInterrupt):
            raise
        raise ExtensionLoadError(_where(exc, folder if is_package else path)) from None
    return module


def forget(module_name: str) -> None:
    """Drop a module and every submodule it imported (a folder's helpers) from the cache."""
    for name in [n for n in sys.modules if n == module_name or n.startswith(module_name + ".")]:
        del sys.modules[name]


def _where(exc: BaseException, inside: Path | None) -> str:
    """``file:line: Type: message`` at the deepest frame inside the extension (or the last)."""
    frames = traceback.extract_tb(exc.__traceback__)
    chosen = frames[-1] if frames else None
    if inside is not None:
        base = str(inside)
        own = [f for f in frames if f.filename == base or f.filename.startswith(base.rstrip("/") + "/")]
        if own:
            chosen = own[-1]
    text = f"{type(exc).__name__}: {exc}".rstrip(": ")
    if chosen is None:
        return f"{inside}: {text}" if inside is not None else text
    return f"{chosen.filename}:{chosen.lineno}: {text}"


def describe_failure(exc: BaseException, source: ExtensionSource) -> str:
    """A factory (or handler) failure as ``file:line: Type: message``."""
    if source.path is None:
        return f"{source.label}: {_where(exc, None)}"
    inside = source.path.parent if source.path.name == "__init__.py" else source.path
    return _where(exc, inside)


def _identifier(name: str) -> str:
    cleaned = re.sub(r"\W", "_", name)
    return cleaned or "ext"
