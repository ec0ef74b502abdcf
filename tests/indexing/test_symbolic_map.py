"""XLA's SymbolicMap and SymbolicExpr API (xla/hlo/analysis/symbolic_map.h, symbolic_expr.h).

Expected values follow symbolic_map.cc (the Compose example is the header's own); the
substitutions are checked by evaluating both sides on every point of a small box.
"""

from __future__ import annotations

import itertools

import pytest

from tensorlayout.errors import IndexingError
from tensorlayout.indexing import IndexingMap
from tensorlayout.indexing.expr import const, var
from tensorlayout.indexing.exprparse import parse_symbolic_expr_and_advance
from tensorlayout.indexing.symbolic_map import (
    SymbolicMap,
    compress_dims,
    compress_symbols,
    create_dim_expr,
    create_symbol_expr,
    get_dimension_index,
    get_symbol_index,
    get_unused_dimensions_bit_vector,
    get_unused_symbols_bit_vector,
    is_dimension,
    is_symbol,
    parse_symbolic_map,
    parse_symbolic_map_and_advance,
)

P = SymbolicMap.parse


def test_variables() -> None:
    assert create_dim_expr(1) is var(1) and create_symbol_expr(1, 2) is var(3)
    assert is_dimension(var(1), 2) and not is_dimension(var(2), 2) and not is_dimension(const(1), 2)
    assert is_symbol(var(2), 2) and not is_symbol(var(1), 2)
    assert get_dimension_index(var(1), 2) == 1 and get_symbol_index(var(3), 2) == 1
    with pytest.raises(IndexingError, match=r"Expr\('v1'\) is not a symbol of a map with 2 dims"):
        get_symbol_index(var(1), 2)
    with pytest.raises(IndexingError, match=r"Expr\('v2'\) is not a dimension of a map with 2 dims"):
        get_dimension_index(var(2), 2)


def test_queries() -> None:
    sm = P("(d0, d1)[s0] -> (d0 + s0, d1 * 2)")
    assert sm.num_results == 2 and sm.get_result(1) is sm.results[1]
    assert sm.get_dim_expression(1) is var(1) and sm.get_symbol_expression(0) is var(2)
    assert not sm.is_empty() and P("(d0) -> ()").is_empty()
    assert P("(d0, d1)[s0] -> (d0, d1)").is_identity() and not sm.is_identity()
    assert not P("(d0, d1) -> (d1, d0)").is_identity() and not P("(d0, d1) -> (d0)").is_identity()
    assert P("(d0) -> (3, -1)").is_constant() and P("(d0) -> (3, -1)").get_constant_results() == [3, -1]
    with pytest.raises(IndexingError, match=r"Cannot get constant results from a non-constant map"):
        sm.get_constant_results()
    assert sm.is_function_of_dim(0) and sm.is_function_of_symbol(0)
    assert not P("(d0, d1)[s0] -> (d1)").is_function_of_dim(0)
    assert sm == P("(a, b)[c] -> (a + c, b * 2)") and sm != P("(d0, d1)[s0, s1] -> (d0 + s0, d1 * 2)")
    assert SymbolicMap.get(1, 0, [var(0)]) == parse_symbolic_map("(d0) -> (d0)")
    with pytest.raises(IndexingError, match=r"result index 2 out of range \[0, 2\)"):
        sm.get_result(2)


def _values(sm: SymbolicMap, point: tuple[int, ...]) -> tuple[int, ...]:
    return tuple(r.evaluate(point) for r in sm.results)


def test_compose_by_evaluation() -> None:
    a = P("(d0, d1)[s0] -> (d0 + s0, d1 * 3 - s0)")
    b = P("(d0)[s0, s1] -> (d0 * 2 + s0 * 3, d0 floordiv 2 + s1)")
    c = a.compose(b)
    assert (c.num_dims, c.num_symbols) == (1, 3)
    for d0, sa, sb0, sb1 in itertools.product(range(-3, 4), range(3), range(3), range(3)):
        inner = _values(b, (d0, sb0, sb1))
        assert _values(c, (d0, sa, sb0, sb1)) == _values(a, (*inner, sa))
    with pytest.raises(IndexingError, match=r"Number of dimensions of this map must match number of"):
        b.compose(a)


