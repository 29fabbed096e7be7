"""Plain-dataclass JSON types: camelCase on the wire, snake_case in Python, unknown keys kept.

Messages, content blocks, stream events and session entries are built on every start and for
every streamed token, so they are ``@dataclass(slots=True, kw_only=True)`` subclasses of
:class:`WireModel` rather than pydantic models (importing pydantic and building ~55 models
cost ~0.1 s of each start). This module is the one codec they share:

- ``Cls.model_validate(data)`` checks a JSON object against the field annotations and builds
  the instance (nested wire classes, ``list``/``dict`` items, ``Literal`` values, unions told
  apart by their ``type``/``role`` tag). Bad data raises :class:`WireError` (a ``ValueError``)
  naming the path of the first bad value. Keys may be camelCase or snake_case.
- ``obj.to_json_dict()`` / ``obj.to_json()`` give camelCase JSON without ``None`` fields.
- Keys a class does not know are kept in ``wire_extra`` and written back, so a file written by
  a newer version survives a read/write round trip.
- ``model_dump``, ``model_copy``, ``model_fields_set`` keep the spelling extension authors and
  older code already use (the pydantic names), for the arguments Wolli's types need.

A decoder per class is built from its annotations on first use, not at import.
"""

from __future__ import annotations

import base64
import copy
import dataclasses
import json
import types
import typing
from collections.abc import Callable, Iterable
from typing import Any, ClassVar, Literal, TypeVar

from .json_input import parse_json

W = TypeVar("W", bound="WireModel")
Decoder = Callable[[Any], Any]

_MISSING = dataclasses.MISSING


class WireError(ValueError):
    """A JSON value that does not fit its wire type; ``path`` is where (``content.0.text``)."""

    def __init__(self, path: str, message: str) -> None:
        self.path = path
        self.reason = message
        super().__init__(message)

    def within(self, key: str) -> WireError:
        """The same error one level up: ``key`` goes in front of the path."""
        return WireError(f"{key}.{self.path}" if self.path else key, self.reason)

    def __str__(self) -> str:
        return f"{self.path or 'value'}: {self.reason}"


def to_camel(name: str) -> str:
    """``tool_call_id`` -> ``toolCallId`` (the alias rule of every wire field)."""
    head, *rest = name.split("_")
    return head + "".join(part[:1].upper() + part[1:] for part in rest)


class _Plan:
    """What a class needs to read and write itself, built once on first use."""

    __slots__ = ("fields", "by_key", "required", "defaults", "fast")

    def __init__(self, cls: type[WireModel]) -> None:
        hints = typing.get_type_hints(cls)
        self.fields: list[tuple[str, str, Decoder]] = []
        self.by_key: dict[str, tuple[str, Decoder]] = {}
        self.required: list[tuple[str, str]] = []
        self.defaults: dict[str, Any] = {}
        for f in dataclasses.fields(cls):
            key = f.metadata.get("alias") or to_camel(f.name)
            decode = _decoder(hints[f.name])
            self.fields.append((f.name, key, decode))
            self.by_key[key] = (f.name, decode)
            self.by_key.setdefault(f.name, (f.name, decode))
            if f.default is _MISSING and f.default_factory is _MISSING:
                self.required.append((f.name, key))
            elif f.default is not _MISSING:
                self.defaults[f.name] = f.default
        self.fast = _compile_fast(cls, self, hints)


