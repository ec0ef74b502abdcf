"""The indexing package's structure: no import cycles, no hidden imports, frozen values, short functions."""

from __future__ import annotations

import ast
from pathlib import Path

import tensorlayout.indexing

PACKAGE = Path(tensorlayout.indexing.__file__).parent
MODULES = {p.stem: ast.parse(p.read_text()) for p in sorted(PACKAGE.glob("*.py"))}


def _own_imports(tree: ast.AST) -> set[str]:
    """The indexing modules a module imports at top level."""
    out: set[str] = set()
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.ImportFrom) and node.module:
            if node.module.startswith("tensorlayout.indexing."):
                out.add(node.module.rsplit(".", 1)[1])
            elif node.module == "tensorlayout.indexing":
                out.update(a.name for a in node.names if a.name in MODULES)
    return out


def test_no_function_local_imports_of_the_package() -> None:
    for name, tree in MODULES.items():
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tensorlayout"):
                        raise AssertionError(f"{name}.{fn.name} imports {node.module} inside a function")


def test_modules_import_each_other_without_cycles() -> None:
    graph = {name: _own_imports(tree) - {name} for name, tree in MODULES.items() if name != "__init__"}
    state: dict[str, int] = {}

    def visit(n: str, path: list[str]) -> None:
        if state.get(n) == 2:
            return
        assert state.get(n) != 1, "import cycle: " + " -> ".join([*path, n])
        state[n] = 1
        for m in graph.get(n, ()):
            visit(m, [*path, n])
        state[n] = 2

    for n in graph:
        visit(n, [])


def test_values_are_not_patched_after_construction() -> None:
    for name, tree in MODULES.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "__setattr__":
                raise AssertionError(f"{name} uses __setattr__ (line {node.lineno})")


def test_no_function_over_60_lines() -> None:
    long = [f"{name}.{fn.name} ({fn.end_lineno - fn.lineno + 1} lines)"  # type: ignore[operator]
            for name, tree in MODULES.items() for fn in ast.walk(tree)
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef))
            and fn.end_lineno - fn.lineno + 1 > 60]  # type: ignore[operator]
    assert not long
