"""The package's layering, enforced: lower layers never import higher ones, and no function
imports one of the package's own modules (a local import that dodges a cycle hides it).

Layers, lowest first: the error family and the shared cursor; the layout core; the notations
(XLA, CuTe/TLA, Triton linear layouts), none of which reads another; the one dispatch from
every notation into the core (``lowering``, with the Triton↔CuTe bridge it uses); indexing
maps; HLO analysis and the GPU atoms; the bridges between notations (convert, relayout,
padding advice, the JAX bridge); pictures, which read layouts through the core and never
relayout; the command line.

The dispatch is written once: only ``lowering`` (and a notation's own package) calls a
notation's lowering, and no other function matches on the types of two notations, except
the listed ones that show each notation's own facts and lower nothing.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parents[1] / "src" / "tensorlayout"

LAYERS = {
    "errors": 0, "_cursor": 0, "_lazy": 0, "__init__": 0, "__main__": 7,
    "core": 1,
    "xla": 2, "cute": 2, "triton": 2,
    "lowering": 2.5,
    "indexing": 3,
    "hlo": 4, "gpu": 4, "tiling": 4,
    "convert": 5, "relayout": 5, "jax": 5, "design": 5,
    "render": 6,
    "cli": 7, "explore": 7,
}
#: Modules that sit above their package's layer (they bridge into a higher one).
MODULE_LAYERS: dict[str, float] = {
    "indexing.layouts": 3,
    "triton.bridge": 2.5,  # Triton <-> CuTe/XLA, where the notations meet (the dispatch uses it)
}
#: The notations: none imports another (element types and integer math live in the core).
NOTATIONS = ("xla", "cute", "triton")


def _layer(module: str) -> float:
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


# ---------------------------------------------------------------- notations, pictures, the dispatch

#: Render modules that still import relayout (they are the pictures' own, to be moved off it:
#: ``_kinds`` registers PhysicalTarget for display, ``_coords`` builds explicit-offset targets).
RENDER_READS_RELAYOUT: set[str] = set()


def _imports_of(module: str, path: Path) -> list[tuple[str, int]]:
    return [(name.removeprefix("tensorlayout").lstrip(".") or "__init__", node.lineno)  # type: ignore[attr-defined]
            for name, node in _own_imports(ast.parse(path.read_text()))]


@pytest.mark.parametrize("module, path", _modules(), ids=lambda x: str(x) if isinstance(x, str) else "")
def test_notations_do_not_read_each_other_and_render_not_relayout(module: str, path: Path) -> None:
    top = module.split(".")[0]
    for target, line in _imports_of(module, path):
        other = target.split(".")[0]
        if top in NOTATIONS and _layer(module) == 2:
            assert other == top or other not in NOTATIONS, (
                f"{module} (a notation) imports {target} (another notation), line {line}: share it "
                "through the core, or convert in a bridge above both")
        if top == "render" and module not in RENDER_READS_RELAYOUT:
            assert other != "relayout", f"{module} imports {target} (line {line}): pictures read the core"


#: A notation's own lowering; outside its package only the dispatch calls it.
LOWERING_NAMES = {"lower_shape", "lower_layout"}
DISPATCH = "lowering"
#: Functions that match on the types of two notations and lower nothing: each shows a
#: notation's own facts or text (``show --as``, headers, TikZ per kind). Entries must match.
SHOWS_EACH_NOTATION = {
    ("cli._facts", "_own_facts"), ("cli._show_as", "converted"), ("cli._show_as", "_triton"),
    ("cli.show", "_header"), ("cli.show", "_text"), ("cli.show", "run"), ("render._tikz", "to_tikz"),
    # the Triton package is imported by the dispatch, so its bridge cannot call it back:
    ("triton.bridge", "shared_layout"),
}
FAMILIES = (*NOTATIONS, "core")


def _families(expr: ast.AST, names: dict[str, str]) -> set[str]:
    """The notations whose classes ``expr`` (isinstance's second argument) names."""
    out = set()
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and n.id[:1].isupper() and names.get(n.id) in FAMILIES:
            out.add(names[n.id])
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.attr[:1].isupper() \
                and names.get(n.value.id) in FAMILIES:
            out.add(names[n.value.id])
    return out


def _imported_names(tree: ast.AST) -> dict[str, str]:
    """Each name a module imports from the package, with the top package it comes from."""
    out = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("tensorlayout"):
            parts = node.module.split(".")
            for a in node.names:
                out[a.asname or a.name] = parts[1] if len(parts) > 1 else a.name
    return out


def notation_matches(tree: ast.AST, own: str) -> list[tuple[str, int, set[str]]]:
    """Functions that test a value against the classes of two or more notations (the core
    counts as one; a notation's own classes do not count inside its package)."""
    names = _imported_names(tree)
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fams: set[str] = set()
            for call in ast.walk(fn):
                if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) \
                        and call.func.id in ("isinstance", "issubclass") and len(call.args) == 2:
                    fams |= _families(call.args[1], names)
            fams.discard(own)
            if len(fams) >= 2:
                found.append((fn.name, fn.lineno, fams))
    return found


def test_the_notation_dispatch_is_written_once() -> None:
    matches, lowerings = [], []
    for module, path in _modules():
        if module == DISPATCH:
            continue
        tree = ast.parse(path.read_text())
        top = module.split(".")[0]
        matches += [(module, fn, line, fams) for fn, line, fams in notation_matches(tree, top)
                    if (module, fn) not in SHOWS_EACH_NOTATION]
        if top not in NOTATIONS:
            lowerings += [(module, a.name, node.lineno) for node in ast.walk(tree)
                          if isinstance(node, ast.ImportFrom) for a in node.names if a.name in LOWERING_NAMES]
    assert not matches, f"functions that dispatch on notation types outside {DISPATCH}.lower: {matches}"
    assert not lowerings, f"modules that lower a notation themselves instead of calling lower(): {lowerings}"
    listed = {(m, fn) for m, p in _modules() for fn, _, _ in notation_matches(ast.parse(p.read_text()),
                                                                              m.split(".")[0])}
    assert listed >= SHOWS_EACH_NOTATION, f"stale entries: {SHOWS_EACH_NOTATION - listed}"


def test_the_dispatch_check_finds_a_copy() -> None:
    copy = ast.parse("from tensorlayout.xla import Shape\nfrom tensorlayout.cute import Layout\n"
                     "def core(x):\n"
                     "    return 1 if isinstance(x, Shape) else 2 if isinstance(x, Layout) else 3\n")
    assert notation_matches(copy, "render") == [("core", 3, {"xla", "cute"})]
    single = ast.parse("from tensorlayout.cute import Layout\ndef f(x):\n    return isinstance(x, Layout)\n")
    assert notation_matches(single, "render") == []
