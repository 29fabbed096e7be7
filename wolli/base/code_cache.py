"""Compiled code for the methods ``dataclasses`` and ``namedtuple`` generate, kept between runs.

Every ``@dataclass`` writes its ``__init__`` (and ``__repr__``, ``__eq__``...) as Python source
and compiles it with ``exec``; ``namedtuple`` does the same for ``__new__`` with ``eval``. A
start of the full-screen app defines ~200 such classes (Wolli's messages, events and session
entries, Textual's and Rich's records): ~730 generated functions whose compiling was about a
sixth of the start-up's CPU, the same sources every time. Python caches the bytecode of
modules in ``__pycache__`` but not of generated source, so this does the same for it.

While enabled, the two modules' ``exec``/``eval`` (their module globals, nothing else is
touched) compile each source once and look it up afterwards: a source seen by an earlier
run comes from the cache file, unmarshalled with the rest in one read. Executing a code
object compiled from a source is exactly what executing the source does (same file name,
``<string>``; no inherited ``__future__`` flags, as for the original calls), so the classes
are the same. :func:`save` writes what was compiled beyond the file, as ``.pyc`` files are
written: not when ``sys.dont_write_bytecode`` is set (``-B``, ``PYTHONDONTWRITEBYTECODE``).

The file is per Python bytecode version, private to the user (``0600`` in a ``0700`` folder,
like the rest of ``WOLLI_HOME``), read up to :data:`MAX_BYTES`; a file that is unreadable,
damaged or not what this module wrote is ignored and replaced.
"""

from __future__ import annotations

import builtins
import collections
import dataclasses
import marshal
import os
import sys
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

from .safe_files import read_capped

MAX_BYTES = 8 * 1024 * 1024  # a run of every mode writes ~1 MiB
MAX_ENTRIES = 5000
_HEADER = b"wolli-code-cache 1\n" + MAGIC_NUMBER

_Key = tuple[str, str]  # ("exec" or "eval", the source)
_codes: dict[_Key, CodeType] = {}
_known = 0  # how many entries of ``_codes`` the file held (or this run wrote)
_path: Path | None = None


def cache_path(folder: Path) -> Path:
    """The cache file in ``folder`` for this interpreter's bytecode."""
    return folder / f"code-{sys.implementation.cache_tag}-{MAGIC_NUMBER.hex()}.bin"


def enable(folder: Path) -> None:
    """Use (and, on :func:`save`, extend) the cache file in ``folder`` from here on."""
    global _path, _known
    if _path is not None:
        return
    _path = cache_path(folder)
    _codes.update(_load(_path))
    _known = len(_codes)
    dataclasses.exec = _exec  # type: ignore[attr-defined]  # the module's own name, over the builtin
    collections.eval = _eval  # type: ignore[attr-defined]


def disable() -> None:
    """Back to the builtins; what was compiled is forgotten."""
    global _path, _known
    dataclasses.__dict__.pop("exec", None)
    collections.__dict__.pop("eval", None)
    _path, _known = None, 0
    _codes.clear()


def save() -> None:
    """Write the file when this run compiled sources it did not hold: a temporary file
    renamed over it. Never raises: a cache that cannot be written is only slower next time."""
    global _known
    path = _path
    if path is None or sys.dont_write_bytecode or len(_codes) == _known:
        return
    codes = dict(_codes)  # one C call: a thread defining a class meanwhile cannot tear it
    if len(codes) > MAX_ENTRIES:  # sources of many versions piled up: keep the newest
        codes = dict(list(codes.items())[-MAX_ENTRIES:])
    data = _HEADER + marshal.dumps(codes)
    if len(data) > MAX_BYTES:
        return
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        finally:
            os.close(fd)
        os.replace(temporary, path)
    except OSError:
        try:
            temporary.unlink(missing_ok=True)
        except OSError:
            pass
        return
    _known = len(codes)


def _load(path: Path) -> dict[_Key, CodeType]:
    try:
        data = read_capped(path, MAX_BYTES)
    except (OSError, ValueError):
        return {}
    if not data.startswith(_HEADER):
        return {}
    try:
        loaded = marshal.loads(data[len(_HEADER):])
    except (EOFError, ValueError, TypeError):
        return {}
    if not isinstance(loaded, dict):
        return {}
    return {key: code for key, code in loaded.items()
            if type(key) is tuple and len(key) == 2 and key[0] in ("exec", "eval") and type(key[1]) is str
            and type(code) is CodeType}


def _compiled(mode: str, source: str) -> CodeType:
    key = (mode, source)
    code = _codes.get(key)
    if code is None:
        code = _codes[key] = compile(source, "<string>", mode, dont_inherit=True)
    return code


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    if globals is None:  # the caller's namespaces, as the builtin would take them
        frame = sys._getframe(1)
        globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
    builtins.exec(_compiled("exec", source) if type(source) is str else source, globals, locals)


def _eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:
    if globals is None:
        frame = sys._getframe(1)
        globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
    return builtins.eval(_compiled("eval", source) if type(source) is str else source, globals, locals)
