"""IndexingMap's methods are defined in class bodies (go-to-definition works), none installed at import.

Also: every operation returns the class of the map it was given, and the structure (base below the
operations, IndexingMap above them) keeps pickling, equality, hashing and the printed forms.
"""

from __future__ import annotations

import ast
import inspect
import pickle
from pathlib import Path

import pytest

import tensorlayout
import tensorlayout.indexing
from tensorlayout.errors import IndexingError
from tensorlayout.indexing import IndexingMap, compose, simplify
from tensorlayout.indexing.map_base import IndexingMapBase
from tensorlayout.indexing.parse import parse_indexing_map, parse_instruction_indexing

SOURCES = {p: ast.parse(p.read_text()) for p in sorted(Path(tensorlayout.__file__).parent.rglob("*.py"))}
MAP = "(d0, d1)[s0]{rt0} -> (d0 + s0 * 4, d1 mod 8 + rt0), domain: d0 in [0, 3], d1 in [0, 15], " \
      "s0 in [0, 1], rt0 in [0, 2], d0 + d1 in [0, 9]"


def _public_members() -> dict[str, object]:
    return {name: member for name, member in inspect.getmembers(IndexingMap)
            if not name.startswith("_") or name in ("__mul__", "__eq__", "__hash__", "__str__", "__repr__")}


def _function(member: object) -> object:
    """The function behind a method, classmethod or property."""
    if isinstance(member, property):
        return member.fget
    return getattr(member, "__func__", member)


def test_every_public_method_is_defined_in_a_class_body_of_the_package() -> None:
    base = Path(tensorlayout.__file__).parent
    checked = 0
    for name, member in _public_members().items():
        fn = _function(member)
        if not inspect.isfunction(fn):
            continue  # plain data (dataclass field descriptors and the like)
        owner = fn.__qualname__.split(".")[0]
        assert fn.__qualname__.count(".") == 1, f"{name} is {fn.__qualname__}, not a class-body method"
        assert owner in {c.__name__ for c in IndexingMap.__mro__}, f"{name} comes from {fn.__qualname__}"
        source = Path(inspect.getsourcefile(fn) or "")
        assert source.is_relative_to(base), f"{name} is defined in {source}"
        tree = SOURCES[source]
        classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == owner]
        assert classes, f"{name}: no class {owner} in {source.name}"
        defined = {n.name for n in classes[0].body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
        assert fn.__name__ in defined, f"{name} ({fn.__qualname__}) is not in the body of {owner}"
        checked += 1
    assert checked > 40  # the XLA method set: accessors, constructors, rewrites


def _assigns_onto_indexing_map(node: ast.AST) -> bool:
    targets = node.targets if isinstance(node, ast.Assign) else (
        [node.target] if isinstance(node, (ast.AugAssign, ast.AnnAssign)) else [])
    onto = any(isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name)
               and t.value.id in ("IndexingMap", "IndexingMapBase") for t in targets)
    patched = (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "setattr"
               and bool(node.args) and isinstance(node.args[0], ast.Name)
               and node.args[0].id in ("IndexingMap", "IndexingMapBase"))
    return onto or patched


def test_no_module_assigns_attributes_onto_indexing_map() -> None:
    found = [f"{p.name}:{n.lineno}" for p, tree in SOURCES.items() for n in ast.walk(tree)
             if _assigns_onto_indexing_map(n)]
    assert not found


def test_the_scan_finds_an_assignment_and_a_setattr() -> None:
    tree = ast.parse("IndexingMap.simplify = f\nsetattr(IndexingMapBase, 'parse', g)\n")
    assert sum(_assigns_onto_indexing_map(n) for n in ast.walk(tree)) == 2


def test_the_methods_need_no_installation() -> None:
    assert not hasattr(tensorlayout.indexing, "install_operations")
    m = IndexingMap.parse(MAP)
    assert type(m.simplify()) is IndexingMap and type(m.rescale_symbols()) is IndexingMap


def test_operations_return_the_class_they_were_given() -> None:
    m = IndexingMap.parse(MAP)
    results = [simplify(m), m.simplify("preserve", exact=True), m.remove_unused_symbols(),
               m.remove_unused_vars(), m.rescale_symbols(), m.convert_range_variables_to_dimensions([0]),
               m.convert_symbols_to_dimensions(), m.get_sub_map(1), m.clear_constraints(),
               m.add_constraint(m.dim(0), (0, 1)), m.with_names(["x"]), m.rename_dim_var(0, "y"),
               compose(IndexingMap.parse("(d0) -> (d0, d0)"), m), IndexingMap.undefined(),
               IndexingMap.known_empty(2), parse_indexing_map("UNDEFINED"),
               IndexingMap.from_tensor_sizes("(d0) -> (d0)", [4]), m.add_constraint(m.dim(0), (9, 9))]
    assert [type(r).__name__ for r in results] == ["IndexingMap"] * len(results)
    blocks = parse_instruction_indexing("operand id = 0 (d0) -> (d0), domain: d0 in [0, 9]")
    assert type(blocks[0][0].map) is IndexingMap


def test_pickle_equality_hash_and_printed_forms_are_kept() -> None:
    m = IndexingMap.parse(MAP)
    again = pickle.loads(pickle.dumps(m))
    assert type(again) is IndexingMap and again == m and hash(again) == hash(m)
    assert repr(m) == f"IndexingMap.parse({str(m)!r})"
    assert str(m) == ("(d0, d1)[s0]{rt0} -> (d0 + s0 * 4, d1 mod 8 + rt0), domain: d0 in [0, 3], "
                      "d1 in [0, 15], s0 in [0, 1], rt0 in [0, 2], d0 + d1 in [0, 9]")
    assert IndexingMap.__module__ == "tensorlayout.indexing.map" and isinstance(m, IndexingMapBase)
    with pytest.raises(IndexingError, match="cannot compose: the first map has 2 results"):
        _ = m * IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]")
