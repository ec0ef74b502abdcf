"""The package's layering, enforced: lower layers never import higher ones, and no function
imports one of the package's own modules (a local import that dodges a cycle hides it).

Layers, lowest first: the error family and the shared cursor; the layout core; the notations
(XLA, CuTe/TLA, Triton linear layouts); indexing maps; HLO analysis and the GPU atoms; the
bridges between notations (convert, relayout, padding advice, the JAX bridge); pictures; the
command line.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tensorlayout"

LAYERS = {
    "errors": 0, "_cursor": 0, "__init__": 0, "__main__": 7,
    "core": 1,
    "xla": 2, "cute": 2, "triton": 2,
    "indexing": 3,
    "hlo": 4, "gpu": 4, "tiling": 4,
    "convert": 5, "relayout": 5, "jax": 5, "design": 5,
    "render": 6,
    "cli": 7, "explore": 7,
}
#: Modules that sit above their package's layer (they bridge into a higher one).
MODULE_LAYERS = {
    "indexing.layouts": 3,
}


def _layer(module: str) -> int:
    """The layer of ``tensorlayout.<module>`` (``module`` dotted, without the prefix)."""
    for prefix in sorted(MODULE_LAYERS, key=len, reverse=True):
        if module == prefix or module.startswith(prefix + "."):
            return MODULE_LAYERS[prefix]
    top = module.split(".")[0]
    if top not in LAYERS:
        raise AssertionError(f"tensorlayout.{top} has no layer: add it to LAYERS in {__file__}")
    return LAYERS[top]


def _modules() -> list[tuple[str, Path]]:
    out = []
    for path in sorted(SRC.rglob("*.py")):
        rel = path.relative_to(SRC).with_suffix("")
        parts = [p for p in rel.parts if p != "__init__"] or ["__init__"]
        out.append((".".join(parts), path))
    return out


def _is_module(name: str) -> bool:
    return (SRC / name).is_dir() or (SRC / f"{name}.py").exists()


def _own_imports(tree: ast.AST) -> list[tuple[str, ast.AST]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tensorlayout"):
            names = [node.module] if node.module != "tensorlayout" else \
                [f"tensorlayout.{a.name}" if _is_module(a.name) else "tensorlayout" for a in node.names]
            found += [(n, node) for n in names]
        elif isinstance(node, ast.Import):
            found += [(a.name, node) for a in node.names if a.name.startswith("tensorlayout")]
    return found


def _module_level(tree: ast.Module) -> set[int]:
    """ids of import nodes at module level (also under ``if``/``try`` there)."""
    out: set[int] = set()
    stack: list[ast.stmt] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out.add(id(node))
        elif isinstance(node, (ast.If, ast.Try)):
            stack += [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                      *[s for h in getattr(node, "handlers", []) for s in h.body]]
    return out


@pytest.mark.parametrize("module, path", _modules(), ids=lambda x: str(x) if isinstance(x, str) else "")
def test_imports_go_down_and_stay_at_module_level(module: str, path: Path) -> None:
    tree = ast.parse(path.read_text())
    top = _module_level(tree)
    own = _layer(module)
    for name, node in _own_imports(tree):
        target = name.removeprefix("tensorlayout").lstrip(".") or "__init__"
        assert id(node) in top, f"{module}: function-local import of {name} (line {node.lineno})"
        if module.split(".")[0] == target.split(".")[0] or module == "__init__":
            continue  # within a package, order is the package's own business
        assert _layer(target) <= own, (f"{module} (layer {own}) imports {name} "
                                       f"(layer {_layer(target)}), a higher layer")