def _compile_fast(cls: type[WireModel], plan: _Plan, hints: dict[str, Any]) -> Callable[[dict[str, Any]], Any]:
    """A decoder written out for ``cls`` (as ``dataclasses`` writes ``__init__``) for the
    common case: camelCase keys only, every value of the right type. It returns None for
    anything else (snake_case or unknown keys, a missing or wrong value), and the general
    decoder then does the work and names what is wrong. About twice as fast on a session file.
    """
    required = {name for name, _ in plan.required}
    names: dict[str, Any] = {"cls": cls, "M": _MISSING, "KEYS": frozenset(key for _, key, _ in plan.fields)}
    body = ["def fast(data):", "    if not data.keys() <= KEYS:", "        return None", "    get = data.get",
            "    kw = {}"]
    for index, (name, key, decode) in enumerate(plan.fields):
        hint = hints[name]
        body.append(f"    v = get({key!r}, M)")
        body.append("    if v is M:")
        body.append("        return None" if name in required else "        pass")
        body.append("    else:")
        names[f"d{index}"] = decode  # the field's own decoder: _fast_nested's lines fall back on it too
        check = _fast_check(hint, f"d{index}", f"l{index}", names)
        if check is None:
            check = _fast_nested(hint, index, names)
        if check is None:
            body.append(f"        v = d{index}(v)")
        else:
            body.extend("        " + line for line in check)
        body.append(f"        kw[{name!r}] = v")
    body.append("    obj = cls(**kw)")
    if cls.wire_track_fields_set:
        body.append("    obj.wire_fields_set = frozenset(kw)")
    body.append("    return obj")
    from . import code_cache

    code_cache.exec_generated("\n".join(body), names)
    return typing.cast(Callable[[dict[str, Any]], Any], names["fast"])


_FAST_TYPES = {str: "str", int: "int", bool: "bool"}


def _fast_check(hint: Any, _: str, literal_name: str, names: dict[str, Any]) -> list[str] | None:
    """Inline lines checking a scalar field (``v`` in, ``return None`` on a miss), or None."""
    members = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    optional = type(None) in members
    rest = [m for m in members if m is not type(None)]
    if len(rest) != 1:
        return None
    (member,) = rest
    lines = ["if v is not None:"] if optional else ["if True:"]
    if member is Any or member is object:
        return []
    if member in _FAST_TYPES:
        lines.append(f"    if v.__class__ is not {_FAST_TYPES[member]}:")
        lines.append("        return None")
        return lines
    if member is float:
        lines += ["    if v.__class__ is int:", "        v = float(v)", "    elif v.__class__ is not float:",
                  "        return None"]
        return lines
    if typing.get_origin(member) is Literal and all(type(v) is str for v in typing.get_args(member)):
        names[literal_name] = {v: v for v in typing.get_args(member)}
        lines += ["    if v.__class__ is not str:", "        return None", f"    v = {literal_name}.get(v)",
                  "    if v is None:", "        return None"]
        return lines
    return None


def _fast_nested(hint: Any, index: int, names: dict[str, Any]) -> list[str] | None:
    """Inline lines for a field holding wire objects: a wire class or a union of them (with
    or without None), or a list of those. A JSON object goes straight to its class's
    written-out decoder, saving the general decoders' calls in between (an assistant
    message in a session file is four objects deep); anything else the field's decoder takes
    (``d<index>``), and any miss returns None (the general decoder then names the error).
    """
    listed = typing.get_origin(hint) is list
    if listed:
        (hint,) = typing.get_args(hint) or (Any,)
    members = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, types.UnionType) else (hint,)
    wire = [m for m in members if m is not type(None)]
    if not wire or not all(isinstance(m, type) and issubclass(m, WireModel) for m in wire):
        return None
    if listed and len(wire) < len(members):
        return None  # list[X | None]: left to the general decoder
    tags: dict[str, type[WireModel]] = {}
    if len(wire) > 1:
        for cls in wire:
            tag = _tag_of(cls)
            if tag is None or (tags and tag[0] != names.get(f"k{index}")) or not isinstance(tag[1], str):
                return None
            names[f"k{index}"] = tag[0]
            tags[tag[1]] = cls
        names[f"t{index}"] = tags
    else:
        names[f"c{index}"] = wire[0]
    names["FASTS"], names["FAST_OF"] = _FASTS, _fast_of
    one = ["if x.__class__ is not dict:", "    return None"]
    if tags:
        one += [f"c = x.get(k{index})", f"c = t{index}.get(c) if c.__class__ is str else None",
                "if c is None:", "    return None"]
    else:
        one.append(f"c = c{index}")
    one += ["x = (FASTS.get(c) or FAST_OF(c))(x)", "if x is None:", "    return None"]
    if listed:
        return ["if v.__class__ is list:", "    out = []", "    for x in v:",
                *("        " + line for line in one), "        out.append(x)", "    v = out",
                "else:", f"    v = d{index}(v)"]
    return ["if v.__class__ is dict:", "    x = v", *("    " + line for line in one[2:]), "    v = x",
            "else:", f"    v = d{index}(v)"]


