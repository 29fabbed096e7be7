"""The bytecode of a start's modules served from one file (base/module_bundle.py)."""

from __future__ import annotations

import ast
import importlib
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from wolli.base import module_bundle
from wolli.base.module_bundle import BundledLoader

PACKAGE = "bundled_pkg_for_test"


@pytest.fixture
def tree(tmp_path, monkeypatch):
    """A package on ``sys.path``, bytecode written (to a prefix of the test's own), no bundle."""
    source = tmp_path / "src"
    (source / PACKAGE).mkdir(parents=True)
    (source / PACKAGE / "__init__.py").write_text("VALUE = 'package'\n")
    (source / PACKAGE / "leaf.py").write_text("VALUE = 'leaf one'\n")
    monkeypatch.setattr(sys, "dont_write_bytecode", False)
    monkeypatch.setattr(sys, "pycache_prefix", str(tmp_path / "pyc"))
    monkeypatch.syspath_prepend(str(source))
    module_bundle.disable()
    forget()
    yield source
    module_bundle.disable()
    forget()


def forget() -> None:
    for name in [name for name in sys.modules if name.partition(".")[0] == PACKAGE]:
        del sys.modules[name]
    importlib.invalidate_caches()


def run(cache: Path, save: bool = True):
    """One start: the bundle in place, the package imported, the bundle saved and closed."""
    module_bundle.enable(str(cache))
    try:
        leaf = importlib.import_module(f"{PACKAGE}.leaf")
        package = sys.modules[PACKAGE]
    finally:
        module_bundle.stop()
        if save:
            module_bundle.save()
        module_bundle.disable()
        forget()
    return package, leaf


def bundle_file(cache: Path) -> Path:
    return Path(module_bundle.bundle_path(str(cache)))


def test_a_second_start_imports_from_the_bundle_what_the_path_finder_would_find(tree, tmp_path):
    cache = tmp_path / "cache"
    package, leaf = run(cache)  # first start: the normal import, then the bundle written
    assert type(leaf.__spec__.loader) is not BundledLoader
    expected = {name: (module.__file__, module.__cached__, getattr(module, "__path__", None), module.VALUE)
                for name, module in ((PACKAGE, package), (f"{PACKAGE}.leaf", leaf))}
    path = bundle_file(cache)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    package, leaf = run(cache)
    assert type(leaf.__spec__.loader) is BundledLoader and type(package.__spec__.loader) is BundledLoader
    assert {name: (module.__file__, module.__cached__, getattr(module, "__path__", None), module.VALUE)
            for name, module in ((PACKAGE, package), (f"{PACKAGE}.leaf", leaf))} == expected
    assert leaf.__spec__.parent == PACKAGE and package.__spec__.submodule_search_locations == [
        str(tree / PACKAGE)]


def test_a_changed_source_is_imported_afresh_and_its_entry_rewritten(tree, tmp_path):
    cache = tmp_path / "cache"
    run(cache)
    time.sleep(0.01)
    (tree / PACKAGE / "leaf.py").write_text("VALUE = 'leaf two, longer'\n")
    _, leaf = run(cache)
    assert leaf.VALUE == "leaf two, longer"
    assert type(leaf.__spec__.loader) is not BundledLoader  # the stale entry was passed over
    _, leaf = run(cache)
    assert leaf.VALUE == "leaf two, longer" and type(leaf.__spec__.loader) is BundledLoader


@pytest.mark.parametrize("damage", ["header", "truncated", "index"])
def test_a_damaged_bundle_is_ignored_and_replaced(tree, tmp_path, damage):
    cache = tmp_path / "cache"
    run(cache)
    path = bundle_file(cache)
    data = path.read_bytes()
    if damage == "header":
        path.write_bytes(b"x" + data[1:])
    elif damage == "truncated":
        path.write_bytes(data[: len(data) - 10])
    else:
        start = len(module_bundle._HEADER) + 8
        path.write_bytes(data[:start] + b"\xff" * 40 + data[start + 40:])
    _, leaf = run(cache)
    assert leaf.VALUE == "leaf one" and type(leaf.__spec__.loader) is not BundledLoader
    _, leaf = run(cache)
    assert type(leaf.__spec__.loader) is BundledLoader


def test_damaged_code_in_the_bundle_falls_back_to_the_source(tree, tmp_path):
    cache = tmp_path / "cache"
    run(cache)
    path = bundle_file(cache)
    data = bytearray(path.read_bytes())
    data[-30:] = b"\x00" * 30  # the last module's code, cut short inside
    path.write_bytes(bytes(data))
    package, leaf = run(cache)
    assert (package.VALUE, leaf.VALUE) == ("package", "leaf one")


