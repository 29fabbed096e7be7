"""``record``: ``@dataclass`` with one shared ``__eq__``, ``__repr__`` and ``__hash__``.

``dataclasses`` writes the source of each generated method and compiles it, class by class:
for the ~100 classes a start-up defines (messages, events, session entries) that is a large
part of importing the runtime, and ``__eq__``/``__repr__`` are rarely called. A class made
with :func:`record` gets ``__init__`` (and ``__match_args__``, slots, ordering...) from
``dataclasses`` as before, while equality, repr and (for a frozen class) hashing are shared
functions reading the class's fields when first called. They behave as the generated ones:
equal when of the same class and the compared fields are equal, ``Name(field=value, ...)``
with the fields that have ``repr=True``, unhashable unless frozen, and a method written in
the class body is kept. ``dataclasses.fields``, ``replace`` and ``asdict`` work unchanged.
"""

from __future__ import annotations

import dataclasses
import threading
from collections.abc import Callable
from typing import Any, TypeVar, dataclass_transform, overload

T = TypeVar("T", bound=type)

_repr_running = threading.local()


def _names(cls: type, kind: str) -> tuple[str, ...]:
    """The fields of ``cls`` taking part in ``kind`` (compare, repr or hash), cached on it."""
    attribute = f"_record_{kind}_names"
    names: tuple[str, ...] | None = cls.__dict__.get(attribute)
    if names is None:
        fields = dataclasses.fields(cls)
        if kind == "hash":
            names = tuple(f.name for f in fields if (f.compare if f.hash is None else f.hash))
        else:
            names = tuple(f.name for f in fields if getattr(f, kind))
        setattr(cls, attribute, names)
    return names


def _record_eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    names = _names(self.__class__, "compare")
    return tuple([getattr(self, n) for n in names]) == tuple([getattr(other, n) for n in names])


def _record_hash(self: Any) -> int:
    return hash(tuple([getattr(self, n) for n in _names(self.__class__, "hash")]))


def _record_repr(self: Any) -> str:
    # as ``reprlib.recursive_repr`` (which the generated repr uses): an object inside itself
    # is shown as "...", per thread
    running: set[int] | None = getattr(_repr_running, "keys", None)
    if running is None:
        running = _repr_running.keys = set()
    key = id(self)
    if key in running:
        return "..."
    running.add(key)
    try:
        fields = ", ".join(f"{n}={getattr(self, n)!r}" for n in _names(self.__class__, "repr"))
        return f"{self.__class__.__qualname__}({fields})"
    finally:
        running.discard(key)


def _finish(cls: type, own: dict[str, Any], eq: bool, repr_: bool, frozen: bool) -> type:
    """Put the shared methods on the class ``dataclasses`` made (``own``: the body's names)."""
    if repr_ and "__repr__" not in own:
        cls.__repr__ = _record_repr  # type: ignore[assignment]
    if eq and "__eq__" not in own:
        cls.__eq__ = _record_eq  # type: ignore[assignment]
    # dataclasses' table for __hash__: a body's own __hash__ wins (a body's __eq__ alone sets
    # it to None, which does not count); else eq and frozen hash the fields, eq alone makes
    # the class unhashable
    body_hash = own.get("__hash__", dataclasses.MISSING)
    explicit = not (body_hash is dataclasses.MISSING or (body_hash is None and "__eq__" in own))
    if eq and not explicit:
        cls.__hash__ = _record_hash if frozen else None  # type: ignore[assignment]
    return cls


def _name_fields_in_doc(cls: type) -> None:
    """A class without a docstring gets one naming its fields, ``Name(a, b)``. ``dataclasses``
    would write its signature there, from ``inspect.signature``: ~0.25 ms a class, about 2 %
    of the TUI's start for the ~85 records it defines, for text nobody reads at run time."""
    if cls.__dict__.get("__doc__") is None:
        names = dict.fromkeys(getattr(cls, "__dataclass_fields__", {}))  # inherited fields first
        names.update(dict.fromkeys(cls.__dict__.get("__annotations__", {})))
        cls.__doc__ = f"{cls.__name__}({', '.join(names)})"


@overload
def record(cls: T, /) -> T: ...
@overload
def record(
    *, init: bool = True, repr: bool = True, eq: bool = True, order: bool = False, unsafe_hash: bool = False,
    frozen: bool = False, match_args: bool = True, kw_only: bool = False, slots: bool = False,
    weakref_slot: bool = False,
) -> Callable[[T], T]: ...


@dataclass_transform(field_specifiers=(dataclasses.field, dataclasses.Field))
def record(cls: Any = None, /, **options: Any) -> Any:
    """``dataclasses.dataclass`` with the same options, sharing eq/repr/hash (module doc)."""
    eq = options.pop("eq", True)
    repr_ = options.pop("repr", True)
    frozen = options.get("frozen", False)
    if options.get("order") or options.get("unsafe_hash"):  # rare: leave it all to dataclasses
        options.update(eq=eq, repr=repr_)

        def plain(c: Any) -> Any:
            return dataclasses.dataclass(c, **options)

        return plain if cls is None else plain(cls)

    def wrap(c: Any) -> Any:
        own = dict(c.__dict__)
        _name_fields_in_doc(c)
        made = dataclasses.dataclass(c, eq=False, repr=False, **options)
        return _finish(made, own, eq, repr_, frozen)

    return wrap if cls is None else wrap(cls)
