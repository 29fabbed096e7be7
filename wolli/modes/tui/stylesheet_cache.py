"""Textual's parsed CSS, kept between runs.

Textual turns each stylesheet a start uses (the app's ``tui.tcss``, the ``DEFAULT_CSS`` of each
widget class on the first screen) into rule sets with its tokenizer, written in Python: ~19 ms
of the TUI's start to the footer (~7 % of its CPU), the same text to the same rules every run.
Textual keeps the result for the life of a stylesheet (``Stylesheet._parse_cache``); this keeps
it between runs, as ``__pycache__`` keeps bytecode.

While enabled, ``Stylesheet._parse_rules`` asks this cache after Textual's own, by everything
the rules are made from: the text, where it was read from, whether it is a widget's default
CSS, its tie breaker and scope, and the stylesheet's variables (a theme's colours are put in
while parsing). A hit is the rules as pickled right after Textual parsed them, before anything
could change them; a miss is parsed by Textual as before and kept when it has no errors, so
CSS with errors is parsed, and its errors reported, every time.

The file, ``WOLLI_HOME/cache/css-<python>.bin``, is written for one installation of Textual: it
names the modification time and size of the Textual modules whose classes it holds, and a file
written for another is ignored and replaced, as is a damaged one. Unpickling builds only classes
of Textual and Rich (:class:`_RuleUnpickler`). The file is private to the user (``0600`` in a
``0700`` folder, like the code cache beside it), read up to :data:`MAX_BYTES` and written, as
``.pyc`` files are, not under ``-B`` / ``PYTHONDONTWRITEBYTECODE``. Deleting it is always safe.

``_parse_rules`` is private to Textual: the cache serves only a method whose arguments and
names are those of the Textual releases it was checked against (:func:`_known_method`);
another keeps Textual's own parsing alone.
"""

from __future__ import annotations

import io
import marshal
import os
import pickle
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ...base.cache_file import read_marshalled, replace_private

MAX_BYTES = 4 * 1024 * 1024  # a TUI start with its dialogs opened writes ~100 KB
MAX_ENTRIES = 500
_HEADER = b"wolli-css-cache 1\n"

# (css, read_from, is_default_rules, tie_breaker, scope, variables) -> the pickled rule sets
_Key = tuple[Any, ...]
_entries: dict[_Key, bytes] = {}
_variable_sets: dict[tuple[tuple[str, str], ...], tuple[tuple[str, str], ...]] = {}  # one object each
_unsaved = False  # entries stored or dropped since the file was read or written
_path: str | None = None
_original: Callable[..., Any] | None = None
_stats = {"hits": 0, "parsed": 0}  # this process's, for tests and perf work

# What ``Stylesheet._parse_rules`` reads in the Textual releases this was checked against (8.x):
# its arguments, and the names its code uses. Another method keeps Textual's own parsing.
_ARGUMENTS = ("self", "css", "read_from", "is_default_rules", "tie_breaker", "scope")
_NAMES = frozenset({"_parse_cache", "KeyError", "list", "parse", "_variable_tokens", "TokenError",
                    "Exception", "StylesheetError"})


def cache_path(folder: Path) -> str:
    """The cache file in ``folder`` for this interpreter."""
    return os.path.join(folder, f"css-{sys.implementation.cache_tag}.bin")


def enable(folder: Path) -> None:
    """Serve parsed CSS from the file in ``folder`` (and keep what is parsed for :func:`save`)."""
    global _path, _original
    if _path is not None:
        return
    from textual.css.stylesheet import Stylesheet

    original = Stylesheet.__dict__.get("_parse_rules")
    if not _known_method(original):
        return
    _path = cache_path(folder)
    _entries.update(_load(_path, _installation()))
    _original = original
    Stylesheet._parse_rules = _parse_rules  # type: ignore[method-assign]


def disable() -> None:
    """Textual's own parsing again; what was read is forgotten."""
    global _path, _original, _unsaved
    if _original is not None:
        from textual.css.stylesheet import Stylesheet

        Stylesheet._parse_rules = _original  # type: ignore[method-assign]
    _path, _original, _unsaved = None, None, False
    _entries.clear()
    _variable_sets.clear()


def save() -> None:
    """Write the file when this run parsed CSS it did not hold: a temporary file renamed over
    it. Never raises: a cache that cannot be written is only slower next time."""
    global _unsaved
    path = _path
    if path is None or sys.dont_write_bytecode or not _unsaved:
        return
    _unsaved = False  # before the copy: what the app's thread stores meanwhile is saved next time
    entries = dict(_entries)  # one C call: the app's thread parsing meanwhile cannot tear it
    if len(entries) > MAX_ENTRIES:  # themes and versions piled up: keep the newest
        entries = dict(list(entries.items())[-MAX_ENTRIES:])
    try:
        data = _HEADER + marshal.dumps((_installation(), entries))
    except ValueError:
        return
    if len(data) > MAX_BYTES:
        return
    try:
        replace_private(path, data)
    except OSError:
        _unsaved = True


