"""The layering of docs/architecture.md §1, checked mechanically over every import in ``wolli/``.

A module imports only from its own folder and the folders listed below it. Lazy imports
inside functions and ``TYPE_CHECKING`` imports count too: a cycle hidden in a function is
still a cycle. Inside one folder, module-level imports must not form a cycle either.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "wolli"

# Top to bottom (docs/architecture.md §1). ``cli``/``__main__`` sit above everything; ``wolli/__init__``
# is the public facade and may name anything (lazily).
LAYERS = ["cli", "modes", "runtime", "mcp", "extensions", "packages", "permissions", "session", "tools", "agent", "ai", "config", "base"]
TOP = {"cli", "__main__", "testing", "rpc_client"}
EXEMPT = {"__init__", "__about__"}


def _layer_of(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "wolli" or len(parts) < 2:
        return None
    return parts[1]


def _rank(layer: str) -> int:
    return 0 if layer in TOP else LAYERS.index(layer)


def _module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _resolve(current: str, is_package: bool, node: ast.ImportFrom) -> list[str]:
    if node.level == 0:
        base = node.module or ""
    else:
        pkg = current.split(".") if is_package else current.split(".")[:-1]
        pkg = pkg[: len(pkg) - (node.level - 1)]
        base = ".".join(pkg + ([node.module] if node.module else []))
    if node.module is None:  # ``from . import x``: each name is a module
        return [f"{base}.{alias.name}" for alias in node.names]
    return [base]


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(imported module, line, at module level) for every import in ``path``."""
    tree = ast.parse(path.read_text("utf-8"))
    current = _module_name(path)
    is_package = path.name == "__init__.py"
    top_level = set()
    for node in tree.body:
        top_level.add(id(node))
        if isinstance(node, ast.If | ast.Try):  # ``if TYPE_CHECKING`` / try-import at module level
            for child in ast.walk(node):
                top_level.add(id(child))
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out += [(alias.name, node.lineno, id(node) in top_level) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            out += [(name, node.lineno, id(node) in top_level) for name in _resolve(current, is_package, node)]
    return [(name, line, top) for name, line, top in out if name.startswith("wolli")]


def _sources() -> list[Path]:
    return sorted(PACKAGE.rglob("*.py"))


def layer_violations() -> list[str]:
    problems = []
    for path in _sources():
        module = _module_name(path)
        layer = _layer_of(module) or "__init__"
        if layer in EXEMPT:
            continue
        for target, line, _ in _imports(path):
            target_layer = _layer_of(target)
            if target_layer is None or target_layer == layer or target_layer in EXEMPT:
                continue
            if target_layer not in LAYERS and target_layer not in TOP:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line}: unknown layer {target_layer}")
            elif _rank(target_layer) < _rank(layer):
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {layer} imports {target} (upwards)")
    return problems


def import_cycles() -> list[list[str]]:
    """Cycles among wolli's modules, counting every import (lazy ones too)."""
    graph: dict[str, set[str]] = {}
    for path in _sources():
        module = _module_name(path)
        edges = graph.setdefault(module, set())
        for target, _, _ in _imports(path):
            # ``from wolli.x import name`` may name a module or an attribute: keep the module.
            while target and target not in {_module_name(p) for p in _sources()}:
                target = target.rpartition(".")[0]
            if target and target != module and not _is_package_of(target, module):
                edges.add(target)
    cycles: list[list[str]] = []
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(node: str) -> None:
        state[node] = 1
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            if state.get(nxt) == 1:
                cycles.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt)
        stack.pop()
        state[node] = 2

    for node in sorted(graph):
        if node not in state:
            visit(node)
    return cycles


# Inside the two largest layers, rooms are ranked too (top to bottom). A room imports from
# itself and the rooms ranked below it; rooms of one rank do not import each other (the
# clients of modes/ never reach into one another). docs/architecture.md explains each room.
ROOMS: dict[str, list[set[str]]] = {
    "modes": [{"server"}, {"tui", "line", "rpc", "headless", "acp"}, {"interactive"}, {"common"}],
    "runtime": [{"startup"}, {"host"}, {"subagents"}, {"live"}, {"safety"}, {"handlers"}, {"resources"},
                {"events", "event_records"}],
}


def _room_of(module: str) -> tuple[str, str] | None:
    parts = module.split(".")
    if len(parts) < 3 or parts[1] not in ROOMS:
        return None
    return parts[1], parts[2]


def room_violations() -> list[str]:
    problems = []
    for path in _sources():
        here = _room_of(_module_name(path))
        if here is None:
            continue
        layer, room = here
        ranks = ROOMS[layer]
        rank = next((i for i, rooms in enumerate(ranks) if room in rooms), None)
        if rank is None:
            problems.append(f"{path.relative_to(PACKAGE.parent)}: {layer}/{room} is not a known room")
            continue
        for target, line, _ in _imports(path):
            there = _room_of(target)
            if there is None or there[0] != layer or there[1] == room:
                continue
            target_rank = next((i for i, rooms in enumerate(ranks) if there[1] in rooms), None)
            if target_rank is None or target_rank <= rank:
                problems.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {layer}/{room} imports {target}")
    return problems


def _is_package_of(package: str, module: str) -> bool:
    return module.startswith(package + ".")


def test_imports_point_down_the_layers() -> None:
    assert layer_violations() == []


def test_rooms_of_modes_and_runtime_point_down() -> None:
    assert room_violations() == []


def test_no_import_cycles() -> None:
    # The package facade ``wolli`` (lazy re-exports) is a node too; a real cycle runs through
    # two modules that each import the other.
    cycles = [c for c in import_cycles() if "wolli" not in c]
    assert cycles == []


def test_the_checks_can_fail(tmp_path: Path) -> None:
    """An upward import and a cycle written into a scratch copy are both found."""
    global PACKAGE
    scratch = tmp_path / "wolli"
    for folder in ("agent", "runtime"):
        (scratch / folder).mkdir(parents=True)
        (scratch / folder / "__init__.py").write_text("")
    (scratch / "__init__.py").write_text("")
    (scratch / "agent" / "loop.py").write_text("def f():\n    from ..runtime import host\n")
    (scratch / "runtime" / "host.py").write_text("from . import session\n")
    (scratch / "runtime" / "session.py").write_text("from .host import X\n")
    saved = PACKAGE
    PACKAGE = scratch
    try:
        assert any("agent imports wolli.runtime" in p for p in layer_violations())
        assert any(set(c) >= {"wolli.runtime.host", "wolli.runtime.session"} for c in import_cycles())
        (scratch / "runtime" / "stray.py").write_text("")  # a loose file, in no room
        assert any("runtime/stray is not a known room" in p for p in room_violations())
        (scratch / "modes" / "tui").mkdir(parents=True)
        (scratch / "modes" / "line").mkdir(parents=True)
        (scratch / "modes" / "tui" / "app.py").write_text("from ..line import repl\n")
        (scratch / "modes" / "line" / "repl.py").write_text("")
        assert any("modes/tui imports wolli.modes.line" in p for p in room_violations())
    finally:
        PACKAGE = saved


if __name__ == "__main__":  # pragma: no cover - a quick report while restructuring
    for problem in layer_violations():
        print(problem)
    for cycle in import_cycles():
        print(" -> ".join(cycle))
    pytest.main([__file__, "-q"])
