"""The package's layering, enforced: lower layers never import higher ones, and no function
imports one of the package's own modules (a local import that dodges a cycle hides it).

Layers, lowest first: the error family and the shared cursor; the layout core; the notations
(XLA, CuTe/TLA, Triton linear layouts), none of which reads another; the one dispatch from
every notation into the core (``lowering``, with the Triton↔CuTe bridge it uses); indexing
maps; HLO analysis and the GPU atoms; the bridges between notations (convert, relayout,
padding advice, the JAX bridge); pictures, which read layouts through the core and never
relayout; the command line.

The dispatch is written once: only ``lowering`` (and a notation's own package) calls a
notation's lowering, and no other function matches on the types of two notations (by
``isinstance``, ``type(x) is``, ``match``, a table keyed on the types, or their names);
consumers that show each notation's own facts key their tables on
``lowering.notation_of``.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tensorlayout import lowering

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
    "triton.bridge": 2.5,  # Triton <-> CuTe/XLA: it lowers through lower(), which loads its element_layout
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
FAMILIES = (*NOTATIONS, "core")


def _is_class_name(name: str) -> bool:
    """CapWords (``Shape``, ``MMAAtom``), not a CONSTANT."""
    return name[:1].isupper() and not name.isupper()


def _families(expr: ast.AST, names: dict[str, str]) -> set[str]:
    """The notations whose classes ``expr`` (a class test's class) names."""
    out = set()
    for n in ast.walk(expr):
        if isinstance(n, ast.Name) and _is_class_name(n.id) and names.get(n.id) in FAMILIES:
            out.add(names[n.id])
        elif isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and _is_class_name(n.attr) \
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


#: The class names of the notations, as the dispatch's table knows them.
NOTATION_CLASSES = frozenset(t.__name__ for t in lowering.LOWERINGS if t is not str)


def _class_tests(fn: ast.AST) -> list[ast.AST]:
    """What ``fn`` tests values against: ``isinstance``/``issubclass``'s classes, the classes
    compared with ``is``/``==``/``in`` (``type(x) is Shape``), ``match`` class patterns, and
    the keys of dict displays (``{Shape: ..., Layout: ...}[type(x)]``)."""
    found: list[ast.AST] = []
    for node in ast.walk(fn):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) \
                and node.func.id in ("isinstance", "issubclass") and len(node.args) == 2:
            found.append(node.args[1])
        elif isinstance(node, ast.Compare):
            found += [n for n in (node.left, *node.comparators) if not isinstance(n, ast.Call)]
        elif isinstance(node, ast.MatchClass):
            found.append(node.cls)
        elif isinstance(node, ast.Dict):
            found += [k for k in node.keys if k is not None and not isinstance(k, ast.Call)]
    return found


def _named_families(fn: ast.AST) -> set[str]:
    """The notations whose class names ``fn`` compares a ``__name__``/``__qualname__`` with."""
    out = set()
    for node in ast.walk(fn):
        if isinstance(node, ast.Compare) and any(isinstance(n, ast.Attribute) and n.attr in
                                                 ("__name__", "__qualname__")
                                                 for n in (node.left, *node.comparators)):
            out |= {f"name {n.value}" for n in ast.walk(node)
                    if isinstance(n, ast.Constant) and n.value in NOTATION_CLASSES}
    return out


def notation_matches(tree: ast.AST, own: str) -> list[tuple[str, int, set[str]]]:
    """Functions that test a value against the classes of two or more notations (the core
    counts as one; a notation's own classes do not count inside its package)."""
    names = _imported_names(tree)
    found = []
    for fn in ast.walk(tree):
        if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            fams = {f for test in _class_tests(fn) for f in _families(test, names)} | _named_families(fn)
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
        matches += [(module, fn, line, fams) for fn, line, fams in notation_matches(tree, top)]
        if top not in NOTATIONS:
            lowerings += [(module, a.name, node.lineno) for node in ast.walk(tree)
                          if isinstance(node, ast.ImportFrom) for a in node.names if a.name in LOWERING_NAMES]
    assert not matches, (f"functions that dispatch on notation types outside {DISPATCH}.lower (key a "
                         f"table on {DISPATCH}.notation_of instead): {matches}")
    assert not lowerings, f"modules that lower a notation themselves instead of calling lower(): {lowerings}"


_HEAD = "from tensorlayout.xla import Shape\nfrom tensorlayout.cute import Layout\n"


