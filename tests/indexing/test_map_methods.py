"""IndexingMap's XLA method set (xla/hlo/analysis/indexing_map.h): accessors, bounds, renaming,
constraint erasure, Verify, symbol kinds, and RemoveUnusedSymbols/RescaleSymbols as XLA runs them.

Expected values follow XLA's indexing_map.cc; the rewrites are also checked by brute force
(verify_equivalent) where XLA's rewrite keeps the meaning.
"""

from __future__ import annotations

import io
import itertools

import pytest

from tensorlayout.errors import IndexingError
from tensorlayout.indexing import IndexingMap, verify_equivalent
from tensorlayout.indexing.expr import var
from tensorlayout.indexing.interval import Interval
from tensorlayout.indexing.ranges import RangeEvaluator
from tensorlayout.indexing.variables import (
    Variable,
    dim_vars_from_tensor_sizes,
    range_vars_from_tensor_sizes,
)

M = IndexingMap.parse(
    "(d0, d1)[s0, s1]{rt0} -> (d0 + s0, d1 * 2 + rt0), domain: d0 in [0, 3], d1 in [0, 7], "
    "s0 in [0, 5], s1 in [1, 2], rt0 in [0, 9], d0 + s1 in [0, 4]")


def test_counts_and_variables() -> None:
    assert (M.num_dims, M.num_range_vars, M.num_rt_vars, M.num_symbols, M.num_vars) == (2, 2, 1, 3, 5)
    assert M.num_results == 2 and M.num_constraints == 1 and len(M.results) == 2
    assert M.dim_var(1) == Variable(Interval(0, 7)) == M.dim_vars[1]
    assert M.range_var(1).bounds == Interval(1, 2) == M.range_vars[1].bounds
    assert M.rt_var(0).bounds == Interval(0, 9) == M.rt_vars[0].bounds
    assert M.all_vars() == (*M.dim_vars, *M.range_vars, *M.rt_vars)
    for bad in (lambda: M.dim_var(2), lambda: M.range_var(-1), lambda: M.rt_var(1)):
        with pytest.raises(IndexingError, match="out of range"):
            bad()


def test_bounds() -> None:
    assert M.get_dimension_bounds() == [Interval(0, 3), Interval(0, 7)]
    assert M.get_dimension_bound(0) == Interval(0, 3)
    assert M.get_symbol_bounds() == [Interval(0, 5), Interval(1, 2), Interval(0, 9)]
    assert M.get_symbol_bound(2) == Interval(0, 9)
    with pytest.raises(IndexingError, match=r"symbol index 3 out of range \[0, 3\)"):
        M.get_symbol_bound(3)


def test_symbol_kinds() -> None:
    assert M.is_range_var_symbol(M.symbol(0)) and M.is_range_var_symbol(M.symbol(1))
    assert M.is_rt_var_symbol(M.symbol(2)) and not M.is_range_var_symbol(M.symbol(2))
    with pytest.raises(IndexingError, match=r"expected a symbol expression such as map\.symbol\(0\), got"):
        M.is_rt_var_symbol(M.dim(0))
    with pytest.raises(IndexingError, match=r"symbol index 3 out of range \[0, 3\)"):
        M.is_rt_var_symbol(M.symbol(3))
    assert M.is_symbol_constrained(1) and not M.is_symbol_constrained(0)


def test_kind_flags() -> None:
    assert not M.is_undefined and not M.is_known_empty
    assert IndexingMap.get_undefined().is_undefined
    assert IndexingMap.known_empty(2, 1, 2).is_known_empty


def test_rename_dim_var_and_erase_constraint() -> None:
    renamed = M.rename_dim_var(0, "th_x")
    assert renamed.dim_var(0).name == "th_x" and renamed == M  # names do not count for ==
    assert str(renamed).startswith("(th_x, d1)[s0, s1]{rt0} -> (th_x + s0")
    with pytest.raises(IndexingError, match=r"dimension variable index 2 out of range \[0, 2\)"):
        M.rename_dim_var(2, "x")
    constraint = next(iter(M.constraints))
    erased = M.erase_constraint(constraint)
    assert erased.num_constraints == 0 and erased.constraints == {}
    assert M.erase_constraint(M.dim(0) * 7).num_constraints == 1  # absent: unchanged


def test_verify() -> None:
    assert M.verify() and IndexingMap.get_undefined().verify()
    bad = IndexingMap._make((var(3),), (Variable(Interval(0, 3)),), (), (), (), False, False)
    out = io.StringIO()
    assert not bad.verify(out)
    assert "variable v3" in out.getvalue() and "1 dims, 0 range and 0 runtime" in out.getvalue()


def test_evaluate_and_constraints_satisfied() -> None:
    assert M.evaluate([1, 2], [3, 1, 4]) == (4, 8)
    assert M.constraints_satisfied([1, 2], [3, 1, 4])
    assert not M.constraints_satisfied([3, 2], [3, 2, 4])  # d0 + s1 = 5 > 4


def test_vars_from_tensor_sizes() -> None:
    assert dim_vars_from_tensor_sizes([4, 1]) == [Variable(Interval(0, 3)), Variable(Interval(0, 0))]
    assert range_vars_from_tensor_sizes([2]) == [Variable(Interval(0, 1))]
    m = IndexingMap.from_tensor_sizes("(d0)[s0] -> (d0 + s0)", [4], [2])
    assert m.get_symbol_bound(0) == Interval(0, 1)


