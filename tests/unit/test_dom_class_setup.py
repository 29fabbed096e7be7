"""The kept set-up of widget classes (wolli/modes/tui/dom_class_setup.py) gives every class what
Textual's own ``DOMNode.__init_subclass__`` gives it, and only runs on a verified Textual."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from textual.app import App
from textual.binding import Binding, BindingsMap
from textual.dom import DOMNode
from textual.reactive import reactive, var
from textual.widget import Widget

from tests.support.dom_class_census import describe
from wolli.modes.tui import dom_class_setup

REPO = Path(__file__).resolve().parents[2]


def census(mode: str, out: Path) -> dict[str, Any]:
    subprocess.run(
        [sys.executable, "-m", "tests.support.dom_class_census", mode, str(out)],
        cwd=REPO, check=True, capture_output=True, timeout=120,
    )
    return json.loads(out.read_text(encoding="utf-8"))


def test_every_widget_class_of_textual_and_wolli_is_set_up_as_textual_sets_it_up(tmp_path: Path):
    textual_own = census("textual", tmp_path / "textual.json")
    kept = census("kept", tmp_path / "kept.json")
    assert (textual_own.pop("mode"), kept.pop("mode")) == ("textual", "kept")
    classes = kept["classes"]
    # the whole of both: reactives in order (and which object each is), computes, CSS type
    # names, inherit flags, merged bindings key by key, each class's __dict__ names in order
    assert kept == textual_own
    assert len(classes) > 150 and kept["defined_before"] == 0  # installed before any was made
    assert {"textual.widgets._text_area.TextArea", "textual.app.App", "wolli.modes.tui.app.WolliApp"} <= set(classes)
    assert any(entry["computes"] for entry in classes.values())
    assert any(not all(entry["inherit"]) for entry in classes.values())
    assert kept["shared_binding_lists"] == 0  # each class's bindings lists are its own


@contextmanager
def textual_own_setup() -> Iterator[None]:
    dom_class_setup.uninstall()
    try:
        yield
    finally:
        assert dom_class_setup.install()


def both_ways(scenario: Callable[[], dict[str, Any]]) -> tuple[dict[str, Any], dict[str, Any]]:
    assert dom_class_setup.installed()
    kept = scenario()
    with textual_own_setup():
        textual_own = scenario()
    return kept, textual_own


def make_compute(value: Any) -> Callable[[Any], Any]:
    def compute(self: Any) -> Any:
        return value

    return compute


def new_reactive(owner: type, name: str, default: Any) -> reactive[Any]:
    made: reactive[Any] = reactive(default)
    made.__set_name__(owner, name)  # what class creation does for a reactive in the class body
    return made


def bases_changed_after_their_subclasses_were_made() -> dict[str, Any]:
    class Mixin:
        mixed = reactive(1)

        def compute_mixed(self) -> int:
            return 2

    class Base(Widget):
        BINDINGS = [Binding("a", "one", "One"), ("b,c", "two", "Two")]
        count = reactive(0)
        hidden = reactive(0)

        def compute_count(self) -> int:
            return 1

        def _compute_hidden(self) -> int:
            return 1

    class Child(Mixin, Base):
        BINDINGS = (Binding("a", "three"),)
        extra = var("x")
        count = reactive(10)  # overrides Base's

    class Loner(Base, inherit_bindings=False, inherit_css=False):
        BINDINGS = [("d", "four")]

    class Swapped(Widget):
        plain = 1
        _default_plain = 1  # what a reactive "plain" sets: turning it reactive adds no name

    class SwappedChild(Swapped):
        pass

    made_before = [Base, Child, Loner, Swapped, SwappedChild]
    # Every base changes after its subclasses were made: a new reactive and a new compute, a
    # plain attribute turned reactive (same names, one object replaced), a compute and a
    # reactive removed, BINDINGS grown in place and replaced (a list and a tuple), a mixin
    # (not a DOMNode) grown, and a class's merged bindings list appended to (as
    # BindingsMap.bind does).
    Base.late = new_reactive(Base, "late", "late")  # type: ignore[attr-defined]
    Base.compute_late = make_compute("computed")  # type: ignore[attr-defined]
    Swapped.plain = new_reactive(Swapped, "plain", 5)  # type: ignore[assignment]
    del Base.compute_count
    del Child.extra
    Base.BINDINGS.append(Binding("e", "five"))
    Loner.BINDINGS = [("f", "six"), ("a", "seven")]
    Child.BINDINGS = (Binding("h", "nine"),)
    Mixin.compute_other = make_compute(3)  # type: ignore[attr-defined]
    Base._merged_bindings.key_to_bindings["a"].append(Binding("a", "intruder"))

    class After(Child):
        pass

    class AfterLoner(Loner):
        BINDINGS = [Binding("g", "eight", "Eight", priority=True)]

    class Lone(App[None], inherit_component_classes=False, inherit_css=False):
        pass

    class AfterSwap(Swapped):
        pass

    return {cls.__name__: describe(cls) for cls in [*made_before, After, AfterLoner, Lone, AfterSwap]}


def name_of_local(name: str) -> str:
    return f"{__name__}.{bases_changed_after_their_subclasses_were_made.__name__}.<locals>.{name}"


def test_a_base_changed_after_its_subclasses_were_made_is_read_again():
    kept, textual_own = both_ways(bases_changed_after_their_subclasses_were_made)
    assert kept == textual_own
    after = kept["After"]
    reactives = [name for name, _owners in after["reactives"]]
    assert "late" in reactives and "extra" not in reactives
    assert ["plain", [name_of_local("Swapped")]] in kept["AfterSwap"]["reactives"]
    assert "plain" not in [name for name, _owners in kept["SwappedChild"]["reactives"]]
    assert ["count", [name_of_local("Child")]] in after["reactives"]
    assert {"late", "other", "hidden"} <= set(after["computes"]) and "count" not in after["computes"]
    keys = [key for key, _bindings in after["bindings"]]
    assert "e" in keys and "h" in keys and not any("intruder" in text for _key, texts in after["bindings"] for text in texts)
    assert [key for key, _bindings in kept["AfterLoner"]["bindings"]] == ["f", "a", "g"]
    assert kept["Lone"]["inherit"] == [False, True, False]


def classes_textual_sets_up_its_own_way() -> dict[str, Any]:
    class OwnMerge(Widget):
        BINDINGS = [("x", "ex")]

        @classmethod
        def _merge_bindings(cls) -> BindingsMap:
            return BindingsMap([("z", "zed")])

    class UnderOwnMerge(OwnMerge):
        pass

    class ListingMeta(type(Widget)):  # type: ignore[misc]
        def __dir__(cls) -> list[str]:
            return [*type.__dir__(cls), "compute_listed"]

    class Listed(Widget, metaclass=ListingMeta):
        pass

    return {cls.__name__: describe(cls) for cls in [OwnMerge, UnderOwnMerge, Listed]}


def test_an_overridden_merge_or_a_metaclass_of_its_own_gets_textual_s_set_up():
    kept, textual_own = both_ways(classes_textual_sets_up_its_own_way)
    assert kept == textual_own
    assert [key for key, _bindings in kept["UnderOwnMerge"]["bindings"]] == ["z"]
    assert kept["Listed"]["computes"] == ["listed"]


def test_each_class_has_its_own_bindings_lists():
    class Keys(Widget):
        BINDINGS = [("k", "kay")]

    class MoreKeys(Keys):
        pass

    first = Keys._merged_bindings.key_to_bindings["k"]
    second = MoreKeys._merged_bindings.key_to_bindings["k"]
    assert first == second and first is not second


def test_an_unverified_textual_keeps_its_own_set_up():
    textual_own = dom_class_setup._TEXTUAL_INIT_SUBCLASS
    with textual_own_setup():
        for version in ("9.0.0", "8.3.0", "7.5.0", "8.2.8rc1", ""):
            assert dom_class_setup.install(version) is False
            assert DOMNode.__dict__["__init_subclass__"] is textual_own and not dom_class_setup.installed()
        assert dom_class_setup.install("8.2.8") is True
        assert dom_class_setup.installed()
        dom_class_setup.uninstall()


def test_the_version_is_read_beside_the_package(tmp_path: Path):
    package = tmp_path / "textual"
    package.mkdir()
    assert dom_class_setup.installed_textual_version(str(package)) is None
    (tmp_path / "textual-9.0.0.dist-info").mkdir()
    assert dom_class_setup.installed_textual_version(str(package)) is None
    (tmp_path / "textual-8.2.3.dist-info").mkdir()
    assert dom_class_setup.installed_textual_version(str(package)) == "8.2.3"
    running = importlib.metadata.version("textual")
    expected = running if running in dom_class_setup.VERIFIED_TEXTUAL else None
    assert dom_class_setup.installed_textual_version() == expected


@pytest.mark.skipif(
    importlib.metadata.version("textual") not in dom_class_setup.VERIFIED_TEXTUAL,
    reason="this Textual is not one the kept set-up was verified against",
)
def test_the_tui_installs_it_for_the_textual_it_runs():
    assert dom_class_setup.installed()