def test_nothing_is_written_when_bytecode_is_not(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    run(cache)
    assert not bundle_file(cache).exists()


def test_a_module_put_in_front_on_sys_path_is_not_shadowed_by_the_bundle(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    front = tmp_path / "front"
    front.mkdir()
    monkeypatch.syspath_prepend(str(front))  # part of the path the bundle is written for
    run(cache)
    assert type(run(cache)[1].__spec__.loader) is BundledLoader
    time.sleep(0.01)
    (front / f"{PACKAGE}.py").write_text("VALUE = 'in front'\n")  # a new file where the finder looks first
    module_bundle.enable(str(cache))
    try:
        assert importlib.import_module(PACKAGE).VALUE == "in front"
    finally:
        module_bundle.disable()


def test_a_script_named_like_the_package_in_front_does_not_keep_it_out(tree, tmp_path, monkeypatch):
    """A console script's folder comes first on ``sys.path`` and holds a file named like its
    package (``bin/wolli``): no module, so the package is bundled all the same, while a real
    module of that name in front still wins (the test above)."""
    cache = tmp_path / "cache"
    scripts = tmp_path / "bin"
    scripts.mkdir()
    (scripts / PACKAGE).write_text("#!/usr/bin/env python\n")
    (scripts / f"{PACKAGE}.txt").write_text("nor is this\n")
    monkeypatch.syspath_prepend(str(scripts))
    run(cache)
    package, leaf = run(cache)
    assert type(package.__spec__.loader) is BundledLoader and type(leaf.__spec__.loader) is BundledLoader
    assert leaf.VALUE == "leaf one"


def test_an_unrelated_new_file_on_sys_path_keeps_the_bundle(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    run(cache)
    time.sleep(0.01)
    (tree / "notes.txt").write_text("the working folder changes all the time\n")
    assert type(run(cache)[1].__spec__.loader) is BundledLoader


def test_another_sys_path_is_another_bundle(tree, tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    run(cache)
    monkeypatch.syspath_prepend(str(tmp_path / "elsewhere"))
    assert type(run(cache)[1].__spec__.loader) is not BundledLoader


def test_the_finder_leaves_when_stopped(tree, tmp_path):
    cache = tmp_path / "cache"
    run(cache)
    module_bundle.enable(str(cache))
    module_bundle.stop()
    try:
        assert not any(isinstance(finder, module_bundle.BundleFinder) for finder in sys.meta_path)
        assert type(importlib.import_module(f"{PACKAGE}.leaf").__spec__.loader) is not BundledLoader
    finally:
        module_bundle.disable()


def test_the_command_line_puts_the_bundle_beside_the_code_cache(tmp_path, monkeypatch):
    from wolli.cli.main import cache_folder
    from wolli.config.paths import wolli_home

    monkeypatch.setenv("WOLLI_HOME", str(tmp_path / "home"))
    assert cache_folder() == str(wolli_home() / "cache")
    monkeypatch.delenv("WOLLI_HOME")
    assert cache_folder() == str(wolli_home() / "cache")


def test_a_cli_run_writes_the_bundle_and_the_next_uses_it(tmp_path):
    """Two real processes: the first writes the bundle at exit, the second imports from it."""
    env = {**os.environ, "WOLLI_HOME": str(tmp_path / "home"), "PYTHONPYCACHEPREFIX": str(tmp_path / "pyc")}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    # A print start whose model does not exist: it imports, fails, and exits through main's end.
    script = ("import sys\n"
              "from wolli.base import module_bundle as bundle\n"
              "disable = bundle.disable\n"
              "def report():\n"
              "    print('served', bundle._bundle.served if bundle._bundle else -1, file=sys.stderr)\n"
              "    disable()\n"
              "bundle.disable = report\n"
              "from wolli.cli.main import main\n"
              "main(['-p', 'hi', '--model', 'nosuch/model', '--no-session'])\n")
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True, text=True, timeout=60)
            for _ in range(2)]
    assert Path(module_bundle.bundle_path(str(tmp_path / "home" / "cache"))).is_file()
    served = [[line for line in run.stderr.splitlines() if line.startswith("served ")] for run in runs]
    assert served[0] == ["served 0"], runs[0].stderr[-2000:]
    assert served[1] and int(served[1][0].split()[1]) > 50, runs[1].stderr[-2000:]


def test_the_command_line_imports_next_to_nothing_before_the_bundle_is_in_place():
    """What is imported before ``main`` puts the finder in place cannot come from the bundle:
    ``typing``, ``re``, ``enum``, ``importlib`` and their dozen modules wait for it."""
    probe = ("import sys; before = set(sys.modules); import wolli.cli.main, wolli.base.module_bundle; "
             "print(sorted(set(sys.modules) - before))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60, check=True)
    imported = set(ast.literal_eval(done.stdout))
    assert imported <= {"__future__", "wolli", "wolli.__about__", "wolli.cli", "wolli.cli.main", "wolli.base",
                        "wolli.base.cache_file",
                        "wolli.base.module_bundle"}, imported



def run_with_an_extension_module(cache: Path, tmp_path: Path) -> None:
    """A run with the bundle that loads a module from a file of its own (as an extension's
    is loaded) beside a bundled one, then saves."""
    from importlib.util import module_from_spec, spec_from_file_location

    outside = tmp_path / "ext" / "helper.py"
    if not outside.exists():
        outside.parent.mkdir()
        outside.write_text("VALUE = 'extension'\n")
    module_bundle.enable(str(cache))
    try:
        spec = spec_from_file_location("bundled_ext_helper", outside)
        module = module_from_spec(spec)
        spec.loader.exec_module(module)
        sys.modules["bundled_ext_helper"] = module
        importlib.import_module(f"{PACKAGE}.leaf")
        module_bundle.stop()
        module_bundle.save()
    finally:
        sys.modules.pop("bundled_ext_helper", None)
        module_bundle.disable()
        forget()

def test_a_module_loaded_from_a_file_of_its_own_is_not_bundled(tree, tmp_path):
    """An extension's module, loaded from its file under a name of its choosing: ``import``
    would not find it there, so the bundle must not serve it."""
    cache = tmp_path / "cache"
    run_with_an_extension_module(cache, tmp_path)
    module_bundle.enable(str(cache))
    try:
        held = set(module_bundle._bundle.entries)
    finally:
        module_bundle.disable()
    assert {PACKAGE, f"{PACKAGE}.leaf"} <= held and "bundled_ext_helper" not in held


def test_a_run_that_imports_nothing_new_leaves_the_file_alone(tree, tmp_path, monkeypatch):
    """An extension's own module (never bundled) does not make every run rewrite the file."""
    cache = tmp_path / "cache"
    writes: list[str] = []
    write = module_bundle.replace_private
    monkeypatch.setattr(module_bundle, "replace_private", lambda path, data: (writes.append(path), write(path, data))[1])
    for _ in range(3):
        run_with_an_extension_module(cache, tmp_path)
    assert len(writes) == 1  # the first run wrote the file, the others had nothing new


def test_a_module_whose_package_cannot_be_held_does_not_make_every_run_rewrite(tree, tmp_path, monkeypatch):
    """A submodule with current bytecode in a package without (its source edited after it was
    imported): the bundle cannot serve the one without the other, so no run writes for it."""
    cache = tmp_path / "cache"
    writes: list[str] = []
    write = module_bundle.replace_private
    monkeypatch.setattr(module_bundle, "replace_private", lambda path, data: (writes.append(path), write(path, data))[1])
    init = tree / PACKAGE / "__init__.py"
    for edit in range(3):
        module_bundle.enable(str(cache))
        try:
            importlib.import_module(f"{PACKAGE}.leaf")
            init.write_text("VALUE = 'package'\n" + "#" * (edit + 1) + "\n")  # its .pyc no longer current
            module_bundle.stop()
            module_bundle.save()
        finally:
            module_bundle.disable()
            forget()
    assert len(writes) == 1  # the first run wrote the rest of what it imported, the others nothing


def test_python_dash_m_in_another_folder_uses_the_same_bundle(tree, tmp_path, monkeypatch):
    """``python -m wolli`` puts the working folder first on ``sys.path``: a run in another
    folder searches the same way, unless that folder holds a module of the same name."""
    cache = tmp_path / "cache"
    first, second, third = (tmp_path / name for name in ("one", "two", "three"))
    for folder in (first, second, third):
        folder.mkdir()
    (third / f"{PACKAGE}.py").write_text("VALUE = 'in the working folder'\n")

    def move_to(folder: Path) -> None:
        monkeypatch.chdir(folder)
        monkeypatch.setattr(sys, "path", [str(folder), *[entry for entry in sys.path if entry not in
                                                         (str(first), str(second), str(third))]])

    move_to(first)
    run(cache)
    move_to(second)
    assert type(run(cache)[1].__spec__.loader) is BundledLoader
    move_to(third)
    module_bundle.enable(str(cache))
    try:
        package = importlib.import_module(PACKAGE)
        assert package.VALUE == "in the working folder" and type(package.__spec__.loader) is not BundledLoader
    finally:
        module_bundle.disable()
        forget()
