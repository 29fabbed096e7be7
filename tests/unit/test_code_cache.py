"""The compiled methods of dataclasses and namedtuples, kept between runs (base/code_cache.py)."""

from __future__ import annotations

import builtins
import dataclasses
import os
import subprocess
import sys
import textwrap
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


def compiles_during(monkeypatch, action) -> list[str]:
    seen: list[str] = []
    real = builtins.compile

    def counting(source, *args, **kwargs):
        if isinstance(source, str) and ("__create_fn__" in source or "_tuple_new" in source):
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


@pytest.mark.parametrize("content", [b"", b"garbage", b"wolli-code-cache 1\n" + b"\0" * 4 + b"\xff\xff"])
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
    code_cache.disable()
    assert "exec" not in dataclasses.__dict__
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
    out = subprocess.run([sys.executable, "-c", "import dataclasses, wolli.base.code_cache as c; "
                          "print('exec' in dataclasses.__dict__)"], capture_output=True, text=True, check=True,
                         cwd=Path(__file__).parents[2])
    assert out.stdout.strip() == "False"
