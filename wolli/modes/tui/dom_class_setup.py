"""Textual's set-up of each new widget class, from what each base class contributes, kept.

Every subclass of Textual's ``DOMNode`` (each widget, screen and app class) runs
``DOMNode.__init_subclass__`` as it is defined. That merges the reactives found in the
``__dict__`` of every class of its MRO, lists ``dir(cls)`` (every attribute name of every base,
sorted) to find the ``compute_``/``_compute_`` methods, and parses the ``BINDINGS`` of every
``DOMNode`` base into a new ``BindingsMap``: ~240 us a class, re-reading ``Widget``,
``DOMNode``, ``MessagePump`` and ``object`` each time, and a TUI start defines ~58 widget
classes before its footer is drawn (~14 ms).

:func:`install` puts in its place a set-up that gives each new class the same attributes
(``_reactives`` in the same order, ``_computes``, ``_css_type_name(s)``, the inherit flags,
``_merged_bindings``) from a memo per base class of what that class's own ``__dict__``
contributes: its reactives, its compute names, its parsed ``BINDINGS``. A memo is used only
while the class's ``__dict__`` holds the same names bound to the same objects (and a list
``BINDINGS`` the same items) as when it was read; otherwise the class is read again, so a
base that gains a reactive, a compute method or a binding after it was made is seen as
Textual would see it. Each new class gets its own binding lists (``bind()`` appends to
them), as with Textual's own set-up; the ``Binding`` objects in them are frozen dataclasses
and are shared between classes.

Only the Textual versions whose set-up code this was checked against are changed (see
``VERIFIED_TEXTUAL``): any other version keeps Textual's own. Classes with a metaclass that
changes ``dir()`` or the MRO, or that override ``_css_bases``/``_merge_bindings``, get
Textual's own set-up too.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from operator import is_
from typing import Any

import textual
from textual.binding import Binding, BindingsMap
from textual.dom import DOMNode
from textual.reactive import Reactive

# Textual releases whose DOMNode.__init_subclass__, _css_bases, _merge_bindings, BindingsMap
# (__init__, from_keys), Binding (fields, make_bindings), _character_to_key and the
# __init_subclass__ of Widget and App are the same syntax tree (compared for each release); the
# equivalence census of tests/unit/test_dom_class_setup.py was run on 8.0.0, 8.1.1 and 8.2.8.
VERIFIED_TEXTUAL = frozenset(
    {"8.0.0", "8.0.1", "8.0.2", "8.1.0", "8.1.1"} | {f"8.2.{patch}" for patch in range(9)}
)

_COMPUTE_PREFIXES = ("_compute_", "compute_")
# Textual's own, kept for uninstall() and for the classes the fast path leaves to it.
_TEXTUAL_INIT_SUBCLASS: Any = DOMNode.__dict__["__init_subclass__"]
_TEXTUAL_CSS_BASES: Any = DOMNode.__dict__["_css_bases"].__func__
_TEXTUAL_MERGE_BINDINGS: Any = DOMNode.__dict__["_merge_bindings"].__func__

BindingItems = tuple[tuple[str, tuple[Binding, ...]], ...]


class _OwnParts:
    """What one class's own ``__dict__`` contributes, and the ``__dict__`` it was read from."""

    __slots__ = ("_bindings", "_bindings_items", "computes", "names", "reactives", "values")

    def __init__(self, namespace: Any) -> None:
        self.names = tuple(namespace)
        self.values = tuple(namespace.values())
        self.reactives = {name: value for name, value in namespace.items() if isinstance(value, Reactive)}
        self.computes = frozenset(
            name.lstrip("_")[8:] for name in self.names if name.startswith(_COMPUTE_PREFIXES)
        )
        self._bindings: Any = namespace.get("BINDINGS", ())  # parsed as Textual's default []
        self._bindings_items: tuple[BindingItems, tuple[Any, ...]] | None = None

    def read_from(self, namespace: Any) -> bool:
        """Whether ``namespace`` binds the same names to the very same objects, in the same order."""
        return tuple(namespace) == self.names and all(map(is_, namespace.values(), self.values))

    def bindings(self) -> BindingItems:
        """This class's ``BINDINGS`` parsed as Textual parses them (key, its bindings), kept
        while a list or tuple ``BINDINGS`` holds the same items."""
        source = self._bindings
        kept = self._bindings_items
        if type(source) is tuple:
            if kept is None:
                kept = self._bindings_items = (_parse(source), ())
            return kept[0]
        if type(source) is not list:
            return _parse(source)  # any other iterable: parsed each time, as Textual does
        if kept is not None and len(kept[1]) == len(source) and all(map(is_, source, kept[1])):
            return kept[0]
        snapshot = tuple(source)
        items = _parse(snapshot)
        self._bindings_items = (items, snapshot)
        return items


def _parse(bindings: Iterable[Any]) -> BindingItems:
    return tuple((key, tuple(found)) for key, found in BindingsMap(bindings).key_to_bindings.items())


# One entry per class that has been a base (or is) of a DOMNode subclass. Textual's own
# `_css_bases` cache already holds every DOMNode subclass for the life of the process, and
# the others are in their MROs, so keeping them here holds nothing longer.
_parts: dict[type, _OwnParts] = {}