_PLANS: dict[type, _Plan] = {}


def _plan(cls: type[WireModel]) -> _Plan:
    plan = _PLANS.get(cls)
    if plan is None:
        plan = _PLANS[cls] = _Plan(cls)
    return plan


class WireModel:
    """Base of every JSON-facing dataclass (see the module doc)."""

    # Not dataclass fields: unknown JSON keys, and (for classes that ask) the keys a decoded
    # object was given.
    __slots__ = ("wire_extra", "wire_fields_set")
    wire_extra: dict[str, Any]
    wire_fields_set: frozenset[str]
    wire_track_fields_set: ClassVar[bool] = False
    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]  # every subclass is a dataclass

    # ------------------------------------------------------------------ reading

    @classmethod
    def model_validate(cls: type[W], data: Any) -> W:
        if isinstance(data, cls):
            return data
        return typing.cast(W, _decode_object(cls, data))

    @classmethod
    def model_validate_json(cls: type[W], text: str | bytes) -> W:
        try:
            data = parse_json(text)
        except ValueError as exc:
            raise WireError("", f"not valid JSON ({exc})") from None
        return cls.model_validate(data)

    # ------------------------------------------------------------------ writing

    def to_json_dict(self) -> dict[str, Any]:
        """camelCase JSON, ``None`` fields left out, unknown keys written back."""
        out: dict[str, Any] = {}
        for name, key, _ in _plan(type(self)).fields:
            value = getattr(self, name)
            if value is not None:
                out[key] = _json(value, True)
        extra = self.wire_extra_or_none()
        if extra:
            for key, value in extra.items():
                if value is not None:
                    out[key] = _json(value, True)
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_json_dict(), ensure_ascii=False, separators=(",", ":"))

    def model_dump(
        self,
        *,
        mode: Literal["python", "json"] = "python",
        by_alias: bool = False,
        exclude_none: bool = False,
        exclude: Iterable[str] | None = None,
        warnings: bool = True,
    ) -> dict[str, Any]:
        """The pydantic spelling: snake_case keys unless ``by_alias``; ``None`` kept unless
        ``exclude_none``; ``exclude`` names top-level fields to leave out. (``warnings`` is
        accepted for pydantic's callers: a value of another shape is dumped as it is.)"""
        if mode == "json" and by_alias and exclude_none and not exclude:
            return self.to_json_dict()
        return _dump(self, mode == "json", by_alias, exclude_none, set(exclude or ()))

    def model_dump_json(self, *, by_alias: bool = False, exclude_none: bool = False) -> str:
        data = self.model_dump(mode="json", by_alias=by_alias, exclude_none=exclude_none)
        return json.dumps(data, ensure_ascii=False, separators=(",", ":"))

    # ------------------------------------------------------------------ copying

    def model_copy(self: W, *, update: dict[str, Any] | None = None, deep: bool = False) -> W:
        """A copy with ``update`` applied as given (not validated, as pydantic does)."""
        new = copy.deepcopy(self) if deep else copy.copy(self)
        extra = new.wire_extra_or_none()
        if extra is not None and not deep:
            new.wire_extra = dict(extra)
        names = {f.name for f in dataclasses.fields(new)}
        for key, value in (update or {}).items():
            if key in names:
                setattr(new, key, value)
            else:
                if new.wire_extra_or_none() is None:
                    new.wire_extra = {}
                new.wire_extra[key] = value
        return new

    # ------------------------------------------------------------------ introspection

    def wire_extra_or_none(self) -> dict[str, Any] | None:
        try:
            return self.wire_extra
        except AttributeError:
            return None

    @property
    def model_extra(self) -> dict[str, Any]:
        return self.wire_extra_or_none() or {}

    @property
    def model_fields_set(self) -> set[str]:
        """Fields given when decoded; for an object built in code, those off their default."""
        try:
            return set(self.wire_fields_set)
        except AttributeError:
            pass
        out = set()
        for f in dataclasses.fields(self):
            if f.default is _MISSING or getattr(self, f.name) != f.default:
                out.add(f.name)
        return out


