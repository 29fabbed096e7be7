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

Two more things start-up compiles from the same text every time are kept the same way:

- ``typing.ForwardRef`` compiles the string of every forward reference (``list["Widget"]``
  in Textual's and Wolli's type aliases: ~290 of them before the TUI's first frame), so
  ``typing``'s ``compile`` goes through the same cache.
- Regular expressions (~110 patterns compiled at import, most in Textual's CSS tokenizer,
  ~4 % of the TUI's start): ``re`` parses a pattern and generates its program in Python,
  then hands the program to ``_sre.compile``. While enabled, ``re._compiler.compile`` keeps
  the arguments of that call; a pattern seen by an earlier run is made from them at once
  (``_sre`` checks a program before it runs it, so a damaged one is refused, then compiled
  afresh). The first pattern a process compiles is also compiled by ``re`` itself and the
  two compared (patterns are equal when their programs are), so an interpreter whose
  ``re`` works differently is never given a program it would not have made: the patterns
  are then left to ``re``.

The file is per Python bytecode version, private to the user (``0600`` in a ``0700`` folder,
like the rest of ``WOLLI_HOME``), read up to :data:`MAX_BYTES`; a file that is unreadable,
damaged or not what this module wrote is ignored and replaced.
"""

from __future__ import annotations

import _sre
import builtins
import collections
import dataclasses
import marshal
import re
import sys
import typing
from importlib.util import MAGIC_NUMBER
from pathlib import Path
from types import CodeType
from typing import Any

from .cache_file import read_marshalled, replace_private

MAX_BYTES = 8 * 1024 * 1024  # a run of every mode writes ~1 MiB
MAX_ENTRIES = 5000
_HEADER = b"wolli-code-cache 2\n" + MAGIC_NUMBER + _sre.MAGIC.to_bytes(4, "little")

# ("exec" or "eval", the source) -> its code; ("re", pattern, flags) -> the arguments of
# ``_sre.compile`` that make the pattern: (pattern, flags, program, groups, groupindex, indexgroup)
_Key = tuple[Any, ...]
_Program = tuple[Any, ...]
_codes: dict[_Key, CodeType | _Program] = {}
_known = 0  # how many entries of ``_codes`` the file held (or this run wrote)
_path: Path | None = None
_re_compiler: Any = getattr(re, "_compiler", None)  # 3.11+: the module ``re`` compiles with
_re_compile: Any = getattr(_re_compiler, "compile", None)  # the original
_re_checked = False  # whether this process compared a program it made with ``re``'s own


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
    typing.compile = _compile  # type: ignore[attr-defined]
    if _regex_programs_known():
        _re_compiler.compile = _pattern


def stop_recording_patterns() -> None:
    """From here on patterns are ``re``'s alone: called once the session is up, because what
    a run compiles after that can come from its data (a search typed, a tool's argument,
    an extension's rule) and must not be written to a file. Those of the start, compiled by
    the modules' code, stay cached."""
    if _re_compiler is not None and _re_compile is not None:
        _re_compiler.compile = _re_compile


def disable() -> None:
    """Back to the builtins and ``re``'s own compiling; what was compiled is forgotten."""
    global _path, _known
    dataclasses.__dict__.pop("exec", None)
    collections.__dict__.pop("eval", None)
    typing.__dict__.pop("compile", None)
    if _re_compiler is not None and _re_compile is not None:
        _re_compiler.compile = _re_compile
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
    try:
        replace_private(str(path), data)
    except OSError:
        return
    _known = len(codes)


def _load(path: Path) -> dict[_Key, CodeType]:
    loaded = read_marshalled(path, _HEADER, MAX_BYTES)
    if not isinstance(loaded, dict):
        return {}
    return {key: value for key, value in loaded.items() if type(key) is tuple and _valid(key, value)}


def _valid(key: tuple[Any, ...], value: Any) -> bool:
    if len(key) == 2 and key[0] in ("exec", "eval"):
        return type(key[1]) is str and type(value) is CodeType
    if len(key) == 3 and key[0] == "re" and type(key[1]) in (str, bytes) and type(key[2]) is int:
        # the program's shape; _sre checks the program itself when it is used
        return (type(value) is tuple and len(value) == 6 and type(value[0]) is type(key[1])
                and [type(part) for part in value[1:]] == [int, list, int, dict, tuple])
    return False


def _compiled(mode: str, source: str) -> CodeType:
    key = (mode, source)
    code = _codes.get(key)
    if not isinstance(code, CodeType):
        code = _codes[key] = compile(source, "<string>", mode, dont_inherit=True)
    return code


def _exec(source: Any, globals: Any = None, locals: Any = None, /) -> None:
    if globals is None:  # the caller's namespaces, as the builtin would take them
        frame = sys._getframe(1)
        globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
    builtins.exec(_compiled("exec", source) if type(source) is str else source, globals, locals)


def exec_generated(source: str, names: dict[str, Any]) -> None:
    """Run generated ``source`` in the namespace ``names``, as ``exec(source, names)``;
    while the cache is enabled its code comes from there (the wire codec's decoders, written
    per class as ``dataclasses`` writes ``__init__``)."""
    builtins.exec(_compiled("exec", source) if _path is not None else source, names)


def _eval(source: Any, globals: Any = None, locals: Any = None, /) -> Any:
    if globals is None:
        frame = sys._getframe(1)
        globals, locals = frame.f_globals, frame.f_locals if locals is None else locals
    return builtins.eval(_compiled("eval", source) if type(source) is str else source, globals, locals)


def _compile(source: Any, filename: Any, mode: Any, flags: int = 0, dont_inherit: bool = False,
             optimize: int = -1, **options: Any) -> Any:
    """``compile`` as ``typing`` calls it for a forward reference, through the cache (its
    module has no ``__future__`` imports to pass on, so this is the same code)."""
    if type(source) is str and filename == "<string>" and mode == "eval" and not (flags or options) \
            and optimize == -1:
        return _compiled("eval", source)
    return builtins.compile(source, filename, mode, flags, dont_inherit, optimize, **options)


def _regex_programs_known() -> bool:
    """Whether ``re`` compiles as :func:`_program` expects (the parts it uses exist)."""
    parser = getattr(re, "_parser", None)
    return callable(_re_compile) and callable(getattr(_re_compiler, "_code", None)) \
        and callable(getattr(parser, "parse", None))


def _program(pattern: str | bytes, flags: int) -> _Program:
    """What ``re._compiler.compile`` hands ``_sre.compile`` for ``pattern``: its parse, the
    program generated from it and the maps between group names and numbers."""
    parsed = re._parser.parse(pattern, flags)  # type: ignore[attr-defined]
    program = _re_compiler._code(parsed, flags)
    groupindex = dict(parsed.state.groupdict)
    indexgroup: list[str | None] = [None] * parsed.state.groups
    for name, index in groupindex.items():
        indexgroup[index] = name
    # the opcodes are named int constants: plain ints, as marshal stores them and _sre reads them
    return (pattern, flags | parsed.state.flags, [int(op) for op in program], parsed.state.groups - 1,
            groupindex, tuple(indexgroup))


def _pattern(pattern: Any, flags: int = 0) -> Any:
    """``re._compiler.compile``, with the program of a pattern seen before taken from the cache."""
    global _re_checked
    if type(pattern) not in (str, bytes) or type(flags) is not int or flags & re.DEBUG:
        return _re_compile(pattern, flags)
    key = ("re", pattern, flags)
    program = _codes.get(key)
    if type(program) is tuple:
        try:
            return _sre.compile(*program)
        except Exception:  # damaged: refused by _sre's check
            pass
    try:
        program = _program(pattern, flags)
        made = _sre.compile(*program)
    except Exception:
        compiled = _re_compile(pattern, flags)  # a bad pattern: re raises its own error here
        _re_compiler.compile = _re_compile  # re made what this could not: leave patterns to it
        return compiled
    if not _re_checked:  # once per process: the program is the one re makes
        _re_checked = True
        if made != _re_compile(pattern, flags):
            _re_compiler.compile = _re_compile
            return _re_compile(pattern, flags)
    _codes[key] = program
    return made