@pytest.mark.parametrize("copy", [
    "def core(x):\n    return 1 if isinstance(x, Shape) else 2 if isinstance(x, Layout) else 3\n",
    "def core(x):\n    return 1 if type(x) is Shape else 2 if type(x) in (Layout,) else 3\n",
    "def core(x):\n    match x:\n        case Shape():\n            return 1\n        case Layout():\n"
    "            return 2\n",
    "def core(x):\n    return {Shape: 1, Layout: 2}[type(x)]\n",
], ids=["isinstance", "type-is", "match", "type-table"])
def test_the_dispatch_check_finds_a_copy(copy: str) -> None:
    assert notation_matches(ast.parse(_HEAD + copy), "render") == [("core", 3, {"xla", "cute"})]


def test_the_dispatch_check_finds_a_copy_by_class_name() -> None:
    copy = ast.parse("def core(x):\n    return 1 if type(x).__name__ == 'Shape' else "
                     "2 if type(x).__qualname__ in ('Layout', 'TlaLayout') else 3\n")
    assert notation_matches(copy, "render") == [("core", 1, {"name Shape", "name Layout", "name TlaLayout"})]


def test_the_dispatch_check_passes_one_notation_and_its_values() -> None:
    single = ast.parse(_HEAD + "def f(x):\n    return isinstance(x, Layout) and x == Layout(4, 1) "
                       "and Shape.parse('f32[4]{0}') == x\n")
    assert notation_matches(single, "render") == []


# ---------------------------------------------------------------- lazy loading hides no cycle

def _runtime_imports(path: Path) -> set[str]:
    """The package's own modules ``path`` imports when it runs (module level, not under
    ``if TYPE_CHECKING``), as dotted names without the ``tensorlayout.`` prefix."""
    tree = ast.parse(path.read_text())
    stack: list[ast.stmt] = list(tree.body)
    out: set[str] = set()
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack += node.orelse
        elif isinstance(node, (ast.If, ast.Try)):
            stack += [*node.body, *node.orelse, *getattr(node, "finalbody", []),
                      *[s for h in getattr(node, "handlers", []) for s in h.body]]
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {name.removeprefix("tensorlayout").lstrip(".") or "__init__"
                    for name, _ in _own_imports(node)}
    return out


def _lazy_targets(path: Path) -> set[str]:
    """The modules ``path`` loads on first use: the dotted ``tensorlayout.*`` strings of its
    ``lazy_modules``/``lazy_names`` tables."""
    text = path.read_text()
    if "lazy_modules(" not in text and "lazy_names(" not in text:
        return set()
    return {node.value.removeprefix("tensorlayout.") for node in ast.walk(ast.parse(text))
            if isinstance(node, ast.Constant) and isinstance(node.value, str)
            and node.value.startswith("tensorlayout.") and _is_module(node.value.split(".", 1)[1]
                                                                       .replace(".", "/"))}


def _reaches(start: str, goal: str, graph: dict[str, set[str]]) -> list[str] | None:
    """A chain of run-time imports from ``start`` to ``goal``, if there is one."""
    seen, stack = {start}, [[start]]
    while stack:
        chain = stack.pop()
        for nxt in graph.get(chain[-1], set()):
            if nxt == goal:
                return [*chain, nxt]
            if nxt not in seen:
                seen.add(nxt)
                stack.append([*chain, nxt])
    return None


def test_a_module_loaded_lazily_does_not_import_its_loader() -> None:
    """A module that loads another on first use (to keep start-up short) must sit above it:
    the loaded module never imports its loader back at run time, or the laziness hides a cycle.
    (Packages' ``__init__`` tables, which only re-export their submodules, are exempt.)"""
    modules = dict(_modules())
    graph = {name: _runtime_imports(path) for name, path in modules.items()}
    found = []
    for loader, path in modules.items():
        if path.name == "__init__.py":
            continue
        for target in _lazy_targets(path):
            chain = _reaches(target, loader, graph)
            if chain:
                found.append(" -> ".join(chain))
    assert not found, "lazily loaded modules import their loader back:\n" + "\n".join(found)


def test_the_cycle_check_finds_a_hidden_cycle(tmp_path: Path) -> None:
    loader = tmp_path / "a.py"
    loader.write_text("from tensorlayout._lazy import lazy_modules\n"
                      "_lazy = lazy_modules({'ops': 'tensorlayout.xla.shape_ops'})\n")
    assert "xla.shape_ops" in _lazy_targets(loader)
    back = tmp_path / "b.py"
    back.write_text("from typing import TYPE_CHECKING\nfrom tensorlayout.xla.shape import Shape\n"
                    "if TYPE_CHECKING:\n    from tensorlayout.cli import show\n")
    assert _runtime_imports(back) == {"xla.shape"}
    assert _reaches("b", "xla.shape", {"b": {"c"}, "c": {"xla.shape"}}) == ["b", "c", "xla.shape"]
