"""API details not covered by the upstream vectors: caching, names, sub-maps, XLA spellings."""

from __future__ import annotations

import pytest

from tensorlayout.errors import IndexingError
from tensorlayout.indexing import (
    IndexingMap,
    SimplifyPointDimensions,
    compose,
    compose_indexing_maps,
    convert_range_variables_to_dimensions,
    dim_vars_from_gpu_grid,
    parse_indexing_map,
    simplify_with_status,
    var,
    verify_equivalent,
)

RESHAPE = "(d0, d1) -> ((d0 mod 8) * 128 + d1 + (d0 / 8) * 1024), domain: d0 in [0, 1023], d1 in [0, 127]"


def test_simplifying_an_equal_map_again_is_cached_and_keeps_names() -> None:
    first = IndexingMap.parse(RESHAPE)
    s = first.simplify()
    assert IndexingMap.parse(RESHAPE).simplify() is s
    assert IndexingMap.parse(str(s)).simplify() is s
    assert simplify_with_status(IndexingMap.parse(str(s))) == (s, False)
    named = IndexingMap.parse(RESHAPE.replace("d0", "th_x").replace("d1", "bl_x"))
    assert str(named.simplify()) == str(s).replace("d0", "th_x").replace("d1", "bl_x")
    assert named.simplify() == s  # equality ignores names


def test_modes_accept_xla_spellings() -> None:
    m = IndexingMap.parse("(d0) -> (d0), domain: d0 in [5, 5]")
    for mode in ("preserve", "kPreserve", SimplifyPointDimensions.PRESERVE):
        assert simplify_with_status(m, mode) == (m, False)
    assert str(m.simplify(SimplifyPointDimensions.REPLACE)) == "(d0) -> (5), domain: d0 in [5, 5]"
    with pytest.raises(IndexingError, match=r"simplify mode must be 'replace' or 'preserve', not"):
        m.simplify("sometimes")


def test_dropping_an_always_true_constraint_is_not_a_change() -> None:
    m = IndexingMap.parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3], d0 + s0 in [0, 20]")
    s, changed = simplify_with_status(m)
    assert str(s) == "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3]" and not changed


def test_sub_map_constraints_and_result_ranges() -> None:
    m = parse_indexing_map("(d0)[s0, s1] -> (d0 + s0, s1 * 2), domain: d0 in [0, 3], s0 in [0, 1], "
                           "s1 in [0, 4], d0 + s0 in [0, 3]")
    assert str(m.get_sub_map(1)).startswith("(d0)[s0, s1] -> (s1 * 2), domain:")
    assert m.is_symbol_constrained(0) and not m.is_symbol_constrained(1)
    assert [list(r) for r in m.compute_result_ranges()] == [[0, 3], [0, 8]]
    assert m.clear_constraints().num_constraints == 0 and m.num_constraints == 1
    with pytest.raises(IndexingError, match=r"result index 2 out of range \[0, 2\)"):
        m.get_sub_map(2)


def test_xla_names_and_gpu_grid() -> None:
    assert compose_indexing_maps is compose
    dims = dim_vars_from_gpu_grid([128, 1, 1, 32, 1, 1])
    m = IndexingMap([var(0) + var(3) * 128], dims)
    assert str(m) == ("(th_x, th_y, th_z, bl_x, bl_y, bl_z) -> (th_x + bl_x * 128), domain: "
                      "th_x in [0, 127], th_y in [0, 0], th_z in [0, 0], bl_x in [0, 31], bl_y in [0, 0], "
                      "bl_z in [0, 0]")
    assert IndexingMap.parse(str(m)) == m
    with pytest.raises(IndexingError, match=r"a GPU grid has 6 sizes \(threads then blocks\), got 2"):
        dim_vars_from_gpu_grid([1, 2])
    with pytest.raises(IndexingError, match=r"range variable indices \[0\] out of range \[0, 0\)"):
        convert_range_variables_to_dimensions(m, [0])


def test_evaluate_checks_its_point() -> None:
    m = IndexingMap.parse("(d0)[s0] -> (d0 floordiv s0), domain: d0 in [0, 9], s0 in [1, 3]")
    assert m.evaluate([7], [2]) == (3,)
    for dims, syms in (([1, 2], [1]), ([1.5], [1]), ([True], [1])):
        with pytest.raises(IndexingError,
            match=r"expected 1 dim and 1 symbol|variable values must be ints,|variable values must be ints,"):
            m.evaluate(dims, syms)
    with pytest.raises(IndexingError, match=r"division by zero evaluating v0 / v1"):
        m.evaluate([1], [0])  # division by zero
    assert m.constraints_satisfied([1], [0])  # no constraints; bounds are not checked (XLA)
    assert not m.contains([1], [0])


def test_exact_option_fixes_xlas_mod_merging_on_negative_bounds() -> None:
    # XLA snaps d1's bounds to the residue with truncating division: [-1, 0] -> [1, -1] (empty),
    # although d1 = -1 satisfies d1 mod 2 = 1 (found by hypothesis).
    m = IndexingMap.parse("(d0, d1) -> (d0), domain: d0 in [0, 0], d1 in [-1, 0], d1 mod 2 in [1, 1]")
    assert m.simplify().is_known_empty
    exact = m.simplify(exact=True)
    assert str(exact) == "(d0, d1) -> (0), domain: d0 in [0, 0], d1 in [-1, -1], d1 mod 2 in [1, 1]"
    assert verify_equivalent(m, exact).equivalent and not verify_equivalent(m, m.simplify()).equivalent