def test_remove_unused_symbols_with_runtime_variables() -> None:
    m = IndexingMap.parse("(d0)[s0, s1]{rt0, rt1} -> (d0 + s1 + rt1), domain: d0 in [0, 3], "
                          "s0 in [0, 5], s1 in [0, 7], rt0 in [0, 2], rt1 in [0, 4], s0 + rt0 in [1, 6]")
    out, mask = m.remove_unused_symbols_with_mask()
    assert mask == [True, False, True, False]
    assert str(out) == "(d0)[s0]{rt0} -> (d0 + s0 + rt0), domain: d0 in [0, 3], s0 in [0, 7], rt0 in [0, 4]"
    assert verify_equivalent(m, out)
    assert m.remove_unused_symbols_with_mask() == (out, mask)


def test_remove_unused_is_one_pass_as_xla() -> None:
    # s0 + s1 only uses unused symbols, but s1 is kept by s1 + d0: XLA keeps the constraint and
    # still removes s0, which becomes 0 in it (s1 then folds into its bounds).
    m = IndexingMap.parse("(d0)[s0, s1] -> (d0), domain: d0 in [0, 3], s0 in [0, 5], "
                          "s1 in [0, 7], s0 + s1 in [0, 5], s1 + d0 in [0, 9]")
    out, mask = m.remove_unused_symbols_with_mask()
    assert mask == [True, False]
    assert str(out) == "(d0)[s0] -> (d0), domain: d0 in [0, 3], s0 in [0, 5], s0 + d0 in [0, 9]"
    vars_out, vars_mask = m.remove_unused_vars_with_mask()
    assert vars_mask == [False, True, False] and vars_out == out


def test_remove_unused_nothing_to_do() -> None:
    m = IndexingMap.parse("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 3], s0 in [0, 5]")
    assert m.remove_unused_symbols_with_mask() == (m, [])
    assert IndexingMap.parse("(d0) -> (d0), domain: d0 in [0, 3]").remove_unused_symbols_with_mask()[1] == []


def _results_by_dims(m: IndexingMap) -> dict[tuple[int, ...], set[tuple[int, ...]]]:
    """For each dims point, the set of results over every feasible symbol value (brute force)."""
    boxes = [range(v.bounds.lower, v.bounds.upper + 1) for v in m.all_vars()]
    out: dict[tuple[int, ...], set[tuple[int, ...]]] = {}
    for point in itertools.product(*boxes):
        dims, symbols = point[:m.num_dims], point[m.num_dims:]
        if m.contains(dims, symbols):
            out.setdefault(dims, set()).add(m.evaluate(dims, symbols))
    return out


def test_rescale_symbols_several_mod_constraints_on_one_symbol() -> None:
    # Different residues cannot merge: XLA rescales by the first and rewrites the second.
    m = IndexingMap.parse("(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 100], "
                          "s0 mod 6 in [3, 3], s0 mod 4 in [1, 1]")
    out, changed = m.rescale_symbols_with_status()
    assert changed
    assert str(out) == ("(d0)[s0] -> (s0 * 6 + 3), domain: d0 in [0, 3], s0 in [0, 15], "
                        "(s0 * 6 + 3) mod 4 in [1, 1]")
    assert _results_by_dims(m) == _results_by_dims(out)
    # Same residue: merged to one constraint s0 mod 12 first.
    m2 = IndexingMap.parse("(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 100], "
                           "s0 mod 6 in [3, 3], s0 mod 4 in [3, 3]")
    assert str(m2.rescale_symbols()) == "(d0)[s0] -> (s0 * 12 + 3), domain: d0 in [0, 3], s0 in [0, 8]"
    assert _results_by_dims(m2) == _results_by_dims(m2.rescale_symbols())


def test_rescale_symbols_runtime_variable_and_two_symbols() -> None:
    m = IndexingMap.parse("(d0)[s0]{rt0} -> (s0 + rt0), domain: d0 in [0, 3], s0 in [0, 20], "
                          "rt0 in [0, 20], s0 mod 5 in [0, 0], rt0 mod 3 in [2, 2]")
    out = m.rescale_symbols()
    assert str(out) == ("(d0)[s0]{rt0} -> (s0 * 5 + rt0 * 3 + 2), domain: d0 in [0, 3], "
                        "s0 in [0, 4], rt0 in [0, 6]")
    assert _results_by_dims(m) == _results_by_dims(out)
    assert not IndexingMap.parse("(d0)[s0] -> (s0), domain: d0 in [0, 3], s0 in [0, 9]"
                                 ).rescale_symbols_with_status()[1]


def test_remove_unused_vars_and_ranges() -> None:
    m = IndexingMap.parse("(d0, d1)[s0] -> (d1), domain: d0 in [0, 3], d1 in [0, 7], s0 in [0, 2]")
    assert str(m.remove_unused_vars()) == "(d0) -> (d0), domain: d0 in [0, 7]"
    evaluator = RangeEvaluator.for_map(M)
    assert evaluator.compute_expression_range(M.results[1]) == Interval(0, 23)
    assert evaluator.is_always_positive_or_zero(M.results[0])
    assert not evaluator.is_always_negative_or_zero(M.results[0])
    assert evaluator.is_always_negative_or_zero(M.dim(0) * -1)
