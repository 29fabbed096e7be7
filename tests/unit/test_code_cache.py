"""The compiled methods of dataclasses and namedtuples, kept between runs (base/code_cache.py)."""

from __future__ import annotations

import builtins
import dataclasses
import os
import re
import subprocess
import sys
import textwrap
import typing
from collections import namedtuple
from pathlib import Path

import pytest

from wolli.base import code_cache

CLASSES = textwrap.dedent("""
    from dataclasses import dataclass, field

    @dataclass(frozen=True)
    class Point:
        x: int
        y: int = 0
        tags: list = field(default_factory=list, compare=False)
""")


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    code_cache.disable()
    code_cache.enable(tmp_path)
    yield tmp_path
    code_cache.disable()


def define() -> tuple[type, type]:
    namespace: dict[str, object] = {"__name__": __name__}
    exec(CLASSES, namespace)
    return namespace["Point"], namedtuple("Pair", "left right")  # type: ignore[return-value]


def compiles_during(monkeypatch, action, marker: str | None = None) -> list[str]:
    seen: list[str] = []
    real = builtins.compile

    def counting(source, *args, **kwargs):
        if isinstance(source, str) and (source.startswith(marker) if marker else (
                "__create_fn__" in source or "_tuple_new" in source)):
            seen.append(source)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(builtins, "compile", counting)
    action()
    monkeypatch.setattr(builtins, "compile", real)
    return seen


def test_a_later_run_makes_the_same_classes_without_compiling(cache, monkeypatch):
    made: list[tuple[type, type]] = []
    first = compiles_during(monkeypatch, lambda: made.append(define()))
    assert first  # __init__, __repr__, __eq__, __hash__... and the tuple's __new__
    code_cache.save()
    assert code_cache.cache_path(cache).is_file()
    code_cache.disable()  # a new run: nothing in memory, the file is all there is
    code_cache.enable(cache)
    assert compiles_during(monkeypatch, lambda: made.append(define())) == []
    (Point, Pair), (OldPoint, _) = made[1], made[0]
    assert Point(1, tags=["a"]) == Point(1, 0, ["b"]) and Point(1) != Point(2)
    assert repr(Point(1, 2)) == "Point(x=1, y=2, tags=[])" == repr(OldPoint(1, 2))
    assert hash(Point(1, 2)) == hash(OldPoint(1, 2))
    with pytest.raises(dataclasses.FrozenInstanceError):
        Point(1).x = 3  # type: ignore[misc]
    assert Pair(1, 2) == (1, 2) and Pair(1, 2).right == 2 and repr(Pair(1, 2)) == "Pair(left=1, right=2)"


def test_a_run_that_compiled_nothing_new_leaves_the_file_alone(cache, monkeypatch):
    define()
    code_cache.save()
    path = code_cache.cache_path(cache)
    before = path.stat()
    code_cache.disable()
    code_cache.enable(cache)
    define()
    code_cache.save()
    after = path.stat()
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert (after.st_mode & 0o777) == 0o600


PATTERNS = [(r"(?P<word>[a-z]+)-(\d+)", 0), (r"^\s*#\s*(?P<title>.+?)\s*$", re.M), (rb"\x1b\[(\d+)m", 0)]


def parses_during(monkeypatch, action) -> list[object]:
    """The patterns ``re`` parsed (the slow part the cache spares) while ``action`` ran."""
    seen: list[object] = []
    real = re._parser.parse  # type: ignore[attr-defined]

    def counting(pattern, flags=0, *args):
        seen.append(pattern)
        return real(pattern, flags, *args)

    monkeypatch.setattr(re._parser, "parse", counting)  # type: ignore[attr-defined]
    re.purge()  # re's own cache would answer first
    action()
    monkeypatch.setattr(re._parser, "parse", real)  # type: ignore[attr-defined]
    return seen


def compile_patterns() -> list[re.Pattern]:
    return [re.compile(pattern, flags) for pattern, flags in PATTERNS]


def test_a_later_run_makes_the_same_regular_expressions_without_parsing_them(cache, monkeypatch):
    made: list[list[re.Pattern]] = []
    assert parses_during(monkeypatch, lambda: made.append(compile_patterns()))
    code_cache.save()
    code_cache.disable()
    code_cache.enable(cache)
    assert parses_during(monkeypatch, lambda: made.append(compile_patterns())) == []
    first, again = made
    assert again == first  # equal patterns: the same program, flags and text
    assert [p.groupindex for p in again] == [p.groupindex for p in first]
    word = again[0].fullmatch("abc-42")
    assert word is not None and word.group("word", 2) == ("abc", "42")
    title = again[1].search("text\n  # A title  \nmore")
    assert title is not None and title.group("title") == "A title"
    assert again[2].findall(b"\x1b[31mred\x1b[0m") == [b"31", b"0"]


def test_patterns_compiled_once_the_session_is_up_are_not_written(cache):
    re.purge()
    re.compile(r"(?P<start>[a-z]+) during the start")
    code_cache.stop_recording_patterns()  # the session is up: later patterns may be its data
    secret = re.compile(r"a search typed in the session: hunter2")
    assert secret.search("xx a search typed in the session: hunter2") is not None  # re's own, working
    code_cache.save()
    keys = {key for key in code_cache._load(code_cache.cache_path(cache)) if key[0] == "re"}
    assert ("re", r"(?P<start>[a-z]+) during the start", 0) in keys
    assert not any("hunter2" in str(key[1]) for key in keys)


