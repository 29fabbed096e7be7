"""``wolli/tools`` has no import cycles, counting imports inside functions too."""

from __future__ import annotations

import ast
from pathlib import Path

import wolli.tools

TOOLS = Path(wolli.tools.__file__).parent


def internal_imports(path: Path) -> set[str]:
    """Modules of ``wolli.tools`` that ``path`` imports anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            module = node.module or ""
            if node.level == 1:  # from .x import y / from . import x
                names = [module] if module else [alias.name for alias in node.names]
            elif module.startswith("wolli.tools."):
                names = [module.removeprefix("wolli.tools.")]
            elif module == "wolli.tools":
                names = [alias.name for alias in node.names]
            else:
                continue
            found.update(name.split(".")[0] for name in names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("wolli.tools."):
                    found.add(alias.name.removeprefix("wolli.tools.").split(".")[0])
    return found


def graph() -> dict[str, set[str]]:
    modules = {path.stem: path for path in TOOLS.glob("*.py")}
    return {name: internal_imports(path) & modules.keys() - {name} for name, path in modules.items()}


def find_cycle(edges: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    path: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        path.append(node)
        for target in sorted(edges[node]):
            if state.get(target) == 1:
                return path[path.index(target):] + [target]
            if target not in state and (cycle := visit(target)):
                return cycle
        path.pop()
        state[node] = 2
        return None

    for node in sorted(edges):
        if node not in state and (cycle := visit(node)):
            return cycle
    return None


def test_no_import_cycle_in_tools():
    edges = graph()
    assert "process" in edges["environment"]  # the check sees what it should
    assert find_cycle(edges) is None, " -> ".join(find_cycle(edges) or [])


def test_the_checker_finds_a_cycle():
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]


def test_process_machinery_knows_nothing_of_environment():
    edges = graph()
    for low in ("process", "proctree", "supervisor", "shell"):
        assert "environment" not in edges[low], low
    assert edges["proctree"] == set()  # runs as a standalone script for the watchdog