def stats() -> dict[str, int]:
    """How many stylesheets this process read from the cache (``hits``) and parsed."""
    return dict(_stats)


def _parse_rules(self: Any, css: str, read_from: Any, is_default_rules: bool = False,
                 tie_breaker: int = 0, scope: str = "") -> Any:
    """``Stylesheet._parse_rules`` with the file behind Textual's own cache."""
    cache_key = (css, read_from, is_default_rules, tie_breaker, scope)
    try:
        return self._parse_cache[cache_key]
    except KeyError:
        pass
    key = (*cache_key, _one_object(tuple(self._variables.items())))
    rules = _cached(key)
    if rules is not None:
        _stats["hits"] += 1
        self._parse_cache[cache_key] = rules
        return rules
    global _unsaved
    assert _original is not None  # installed by enable() with it
    rules = _original(self, css, read_from, is_default_rules, tie_breaker, scope)
    _stats["parsed"] += 1
    if _path is not None and not any(rule.errors for rule in rules) and _plain(key):
        try:
            _entries[key] = pickle.dumps(rules, protocol=pickle.HIGHEST_PROTOCOL)
            _unsaved = True
        except Exception:  # a value Textual added that does not pickle: parsed every time
            pass
    return rules


def _cached(key: _Key) -> list[Any] | None:
    global _unsaved
    data = _entries.get(key)
    if data is None:
        return None
    from textual.css.model import RuleSet

    try:
        rules = _RuleUnpickler(io.BytesIO(data)).load()
    except Exception:  # damaged, or a class Textual no longer has: parse it afresh
        rules = None
    if type(rules) is list and all(type(rule) is RuleSet for rule in rules):
        return rules
    _entries.pop(key, None)
    _unsaved = True  # the file is written without it
    return None


class _RuleUnpickler(pickle.Unpickler):
    """Builds what parsed CSS is made of: classes and functions of Textual and Rich, plain
    containers, ``functools.partial`` (a selector's checks: Textual functions with arguments)
    and :func:`_lookup` in place of ``getattr``."""

    _OTHERS = frozenset({("builtins", "set"), ("builtins", "frozenset"), ("builtins", "list"),
                         ("builtins", "tuple"), ("builtins", "dict"), ("functools", "partial")})

    def find_class(self, module: str, name: str) -> Any:
        if module.startswith(("textual.", "rich.")) or (module, name) in self._OTHERS:
            return super().find_class(module, name)
        if (module, name) == ("builtins", "getattr"):
            return _lookup
        raise pickle.UnpicklingError(f"not part of parsed CSS: {module}.{name}")


def _lookup(owner: Any, name: str) -> Any:
    """``getattr`` as pickle calls it for parsed CSS: a ``Styles`` keeps its rules' ``get`` and
    ``__contains__`` as bound methods of its own dict. Nothing else is looked up."""
    if type(owner) is dict and name in ("get", "__contains__"):
        return getattr(owner, name)
    raise pickle.UnpicklingError(f"not part of parsed CSS: {type(owner).__name__}.{name}")


def _one_object(variables: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    """The variables as part of a key: one object per distinct set, so the file holds each once."""
    return _variable_sets.setdefault(variables, variables)


def _plain(value: Any) -> bool:
    """Whether ``value`` is made of what marshal writes back as it was (str, int, bool, tuple)."""
    if type(value) is tuple:
        return all(_plain(part) for part in value)
    return type(value) in (str, int, bool)


def _installation() -> tuple[tuple[str, int, int], ...]:
    """The Textual modules whose classes the file holds, by path, modification time and size."""
    found = []
    for name in ("textual", "textual.css.model", "textual.css.styles", "textual.css.parse"):
        module = sys.modules.get(name)
        path = getattr(module, "__file__", None)
        try:
            st = os.stat(path) if path else None
        except OSError:
            st = None
        found.append((path or name, st.st_mtime_ns if st else 0, st.st_size if st else -1))
    return tuple(found)


def _known_method(method: Any) -> bool:
    code = getattr(method, "__code__", None)
    return (code is not None and code.co_varnames[:code.co_argcount] == _ARGUMENTS
            and frozenset(code.co_names) == _NAMES)


def _load(path: str, installation: tuple[Any, ...]) -> dict[_Key, bytes]:
    loaded = read_marshalled(path, _HEADER, MAX_BYTES)
    if type(loaded) is not tuple or len(loaded) != 2 or loaded[0] != installation or type(loaded[1]) is not dict:
        return {}
    entries: dict[_Key, bytes] = {}
    for key, value in loaded[1].items():
        if type(key) is tuple and len(key) == 6 and type(value) is bytes and _plain(key):
            entries[(*key[:5], _one_object(key[5]))] = value
    return entries
