"""``record`` behaves as ``dataclasses.dataclass`` for equality, repr and hashing."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

import pytest

from wolli.base.records import record


def twins(**options):
    """The same class made by ``dataclass`` and by ``record`` with ``options``."""
    made = []
    for decorate in (dataclass, record):
        @decorate(**options)
        class Point:
            x: int
            y: list[int] = field(default_factory=list)
            note: str = field(default="", compare=False, repr=False)
        made.append(Point)
    return made


@pytest.mark.parametrize("options", [{}, {"slots": True}, {"kw_only": True, "slots": True}, {"frozen": True},
                                     {"frozen": True, "slots": True}, {"eq": False}, {"repr": False}])
def test_equality_repr_and_hash_match_dataclasses(options):
    plain, shared = twins(**options)
    a, b, c = (shared(x=1, y=[2], note="a"), shared(x=1, y=[2], note="b"), shared(x=2))
    pa, pb, pc = (plain(x=1, y=[2], note="a"), plain(x=1, y=[2], note="b"), plain(x=2))
    assert (a == b, a == c, a != c) == (pa == pb, pa == pc, pa != pc)
    assert (a == pa) is False  # another class never compares equal
    if options.get("repr", True):
        assert repr(a).replace(shared.__qualname__, "P") == repr(pa).replace(plain.__qualname__, "P")
        assert repr(a).endswith("Point(x=1, y=[2])")
    else:
        assert repr(a).startswith("<") and repr(pa).startswith("<")
    assert (shared.__hash__ is None) == (plain.__hash__ is None)
    if options.get("frozen"):
        a2 = shared(x=1, y=(2,), note="z")
        pa2 = plain(x=1, y=(2,), note="z")
        assert hash(a2) == hash(pa2) == hash(shared(x=1, y=(2,)))
    assert [f.name for f in dataclasses.fields(shared)] == ["x", "y", "note"]
    assert dataclasses.replace(a, x=5).x == 5
    assert shared.__match_args__ == plain.__match_args__


def test_methods_written_in_the_body_are_kept():
    @record(frozen=True)
    class Named:
        name: str

        def __repr__(self) -> str:
            return f"<{self.name}>"

        def __eq__(self, other: object) -> bool:
            return isinstance(other, Named) and other.name.lower() == self.name.lower()

        def __hash__(self) -> int:
            return hash(self.name.lower())

    assert repr(Named("A")) == "<A>"
    assert Named("A") == Named("a") and hash(Named("A")) == hash(Named("a"))


def test_a_subclass_compares_its_own_fields_and_a_recursive_repr_stops():
    @record(slots=True)
    class Base:
        a: int

    @record(slots=True)
    class Child(Base):
        b: list[object]

    assert Child(1, [2]) == Child(1, [2]) and Child(1, [2]) != Child(1, [3])
    assert Base(1) != Child(1, [])
    looped = Child(1, [])
    looped.b.append(looped)
    assert repr(looped).endswith("Child(a=1, b=[...])")


def test_order_falls_back_to_generated_comparisons():
    @record(order=True)
    class Version:
        major: int
        minor: int

    assert Version(1, 2) < Version(1, 3) and sorted([Version(2, 0), Version(1, 9)])[0] == Version(1, 9)


def test_a_record_without_a_docstring_is_named_by_its_fields_without_a_signature(monkeypatch):
    """dataclasses writes a signature (inspect.signature, slow at start-up) as the docstring
    of a class without one; a record names its fields instead, and keeps a docstring it has."""
    import inspect

    signed: list[object] = []
    real = inspect.signature

    def counting(obj, *args, **kwargs):
        signed.append(obj)
        return real(obj, *args, **kwargs)

    monkeypatch.setattr(inspect, "signature", counting)

    @record(slots=True, kw_only=True)
    class Base:
        kind: str = "base"

    @record(slots=True, kw_only=True)
    class Event(Base):
        value: int = 0

    @record
    class Documented:
        """Said in words."""

        text: str

    assert signed == []
    assert Event.__doc__ == "Event(kind, value)" and Base.__doc__ == "Base(kind)"
    assert Documented.__doc__ == "Said in words."
    assert Event(kind="k", value=2) == Event(kind="k", value=2) and dataclasses.fields(Event)[1].name == "value"