def test_replace_and_sub_map() -> None:
    sm = P("(d0, d1)[s0] -> (d0 + s0, d1 * 2)")
    swapped = sm.replace_dims_and_symbols([var(1), var(0)], [], 2, 1)
    assert swapped.to_string() == "(d0, d1)[s0] -> (d1 + s0, d0 * 2)"
    assert sm.replace_dims_and_symbols([], [const(5)], 2, 0).to_string() == "(d0, d1) -> (d0 + 5, d1 * 2)"
    with pytest.raises(IndexingError, match=r"expected 2 dim and 1 symbol replacements \(or none\), got 1"):
        sm.replace_dims_and_symbols([var(0)], [], 2, 1)
    assert sm.get_sub_map([1, 0]).to_string() == "(d0, d1)[s0] -> (d1 * 2, d0 + s0)"
    assert sm.replace(var(1) * 2, var(0)).to_string() == "(d0, d1)[s0] -> (d0 + s0, d0)"


def test_unused_and_compress() -> None:
    sm = P("(d0, d1, d2)[s0, s1] -> (d1 + s1)")
    assert get_unused_dimensions_bit_vector(sm) == [True, False, True]
    assert get_unused_symbols_bit_vector(sm) == [True, False]
    dims = compress_dims(sm, [True, False, True])
    assert dims.to_string() == "(d0)[s0, s1] -> (d0 + s1)"
    both = compress_symbols(dims, [True, False])
    assert both.to_string() == "(d0)[s0] -> (d0 + s0)"
    assert compress_dims(sm, [False, False, False]) is sm
    with pytest.raises(IndexingError, match="compress a used dimension"):
        compress_dims(sm, [False, True, False])
    with pytest.raises(IndexingError, match=r"expected a mask of 2 symbols, got 1"):
        compress_symbols(sm, [True])


def test_expression_methods() -> None:
    e = (var(0) * 2 + var(1)) % 5
    assert e.evaluate([3, 4]) == 0 and e.variables() == frozenset({0, 1})
    assert e.replace_variables({1: const(1)}).evaluate([3]) == 2
    assert [str(x) for x in (var(0) + 1).walk()] == ["v0", "1", "v0 + 1"]
    assert (var(0).floor_div(2)).evaluate([-3]) == -2 and var(0).ceil_div(2).evaluate([-3]) == -1
    assert var(0).min(3).evaluate([5]) == 3 and var(0).max(3).evaluate([5]) == 5


def test_expression_structure() -> None:
    e = var(0) + 1
    assert e.kind_name == "add" and var(0).kind_name == "var" and const(2).kind_name == "const"
    assert e.is_binary and not var(0).is_binary and var(0).is_var and const(2).is_const


def test_printing_with_another_number_of_dims() -> None:
    # XLA's Print(expr, num_dims): the first num_dims ids print as d<i>, the rest as s<j>.
    m = IndexingMap.parse("(d0, d1)[s0] -> (d0 + d1 * 2 + s0), "
                          "domain: d0 in [0, 3], d1 in [0, 3], s0 in [0, 1]")
    e = m.results[0]
    assert e.to_string(2) == "d0 + d1 * 2 + s0"
    assert e.to_string(1) == "d0 + s0 * 2 + s1"
    assert e.to_string(3) == "d0 + d1 * 2 + d2"
    assert e.to_string(0) == "s0 + s1 * 2 + s2"
    assert str(e) == "v0 + v1 * 2 + v2"
    parsed, rest = parse_symbolic_expr_and_advance("d0 + s0, tail", num_dims=1)
    assert parsed.to_string(1) == "d0 + s0" and rest == ", tail"
    sm, rest = parse_symbolic_map_and_advance("(d0) -> (d0 * 3) junk")
    assert sm.to_string() == "(d0) -> (d0 * 3)" and rest.strip() == "junk"