def wire_union(*classes: type[WireModel]) -> Decoder:
    """A decoder choosing among wire classes by their tag field (``type`` or ``role``)."""
    return _tagged_union(classes)


# ---------------------------------------------------------------------------- decoding
# A decoder takes a JSON value and returns the Python value or raises WireError; the error's
# path is relative and each enclosing object or list puts its key in front on the way out, so
# a value that fits costs no path string.


def _fast_of(cls: type[WireModel]) -> Callable[[dict[str, Any]], Any]:
    fast = _FASTS[cls] = _plan(cls).fast
    return fast


_FASTS: dict[type, Callable[[dict[str, Any]], Any]] = {}  # each class's written-out decoder


def _decode_object(cls: type[WireModel], data: Any) -> Any:
    if data.__class__ is dict:
        return _decode_dict(cls, data)
    return _decode_checked(cls, data)


def _decode_dict(cls: type[WireModel], data: dict[str, Any]) -> Any:
    """A JSON object (exactly a dict): the class's written-out decoder, else the general one."""
    fast = _FASTS.get(cls) or _fast_of(cls)
    try:
        obj = fast(data)
    except (WireError, TypeError, ValueError):
        obj = None
    if obj is not None:
        return obj
    return _decode_checked(cls, data)


def _decode_checked(cls: type[WireModel], data: Any) -> WireModel:
    """The general decoder: any spelling of the keys, unknown ones kept, errors named."""
    if not isinstance(data, dict):
        raise WireError("", f"expected an object for {cls.__name__}, got {_kind(data)}")
    plan = _plan(cls)
    values: dict[str, Any] = {}
    extra: dict[str, Any] | None = None
    by_key = plan.by_key
    for key, value in data.items():
        known = by_key.get(key)
        if known is None:
            if extra is None:
                extra = {}
            extra[key] = value
            continue
        name, decode = known
        try:
            values[name] = decode(value)
        except WireError as exc:
            raise exc.within(key) from None
    if len(values) < len(plan.required) or any(name not in values for name, _ in plan.required):
        for name, key in plan.required:
            if name not in values:
                raise WireError(key, "field required")
    try:
        obj = cls(**values)
    except (TypeError, ValueError) as exc:
        raise WireError("", str(exc)) from None
    if extra is not None:
        obj.wire_extra = extra
    if cls.wire_track_fields_set:
        obj.wire_fields_set = frozenset(values)
    return obj


def _kind(value: Any) -> str:
    return "null" if value is None else type(value).__name__


def _decoder(hint: Any) -> Decoder:
    origin = typing.get_origin(hint)
    if origin is typing.Annotated:
        return _decoder(typing.get_args(hint)[0])
    if hint is Any or hint is object:
        return _any
    if origin is Literal:
        # the canonical constant, not the parsed copy: thousands of entries share one string
        allowed = {v: v for v in typing.get_args(hint)}
        shown = ", ".join(repr(v) for v in allowed)

        def literal(value: Any) -> Any:
            try:
                found = allowed.get(value, _MISSING)
            except TypeError:  # unhashable
                found = _MISSING
            if found is _MISSING or type(found) is not type(value):
                raise WireError("", f"expected one of {shown}, got {value!r}"[:200])
            return found

        return literal
    if origin in (typing.Union, types.UnionType):
        return _union(typing.get_args(hint))
    if origin is list:
        (item_hint,) = typing.get_args(hint) or (Any,)
        item = _decoder(item_hint)
        if item is _any:
            return _plain_list

        def listed(value: Any) -> Any:
            if not isinstance(value, list):
                raise WireError("", f"expected a list, got {_kind(value)}")
            try:
                return [item(v) for v in value]
            except WireError as exc:
                for index, v in enumerate(value):  # find which item, for the path
                    try:
                        item(v)
                    except WireError:
                        raise exc.within(str(index)) from None
                raise

        return listed
    if origin is dict:
        args = typing.get_args(hint)
        item = _decoder(args[1]) if args else _any

        def mapped(value: Any) -> Any:
            if not isinstance(value, dict):
                raise WireError("", f"expected an object, got {_kind(value)}")
            if item is _any:
                return value
            out = {}
            for k, v in value.items():
                try:
                    out[k] = item(v)
                except WireError as exc:
                    raise exc.within(str(k)) from None
            return out

        return mapped
    if isinstance(hint, type) and issubclass(hint, WireModel):
        cls = hint

        def nested(value: Any) -> Any:
            if value.__class__ is dict:  # what a JSON file gives: straight to its decoder
                return _decode_dict(cls, value)
            if isinstance(value, cls):
                return value
            return _decode_object(cls, value)

        return nested
    return _SCALARS.get(hint) or _unknown(hint)


