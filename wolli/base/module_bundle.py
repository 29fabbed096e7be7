"""The bytecode of the modules a start imports, kept in one file and served from it.

Importing a module from its ``.pyc`` is a search (each ``sys.path`` entry or package folder
asked in turn, a ``stat`` of the folder, the name joined to each suffix), the ``.pyc``'s
path worked out, a ``stat`` of the source, and an open, read and close of the ``.pyc``, all
in importlib's Python code, before ``marshal`` makes the code: ~470 times before the TUI's
footer, about a tenth of its instructions. The command line keeps the compiled code of
those modules in ``WOLLI_HOME/cache/modules-<python>-<magic>.bin`` and, while a start runs,
a finder first in ``sys.meta_path`` serves each module it holds from there: one ``stat``
of the source (its modification time and size must be the ones the code was compiled
from, as a ``.pyc`` checks) and one read at the module's offset in the open file.

What the finder returns is what the path finder would have found: the same origin,
``__cached__``, package path and a :class:`~importlib.machinery.SourceFileLoader` (a
subclass handing over the bundled code). The file is used only when it was written for
the same ``sys.path`` and ``sys.pycache_prefix`` and none of the folders it names changed
since (a new module there could shadow one it holds); a submodule is served only when its
folder is on its package's path. A changed source is imported the usual way and its entry
rewritten. The finder leaves once the session is up (:func:`stop`): what imports later
(extensions, tools) is found as usual.

The code comes from the ``.pyc`` files Python wrote (the bundle is written only when they
are current, and as they are: not under ``-B`` / ``PYTHONDONTWRITEBYTECODE``, not with
``-O``). The file is ``0600`` in a ``0700`` folder, its index read up to
:data:`MAX_INDEX_BYTES`; a file that is damaged or not what this module wrote is ignored
and replaced. Deleting it is always safe.
"""

from __future__ import annotations

import _thread
import marshal
import os
import sys

# importlib.machinery's own classes and functions, loaded with the interpreter: this module is
# imported before ``importlib``, ``typing`` and ``types`` so that they come from the bundle too
from _frozen_importlib import ModuleSpec
from _frozen_importlib_external import (
    BYTECODE_SUFFIXES,
    EXTENSION_SUFFIXES,
    MAGIC_NUMBER,
    SOURCE_SUFFIXES,
    SourceFileLoader,
    cache_from_source,
)

from .cache_file import replace_private

TYPE_CHECKING = False
if TYPE_CHECKING:
    from types import CodeType
    from typing import Any
else:
    CodeType = type(compile("", "", "exec"))

MAX_INDEX_BYTES = 1024 * 1024
MAX_MODULES = 4000
MAX_BYTES = 64 * 1024 * 1024
_HEADER = b"wolli-module-bundle 1\n" + MAGIC_NUMBER
_LENGTH = 8  # the index's length, after the header
_MODULE_SUFFIXES = (*EXTENSION_SUFFIXES, *SOURCE_SUFFIXES, *BYTECODE_SUFFIXES)  # longest extension suffix first

# name -> (origin, cached, is_package, source mtime_ns, source size, offset, length)
_Entry = tuple[str, str, bool, int, int, int, int]


class _Bundle:
    def __init__(self, path: str) -> None:
        self.path = path
        self.fd: int | None = None
        self.identity: tuple[int, ...] | None = None  # the file read: kept entries come from it alone
        self.entries: dict[str, _Entry] = {}
        self.stale = False  # an entry no longer matches its source: rewrite at save
        self.served = 0
        self.environment = _environment()  # what the file must have been written for


_bundle: _Bundle | None = None
_saving = _thread.allocate_lock()  # the warm-up thread and the exit may both save
_reading = _thread.allocate_lock()  # a thread's read against stop() closing the file
_finder: BundleFinder | None = None


def bundle_path(folder: str) -> str:
    """The bundle file in ``folder`` for this interpreter's bytecode."""
    return os.path.join(folder, f"modules-{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}.bin")


def _environment() -> tuple[Any, ...]:
    """The search path the file must have been written for. The working folder, first on it
    under ``python -m``, is written ``""`` (as ``sys.path`` itself may name it): a run in
    another folder is the same search, and that folder is listed for shadowing modules."""
    path = list(sys.path)
    if path and path[0] and path[0] == os.getcwd():
        path[0] = ""
    return tuple(path), sys.pycache_prefix