def _own_parts(cls: type) -> _OwnParts:
    namespace = cls.__dict__
    parts = _parts.get(cls)
    if parts is None or not parts.read_from(namespace):
        earlier = parts
        parts = _parts[cls] = _OwnParts(namespace)
        if earlier is not None and earlier._bindings is parts._bindings:
            # the same BINDINGS object: its parse holds while its items do (see bindings())
            parts._bindings_items = earlier._bindings_items
    return parts


_plain_metaclasses: dict[type, bool] = {}


def _plain(metaclass: type) -> bool:
    """Whether ``dir()`` of its classes is their MRO's ``__dict__`` names (no ``__dir__`` or
    ``mro`` of its own)."""
    plain = _plain_metaclasses.get(metaclass)
    if plain is None:
        plain = _plain_metaclasses[metaclass] = (
            getattr(metaclass, "__dir__", None) is type.__dir__ and getattr(metaclass, "mro", None) is type.mro
        )
    return plain


def _init_subclass(
    cls: type[DOMNode],
    inherit_css: bool = True,
    inherit_bindings: bool = True,
    inherit_component_classes: bool = True,
) -> None:
    """``DOMNode.__init_subclass__``, with each base's contribution read once (see the module)."""
    if not (
        _plain(type(cls))
        and cls._css_bases.__func__ is _TEXTUAL_CSS_BASES  # type: ignore[attr-defined]
        and cls._merge_bindings.__func__ is _TEXTUAL_MERGE_BINDINGS  # type: ignore[attr-defined]
    ):
        _TEXTUAL_INIT_SUBCLASS.__func__(cls, inherit_css, inherit_bindings, inherit_component_classes)
        return
    super(DOMNode, cls).__init_subclass__()

    # Attributes are set in Textual's order, so the new class's __dict__ is the same too.
    reactives: dict[str, Reactive[Any]] = {}
    cls._reactives = reactives
    computes: set[str] = set()
    # The new class's own memo is read again when it is first a base (its __dict__ gains the
    # attributes below and Widget's can_focus), but its parsed BINDINGS carry over.
    chain = [(base, _own_parts(base)) for base in reversed(cls.__mro__)]
    for _base, parts in chain:
        reactives.update(parts.reactives)
        computes.update(parts.computes)

    cls._inherit_css = inherit_css
    cls._inherit_bindings = inherit_bindings
    cls._inherit_component_classes = inherit_component_classes
    bases = cls._css_bases(cls)
    cls._css_type_name = bases[0].__name__
    css_type_names = {base.__name__ for base in bases}
    cls._merged_bindings = _merge_bindings(chain)
    cls._css_type_names = frozenset(css_type_names)
    cls._computes = frozenset(computes)


def _merge_bindings(chain: list[tuple[type, _OwnParts]]) -> BindingsMap:
    """``DOMNode._merge_bindings`` from the bases' parsed ``BINDINGS``: a later base's key
    replaces an earlier one's, a base with ``inherit_bindings=False`` drops those before it;
    every list is new."""
    merged: list[BindingItems] = []
    for base, parts in chain:
        if issubclass(base, DOMNode):
            if not base._inherit_bindings:
                merged.clear()
            merged.append(parts.bindings())
    keys: dict[str, tuple[Binding, ...]] = {}
    for items in merged:
        for key, bindings in items:
            keys[key] = bindings
    return BindingsMap.from_keys({key: list(bindings) for key, bindings in keys.items()})


def installed_textual_version(package_dir: str | None = None) -> str | None:
    """The version of the Textual being run if it is one of :data:`VERIFIED_TEXTUAL`, read
    from the ``textual-<version>.dist-info`` folder beside the package (a few ``stat``
    calls; ``importlib.metadata`` would scan every installed distribution, ~3-8 ms); None
    when none of those is there."""
    if package_dir is None:
        package_file = getattr(textual, "__file__", None)
        if not package_file:
            return None
        package_dir = os.path.dirname(package_file)
    site = os.path.dirname(package_dir)
    for version in sorted(VERIFIED_TEXTUAL, reverse=True):  # the newest first: the likeliest
        if os.path.isdir(os.path.join(site, f"textual-{version}.dist-info")):
            return version
    return None


def install(textual_version: str | None = None) -> bool:
    """Use the kept set-up for the widget classes defined from now on, if the Textual being run
    (or ``textual_version``) is a verified one; True when it is in place."""
    if DOMNode.__dict__["__init_subclass__"] is _INSTALLED:
        return True
    version = installed_textual_version() if textual_version is None else textual_version
    if version not in VERIFIED_TEXTUAL:
        return False
    _set_init_subclass(_INSTALLED)
    return True


def uninstall() -> None:
    """Put Textual's own set-up back (the memos are dropped)."""
    _set_init_subclass(_TEXTUAL_INIT_SUBCLASS)
    _parts.clear()


def installed() -> bool:
    return DOMNode.__dict__["__init_subclass__"] is _INSTALLED


def _set_init_subclass(method: Callable[..., Any] | classmethod[Any, Any, Any]) -> None:
    DOMNode.__init_subclass__ = method  # type: ignore[assignment,method-assign]


_INSTALLED = classmethod(_init_subclass)