def _unknown(hint: Any) -> Decoder:
    raise TypeError(f"wire codec: unsupported annotation {hint!r}")


def _any(value: Any) -> Any:
    return value


def _plain_list(value: Any) -> Any:
    if not isinstance(value, list):
        raise WireError("", f"expected a list, got {_kind(value)}")
    return value


def _str(value: Any) -> Any:
    if isinstance(value, str):
        return value
    raise WireError("", f"expected a string, got {_kind(value)}")


def _int(value: Any) -> Any:
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    raise WireError("", f"expected an integer, got {_kind(value)}")


def _float(value: Any) -> Any:
    if isinstance(value, float):
        return value
    if isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    raise WireError("", f"expected a number, got {_kind(value)}")


def _bool(value: Any) -> Any:
    if isinstance(value, bool):
        return value
    raise WireError("", f"expected true or false, got {_kind(value)}")


def _none(value: Any) -> Any:
    if value is None:
        return None
    raise WireError("", f"expected null, got {_kind(value)}")


_SCALARS: dict[Any, Decoder] = {str: _str, int: _int, float: _float, bool: _bool, type(None): _none}
# The JSON type each member of a union can take, so a union picks its branch without trying.
_JSON_TYPES: dict[Any, tuple[type, ...]] = {
    str: (str,), int: (int, float), float: (int, float), bool: (bool,), type(None): (type(None),),
    list: (list,), dict: (dict,),
}


def _json_types(hint: Any) -> tuple[type, ...] | None:
    """The Python types of JSON values ``hint`` accepts, or None when it cannot tell."""
    origin = typing.get_origin(hint) or hint
    if origin is typing.Annotated:
        return _json_types(typing.get_args(hint)[0])
    if origin is Literal:
        return tuple({type(v) for v in typing.get_args(hint)})
    if isinstance(origin, type) and issubclass(origin, WireModel):
        return (dict, origin)
    return _JSON_TYPES.get(origin)


def _union(members: tuple[Any, ...]) -> Decoder:
    wire = [m for m in members if isinstance(m, type) and issubclass(m, WireModel)]
    rest = [m for m in members if m not in wire]
    branches: list[tuple[tuple[type, ...] | None, Decoder]] = []
    if wire:
        decode = _tagged_union(tuple(wire)) if len(wire) > 1 else _decoder(wire[0])
        branches.append(((dict, *wire), decode))
    branches.extend((_json_types(m), _decoder(m)) for m in rest)
    if any(types_ is None for types_, _ in branches):
        return _trying([decode for _, decode in branches])
    by_type: dict[type, Decoder] = {}
    for types_, decode in branches:
        assert types_ is not None
        for t in types_:
            by_type.setdefault(t, decode)
    shown = " or ".join(sorted({_JSON_NAMES.get(t, t.__name__) for t in by_type}))

    def either(value: Any) -> Any:
        decode = by_type.get(type(value))
        if decode is None:
            for t, candidate in by_type.items():  # a subclass (bool is an int; a wire subclass)
                if isinstance(value, t) and not (t is int and isinstance(value, bool)):
                    return candidate(value)
            raise WireError("", f"expected {shown}, got {_kind(value)}")
        return decode(value)

    return either