class BundledLoader(SourceFileLoader):
    """A source file's loader whose code comes from the bundle while it is current."""

    def __init__(self, fullname: str, path: str, fd: int, offset: int, length: int) -> None:
        super().__init__(fullname, path)
        self._place: tuple[int, int, int] | None = (fd, offset, length)

    def get_code(self, fullname: str) -> CodeType | None:
        place, self._place = self._place, None
        if place is not None and fullname == self.name:
            fd, offset, length = place
            try:
                with _reading:  # the file still open (a worker thread may import while stop() runs)
                    data = os.pread(fd, length, offset) if _bundle is not None and _bundle.fd == fd else b""
                code = marshal.loads(data) if len(data) == length else None
            except (OSError, EOFError, ValueError, TypeError):
                code = None
            if type(code) is CodeType:
                return code
            if _bundle is not None:
                _bundle.stale = True
        return super().get_code(fullname)


class BundleFinder:
    """First in ``sys.meta_path`` while a start runs: the modules the bundle holds."""

    def __init__(self, bundle: _Bundle) -> None:
        self.bundle = bundle

    def find_spec(self, name: str, path: Any = None, target: Any = None) -> ModuleSpec | None:
        bundle = self.bundle
        entry = bundle.entries.get(name)
        if entry is None or bundle.fd is None:
            return None
        origin, cached, is_package, mtime_ns, size, offset, length = entry
        if path is not None and _search_folder(name, origin, is_package) not in path:
            return None  # the package's path moved elsewhere: let the path finder look
        try:
            st = os.stat(origin)
        except OSError:
            st = None
        if st is None or st.st_mtime_ns != mtime_ns or st.st_size != size:
            bundle.stale = True
            return None
        spec = ModuleSpec(name, BundledLoader(name, origin, bundle.fd, offset, length), origin=origin,
                          is_package=is_package)
        spec.has_location = True
        spec.cached = cached
        if is_package:
            spec.submodule_search_locations = [os.path.dirname(origin)]
        bundle.served += 1
        return spec


def enable(folder: str) -> None:
    """Serve the modules the bundle in ``folder`` holds until :func:`stop`."""
    global _bundle, _finder
    if _bundle is not None or sys.flags.optimize or not hasattr(os, "pread"):
        return
    _bundle = _Bundle(bundle_path(folder))
    _open(_bundle)
    _finder = BundleFinder(_bundle)
    sys.meta_path.insert(0, _finder)  # type: ignore[arg-type]  # a finder, as importlib asks


def stop() -> None:
    """The finder leaves ``sys.meta_path`` and the file is closed; :func:`save` can still
    write what this run imported."""
    global _finder
    if _finder is not None:
        try:
            sys.meta_path.remove(_finder)  # type: ignore[arg-type]
        except ValueError:
            pass
        _finder = None
    with _reading:
        if _bundle is not None and _bundle.fd is not None:
            os.close(_bundle.fd)
            _bundle.fd = None


def disable() -> None:
    """:func:`stop`, and what was read is forgotten."""
    global _bundle
    stop()
    _bundle = None


