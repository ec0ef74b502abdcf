"""The simplifier examples of the seed document (Hindi indexing-analysis page), in today's syntax.

The seed is from the MLIR era: implicit products such as ``100d0`` are written ``100 * d0`` here,
and ``-(...) floordiv 11`` (where MLIR's unary minus covered the division) is parenthesised.
"""

from __future__ import annotations

import pytest

from tensorlayout.indexing import IndexingMap, compose, verify_equivalent

SEED_CASES = [
    ("(d0, d1) -> (d0 + d1 floordiv 16, d1 mod 16), domain: d0 in [0, 6], d1 in [0, 14]",
     "(d0, d1) -> (d0, d1), domain: d0 in [0, 6], d1 in [0, 14]"),
    ("(d0, d1, d2) -> ((100 * d0 + 10 * d1 + d2) floorDiv 100,"
     " ((100 * d0 + 10 * d1 + d2) mod 100) floordiv 10, d2 mod 10),"
     " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
     "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"),
    ("(d0, d1, d2) -> ((16 * d0 + 4 * d1 + d2) floordiv 8, (16 * d0 + 4 * d1 + d2) mod 8),"
     " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]",
     "(d0, d1, d2) -> (d0 * 2 + (d1 * 4 + d2) / 8, (d1 * 4 + d2) mod 8),"
     " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"),
    ("(d0, d1) -> (-((-11 * d0 - d1 + 109) floordiv 11) + 9), domain: d0 in [0, 9], d1 in [0, 10]",
     "(d0, d1) -> (d0), domain: d0 in [0, 9], d1 in [0, 10]"),
    ("(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3], d0 + s0 in [0, 20]",
     "(d0)[s0] -> (d0 + s0), domain: d0 in [0, 5], s0 in [1, 3]"),
]


@pytest.mark.parametrize(("text", "expected"), SEED_CASES)
def test_seed_simplifier_examples(text: str, expected: str) -> None:
    m = IndexingMap.parse(text)
    s = m.simplify()
    assert str(s) == expected
    assert verify_equivalent(m, s).equivalent


def test_seed_chained_reshapes_cancel() -> None:
    # f32[10,10,10] -> reshape f32[50,20] -> reshape f32[10,10,10]: output-to-input maps composed.
    outer = IndexingMap.parse(
        "(d0, d1, d2) -> ((d0 * 100 + d1 * 10 + d2) floordiv 20, (d0 * 100 + d1 * 10 + d2) mod 20),"
        " domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]")
    inner = IndexingMap.parse(
        "(d0, d1) -> ((d0 * 20 + d1) floordiv 100, ((d0 * 20 + d1) mod 100) floordiv 10, d1 mod 10),"
        " domain: d0 in [0, 49], d1 in [0, 19]")
    composed = compose(outer, inner)
    identity = "(d0, d1, d2) -> (d0, d1, d2), domain: d0 in [0, 9], d1 in [0, 9], d2 in [0, 9]"
    assert str(composed.simplify()) == identity


@pytest.mark.parametrize("text", [
    "(d0, d1) -> (d0 floordiv 8, d1), domain: d0 in [0, 31], d1 in [0, 3]",
    "(d0, d1, d2) -> (d0 - 5, (d1 - 3) floordiv 7, d2 floordiv 2), domain: d0 in [5, 9], d1 in [3, 17],"
    " d2 in [0, 48], (d1 - 3) mod 7 in [0, 0], d2 mod 2 in [0, 0]",
    "(d0, d1, d2, d3) -> (d0, -d1 + 16, -d2 + 8, d3), domain: d0 in [0, 0], d1 in [0, 16], d2 in [0, 8],"
    " d3 in [0, 8]",
])
def test_seed_maps_round_trip(text: str) -> None:
    m = IndexingMap.parse(text)
    assert IndexingMap.parse(str(m)) == m


def test_negative_divisor_parity_and_exact_option() -> None:
    text = "(d0)[s0] -> (d0), domain: d0 in [0, 99], s0 in [-99, 99], s0 / -3 in [-11, -5]"
    m = IndexingMap.parse(text)
    xla = m.simplify()
    exact = m.simplify(exact=True)
    assert str(xla.range_vars[0].bounds) == "[15, 35]"  # XLA's (unsound) answer, kept for parity
    assert str(exact.range_vars[0].bounds) == "[13, 33]"
    assert not verify_equivalent(m, xla).equivalent
    assert verify_equivalent(m, exact).equivalent


def test_resimplify_is_cached() -> None:
    m = IndexingMap.parse("(d0) -> (d0 mod 42), domain: d0 in [53, 71]")
    s = m.simplify()
    assert s.simplify() is s
    assert m.simplify() is s