def test_a_damaged_program_is_refused_and_the_pattern_compiled_afresh(cache, monkeypatch):
    pattern, flags = PATTERNS[0]
    code_cache._codes[("re", pattern, flags)] = (pattern, 32, [999, 1, 2], 2, {"word": 1}, (None, "word", None))
    re.purge()
    compiled = re.compile(pattern, flags)
    match = compiled.fullmatch("abc-42")
    assert match is not None and match.group("word") == "abc"
    assert code_cache._codes[("re", pattern, flags)][2] != [999, 1, 2]  # replaced by the real one


def test_bad_patterns_fail_as_re_makes_them_fail(cache):
    re.purge()
    with pytest.raises(re.error, match="missing \\)"):
        re.compile("(unclosed")
    with pytest.raises(ValueError, match="incompatible"):
        re.compile("x", re.ASCII | re.UNICODE)
    assert re.compile("(closed)").fullmatch("closed")
    assert re._compiler.compile is code_cache._pattern  # type: ignore[attr-defined]  # still caching


def test_forward_references_are_compiled_once(cache, monkeypatch):
    def refer() -> None:
        typing.ForwardRef("dict[str, list[int]]")

    assert compiles_during(monkeypatch, refer, marker="dict[str") != []
    code_cache.save()
    code_cache.disable()
    code_cache.enable(cache)
    assert compiles_during(monkeypatch, refer, marker="dict[str") == []
    assert typing.get_type_hints(Holder, localns={"Holder": Holder}) == {"value": dict[str, list[int]]}
    with pytest.raises(SyntaxError):
        typing.ForwardRef("not an expression")


class Holder:
    value: dict[str, list[int]]


@pytest.mark.parametrize("content", [b"", b"garbage", b"wolli-code-cache 2\n" + b"\0" * 8 + b"\xff\xff"])
def test_a_damaged_or_foreign_file_is_ignored_and_replaced(cache, content):
    path = code_cache.cache_path(cache)
    path.write_bytes(content)
    code_cache.disable()
    code_cache.enable(cache)  # no error
    Point, _ = define()
    assert Point(1) == Point(1)
    code_cache.save()
    code_cache.disable()
    code_cache.enable(cache)
    assert code_cache._codes  # what the last save wrote is read back


def test_nothing_is_written_when_bytecode_is_not_written(cache, monkeypatch):
    monkeypatch.setattr(sys, "dont_write_bytecode", True)  # -B / PYTHONDONTWRITEBYTECODE
    define()
    code_cache.save()
    assert not code_cache.cache_path(cache).exists()


def test_disabled_means_the_builtins_again(cache):
    assert dataclasses.__dict__.get("exec") is not None
    assert re._compiler.compile is not code_cache._re_compile  # type: ignore[attr-defined]
    code_cache.disable()
    assert "exec" not in dataclasses.__dict__
    assert "compile" not in typing.__dict__
    assert re._compiler.compile is code_cache._re_compile  # type: ignore[attr-defined]
    assert define()[0](3).x == 3



def test_the_command_line_keeps_the_cache_in_wolli_home(tmp_path, wolli_home):
    """Two runs of ``wolli``: the first writes the cache, the second finds all it needs there
    and so leaves the file as it was."""
    (wolli_home / "models.json").write_text('{"providers": {}}')
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    command = [sys.executable, "-m", "wolli", "-p", "hi", "--model", "nowhere/none", "--no-session"]

    def run() -> None:
        subprocess.run(command, cwd=tmp_path, env=env, capture_output=True, timeout=60, check=False)

    run()
    files = list((wolli_home / "cache").glob("code-*.bin"))
    assert len(files) == 1
    first = files[0].stat()
    run()
    second = files[0].stat()
    assert (second.st_ino, second.st_mtime_ns) == (first.st_ino, first.st_mtime_ns)


def test_the_module_itself_does_not_enable_anything():
    out = subprocess.run([sys.executable, "-c", "import dataclasses, re, typing, wolli.base.code_cache as c; "
                          "print('exec' in dataclasses.__dict__, 'compile' in typing.__dict__, "
                          "re._compiler.compile is c._pattern)"], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[2])
    assert out.stdout.strip() == "False False False"


def _wire_class() -> type:
    from wolli.base.records import record
    from wolli.base.wire import WireModel

    @record(slots=True, kw_only=True)
    class Reading(WireModel):  # a new class each call: its decoder is written afresh
        sensor_name: str
        value: float = 0.0

    return Reading


def test_the_wire_codecs_decoders_come_from_the_cache(cache):
    def decoders() -> list[str]:
        return [key[1] for key in code_cache._codes if key[0] == "exec" and key[1].startswith("def fast(data):")]

    first = _wire_class().model_validate({"sensorName": "a", "value": 1.5})
    assert (first.sensor_name, first.value) == ("a", 1.5)
    written = decoders()
    assert any("'sensorName'" in source for source in written)  # compiled through the cache
    code_cache.save()
    code_cache.disable()
    code_cache.enable(cache)  # a new run: the decoder's code is read back from the file
    assert decoders() == written
    again = _wire_class().model_validate({"sensorName": "b"})
    assert (again.sensor_name, again.value) == ("b", 0.0)
    with pytest.raises(ValueError, match="sensor"):  # the general decoder still names what is wrong
        _wire_class().model_validate({"sensorName": 3})