def _open(bundle: _Bundle) -> None:
    try:
        fd = os.open(bundle.path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return
    try:
        entries = _read_index(fd)
    except (OSError, EOFError, ValueError, TypeError):
        entries = None
    if entries is None:
        os.close(fd)
        bundle.stale = True
        return
    bundle.fd, bundle.entries, bundle.identity = fd, entries, _identity(os.fstat(fd))


def _read_index(fd: int) -> dict[str, _Entry] | None:
    st = os.fstat(fd)
    start = len(_HEADER) + _LENGTH
    head = os.pread(fd, start, 0)
    if not head.startswith(_HEADER) or len(head) != start:
        return None
    length = int.from_bytes(head[len(_HEADER):], "little")
    if length > MAX_INDEX_BYTES or start + length > st.st_size:
        return None
    data = os.pread(fd, length, start)
    if len(data) != length:
        return None
    index = marshal.loads(data)
    if type(index) is not tuple or len(index) != 3 or index[0] != _environment():
        return None
    folders, entries = index[1], index[2]
    if type(folders) is not dict or type(entries) is not dict:
        return None
    blob = start + length  # the entries' offsets count from here
    for name, entry in entries.items():
        if not (type(name) is str and _valid_entry(entry) and entry[5] >= 0 and entry[6] >= 0
                and blob + entry[5] + entry[6] <= st.st_size):
            return None
    for folder, seen in folders.items():  # a new file in one of them could shadow a module
        try:
            if _folder_state(folder) != seen and _shadowing(folder, entries, index[0][0]):
                return None
        except (OSError, TypeError, ValueError):
            return None
    return {name: (*entry[:5], blob + entry[5], entry[6]) for name, entry in entries.items()}


def _search_folder(name: str, origin: str, is_package: bool) -> str:
    """The folder the path finder finds the module in (a package's is its folder's parent)."""
    return os.path.dirname(os.path.dirname(origin) if is_package else origin)


def _shadowing(folder: str, entries: dict[str, Any], path: tuple[str, ...]) -> bool:
    """Whether ``folder`` (changed since the bundle was written) holds anything named like a
    module the path finder would look for there, other than that module itself: a folder on
    ``sys.path`` (the working folder with ``python -m``) changes all the time."""
    listed = _importable(folder)
    top = folder in path
    for name, (origin, _, is_package, *_) in entries.items():
        stem = name.rpartition(".")[2]
        found = listed.get(stem)
        if not found or not (top and "." not in name or _search_folder(name, origin, is_package) == folder):
            continue
        own = os.path.join(folder or ".", stem)
        if found != [stem if is_package else f"{stem}.py"] or (os.path.join(own, "__init__.py") if is_package
                                                              else f"{own}.py") != origin:
            return True
    return False


def _importable(folder: str) -> dict[str, list[str]]:
    """What the path finder could import from ``folder``, by module name: its folders (packages,
    namespace portions) and its files with a module suffix, each with the items named so. Other
    files are no modules: the console script ``wolli`` in ``bin/``, first on ``sys.path``, must not
    count as the package ``wolli`` (it kept all of Wolli's own modules out of the bundle)."""
    found: dict[str, list[str]] = {}
    with os.scandir(folder or ".") as items:
        for item in items:
            name = item.name
            if item.is_dir():
                found.setdefault(name, []).append(name)
                continue
            for suffix in _MODULE_SUFFIXES:
                if name.endswith(suffix):
                    found.setdefault(name[: -len(suffix)], []).append(name)
                    break
    return found


def _valid_entry(entry: Any) -> bool:
    return (type(entry) is tuple and len(entry) == 7
            and [type(part) for part in entry] == [str, str, bool, int, int, int, int])


def save() -> None:
    """Rewrite the bundle when this run imported a source module it does not hold, or one
    it holds had changed: a temporary file renamed over it. Never raises."""
    bundle = _bundle
    if bundle is None or sys.dont_write_bytecode:
        return
    with _saving:
        try:
            _write(bundle)
        except (OSError, ValueError, EOFError, TypeError):
            pass


def _write(bundle: _Bundle) -> None:
    candidates: dict[str, Any] = {}  # name -> spec: source modules the bundle does not hold as they are
    for name, module in list(sys.modules.items()):
        spec: Any = getattr(module, "__spec__", None)
        loader = getattr(spec, "loader", None)
        if type(loader) is BundledLoader or type(loader) is not SourceFileLoader or type(spec.origin) is not str:
            continue
        entry = bundle.entries.get(name)
        if entry is not None and entry[0] == spec.origin and _unchanged(entry):
            continue  # held already (imported before the finder was in place)
        candidates[name] = spec
    if not candidates and not bundle.stale:
        return
    # only those the path finder finds (not an extension's own file), or each run would rewrite
    held = {name: entry[:3] for name, entry in bundle.entries.items() if name not in candidates}
    placed = {name: (spec.origin, "", spec.submodule_search_locations is not None)
              for name, spec in candidates.items()}
    findable = _findable({**held, **placed}, bundle.environment[0])
    fresh: dict[str, tuple[str, str, bool, int, int, bytes]] = {}
    for name, spec in candidates.items():
        found = _from_pyc(spec) if name in findable else None
        if found is not None:
            fresh[name] = found
    if fresh:  # a submodule whose package has no current .pyc cannot be held: not worth a write
        reachable = _findable({**held, **fresh}, bundle.environment[0])
        fresh = {name: found for name, found in fresh.items() if name in reachable}
    if not fresh and not bundle.stale:
        return
    kept: dict[str, tuple[str, str, bool, int, int, bytes]] = {}
    if bundle.entries:
        fd = os.open(bundle.path, os.O_RDONLY | os.O_NOFOLLOW)
        try:
            if _identity(os.fstat(fd)) != bundle.identity:  # replaced meanwhile (another run): its offsets differ
                bundle.entries = {}
            for name, entry in bundle.entries.items():
                if name not in fresh and _unchanged(entry):
                    origin, cached, is_package, mtime_ns, size, offset, length = entry
                    kept[name] = (origin, cached, is_package, mtime_ns, size, os.pread(fd, length, offset))
        finally:
            os.close(fd)
    modules = _findable({**kept, **fresh}, bundle.environment[0])
    if len(modules) > MAX_MODULES:
        return
    folders: dict[str, tuple[int, int, int]] = {}
    searched = (_search_folder(name, entry[0], entry[2]) for name, entry in modules.items())
    for place in [*bundle.environment[0], *searched]:
        if place not in folders:
            try:
                folders[place] = _folder_state(place)
            except OSError:
                pass
    entries: dict[str, _Entry] = {}
    blobs: list[bytes] = []
    offset = 0
    for name, (origin, cached, is_package, mtime_ns, size, code) in modules.items():
        entries[name] = (origin, cached, is_package, mtime_ns, size, offset, len(code))
        blobs.append(code)
        offset += len(code)
    index = marshal.dumps((bundle.environment, folders, entries))
    if len(index) > MAX_INDEX_BYTES or len(_HEADER) + _LENGTH + len(index) + offset > MAX_BYTES:
        return
    data = b"".join([_HEADER, len(index).to_bytes(_LENGTH, "little"), index, *blobs])
    bundle.identity = _identity(replace_private(bundle.path, data))
    blob = len(data) - offset
    bundle.entries = {name: (*entry[:5], blob + entry[5], entry[6]) for name, entry in entries.items()}
    bundle.stale = False


def _findable(modules: dict[str, Any], path: tuple[str, ...]) -> dict[str, Any]:
    """The modules the path finder finds where they were loaded from: a top-level module in
    the first ``sys.path`` folder holding its name, a submodule in its package's folder (the
    package held too). A module an extension loaded from a file of its own, under a name of
    its choosing, is not one of them."""
    names: dict[str, set[str]] = {}
    for folder in path:
        try:
            names[folder] = set(_importable(folder))
        except OSError:
            names[folder] = set()
    findable: dict[str, Any] = {}
    for name in sorted(modules, key=lambda name: name.count(".")):  # packages before their modules
        origin, _, is_package = modules[name][:3]
        folder = _search_folder(name, origin, is_package)
        parent, _, stem = name.rpartition(".")
        if parent:
            found = parent in findable and os.path.dirname(findable[parent][0]) == folder
        else:
            found = next((place for place in path if stem in names[place]), None) == folder
        if found:
            findable[name] = modules[name]
    return findable


def _folder_state(folder: str) -> tuple[int, int, int]:
    """Which folder it is (the working folder differs between runs) and when it last changed."""
    st = os.stat(folder or ".")
    return st.st_dev, st.st_ino, st.st_mtime_ns


def _identity(st: os.stat_result) -> tuple[int, ...]:
    return st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns


def _unchanged(entry: _Entry) -> bool:
    try:
        st = os.stat(entry[0])
    except OSError:
        return False
    return (st.st_mtime_ns, st.st_size) == (entry[3], entry[4])


def _from_pyc(spec: Any) -> tuple[str, str, bool, int, int, bytes] | None:
    """The module's marshalled code from its ``.pyc``, when that was written for the source
    as it is now (a timestamp ``.pyc``, the kind Python writes by default)."""
    origin = spec.origin
    if type(origin) is not str or not origin.endswith(".py"):
        return None
    try:
        cached = spec.cached or cache_from_source(origin)
        st = os.stat(origin)
        with open(cached, "rb") as file:
            data = file.read(MAX_BYTES)
    except (OSError, ValueError, NotImplementedError):
        return None
    if len(data) < 16 or data[:4] != MAGIC_NUMBER or int.from_bytes(data[4:8], "little") != 0:
        return None
    if int.from_bytes(data[8:12], "little") != (int(st.st_mtime) & 0xFFFFFFFF) \
            or int.from_bytes(data[12:16], "little") != (st.st_size & 0xFFFFFFFF):
        return None
    is_package = spec.submodule_search_locations is not None
    if is_package and os.path.basename(origin) != "__init__.py":
        return None
    return origin, cached, is_package, st.st_mtime_ns, st.st_size, data[16:]

