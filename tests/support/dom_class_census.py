"""What Textual's class set-up gave every DOMNode subclass Textual and Wolli define, as JSON.

Run as a script in a fresh interpreter: ``python -m tests.support.dom_class_census textual OUT``
uses Textual's own ``DOMNode.__init_subclass__``, ``... kept OUT`` the one
``wolli/modes/tui/dom_class_setup.py`` installs; the JSON goes to the file OUT. Both import the same modules in the same
order, so the two outputs must be equal (tests/unit/test_dom_class_setup.py).
"""

from __future__ import annotations

import importlib
import json
import pkgutil
import sys
from types import ModuleType
from typing import Any

import wolli.modes.tui  # installs the kept set-up (before any widget class is defined)
from wolli.modes.tui import dom_class_setup

# Scripts, not modules: textual._sleep times sleeps for a second when imported.
NOT_IMPORTED = ("textual._sleep",)


def import_all(package: ModuleType, skipped: list[str]) -> None:
    for info in pkgutil.walk_packages(package.__path__, package.__name__ + ".", onerror=skipped.append):
        if info.name.endswith("__main__") or info.name in NOT_IMPORTED:
            continue
        try:
            importlib.import_module(info.name)
        except Exception:  # a platform's driver, an optional dependency: skipped both ways
            skipped.append(info.name)


def all_subclasses(root: type) -> list[type]:
    found: dict[type, None] = {}
    todo = [root]
    while todo:
        for sub in todo.pop(0).__subclasses__():
            if sub not in found:
                found[sub] = None
                todo.append(sub)
    return list(found)


def name_of(cls: type) -> str:
    return f"{cls.__module__}.{cls.__qualname__}"


def describe(cls: Any) -> dict[str, Any]:
    own = cls.__dict__
    reactives = own["_reactives"]
    return {
        "reactives": [  # in order; each named by the bases whose __dict__ holds that very object
            [name, [name_of(base) for base in cls.__mro__ if base.__dict__.get(name) is value]]
            for name, value in reactives.items()
        ],
        "computes": sorted(own["_computes"]),
        "css_type_name": own["_css_type_name"],
        "css_type_names": sorted(own["_css_type_names"]),
        "inherit": [own["_inherit_css"], own["_inherit_bindings"], own["_inherit_component_classes"]],
        "bindings": [
            [key, [repr(binding) for binding in bindings]]
            for key, bindings in own["_merged_bindings"].key_to_bindings.items()
        ],
        "dict_names": list(own),
    }


def census(mode: str) -> dict[str, Any]:
    if mode == "textual":
        dom_class_setup.uninstall()
    elif not dom_class_setup.installed():
        raise SystemExit("the kept set-up is not installed for this Textual")
    import textual
    from textual.dom import DOMNode

    defined_before = len(all_subclasses(DOMNode))
    skipped: list[str] = []
    import_all(textual, skipped)
    import_all(wolli.modes, skipped)
    classes: dict[str, Any] = {}
    lists: list[int] = []
    for cls in all_subclasses(DOMNode):
        key = name_of(cls)
        while key in classes:
            key += "'"
        classes[key] = describe(cls)
        lists += [id(bindings) for bindings in cls.__dict__["_merged_bindings"].key_to_bindings.values()]
    return {
        "mode": mode,
        "defined_before": defined_before,
        "skipped": sorted(skipped),
        "shared_binding_lists": len(lists) - len(set(lists)),
        "classes": classes,
    }


if __name__ == "__main__":
    with open(sys.argv[2], "w", encoding="utf-8") as out:
        json.dump(census(sys.argv[1]), out)