_JSON_NAMES = {str: "a string", int: "a number", float: "a number", bool: "true or false",
               type(None): "null", list: "a list", dict: "an object"}


def _trying(choices: list[Decoder]) -> Decoder:
    def either(value: Any) -> Any:
        first: WireError | None = None
        for choice in choices:
            try:
                return choice(value)
            except WireError as exc:
                # the error of the branch that went deepest says the most
                if first is None or len(exc.path) > len(first.path):
                    first = exc
        assert first is not None
        raise first

    return either


def _tagged_union(classes: tuple[type[WireModel], ...]) -> Decoder:
    tags: dict[Any, type[WireModel]] = {}
    field_name = ""
    for cls in classes:
        tag = _tag_of(cls)
        if tag is None:
            raise TypeError(f"wire codec: {cls.__name__} has no type/role tag")
        field_name = tag[0]
        tags[tag[1]] = cls
    key = field_name
    shown = ", ".join(repr(t) for t in tags)

    def tagged(value: Any) -> Any:
        if value.__class__ is dict:  # what a JSON file gives: the tag's class decoded at once
            tag = value.get(key)
            cls = tags.get(tag) if tag.__class__ is str else None
            if cls is not None:
                return _decode_dict(cls, value)
        if isinstance(value, classes):
            return value
        if not isinstance(value, dict):
            raise WireError("", f"expected an object, got {_kind(value)}")
        tag = value.get(key)
        cls = tags.get(tag) if isinstance(tag, str) else None
        if cls is None:
            raise WireError(key, f"expected one of {shown}, got {tag!r}"[:200])
        return _decode_object(cls, value)

    return tagged


def _tag_of(cls: type[WireModel]) -> tuple[str, Any] | None:
    for f in dataclasses.fields(cls):
        if f.name in ("type", "role") and isinstance(f.default, str):
            return f.name, f.default
    return None


# ---------------------------------------------------------------------------- encoding


def _json(value: Any, by_alias: bool) -> Any:
    """JSON-ready form of a field value (camelCase wire objects, ``None`` fields dropped)."""
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    if isinstance(value, WireModel):
        return value.to_json_dict() if by_alias else _dump(value, True, False, True, set())
    if isinstance(value, list | tuple):
        return [_json(v, by_alias) for v in value]
    if isinstance(value, dict):
        return {str(k): _json(v, by_alias) for k, v in value.items()}
    return _exotic(value, True)


def _exotic(value: Any, as_json: bool) -> Any:
    if isinstance(value, bytes):
        return base64.b64encode(value).decode("ascii") if as_json else value
    dump = getattr(value, "model_dump", None)
    if callable(dump):  # a pydantic model an extension put into ``details``
        return dump(mode="json" if as_json else "python", by_alias=True, exclude_none=True)
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _json(getattr(value, f.name), True) for f in dataclasses.fields(value)}
    if not as_json:
        return value
    from pydantic_core import to_jsonable_python  # rare values (paths, dates, enums, sets)

    return to_jsonable_python(value)


def _dump(obj: WireModel, as_json: bool, by_alias: bool, exclude_none: bool, exclude: set[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}

    def one(value: Any) -> Any:
        if isinstance(value, WireModel):
            return _dump(value, as_json, by_alias, exclude_none, set())
        if isinstance(value, list | tuple):
            return [one(v) for v in value]
        if isinstance(value, dict):
            return {k: one(v) for k, v in value.items()}
        if value is None or isinstance(value, (str, int, float, bool)):
            return value
        return _exotic(value, as_json)

    for name, key, _ in _plan(type(obj)).fields:
        if name in exclude:
            continue
        value = getattr(obj, name)
        if value is None and exclude_none:
            continue
        out[key if by_alias else name] = one(value)
    extra = obj.wire_extra_or_none()
    if extra:
        for key, value in extra.items():
            if key not in exclude and not (value is None and exclude_none):
                out[key] = one(value)
    return out
