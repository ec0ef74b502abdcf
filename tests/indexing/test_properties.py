"""Property tests: simplify() keeps a map's meaning, print -> parse round-trips, bad text fails cleanly."""

from __future__ import annotations

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tensorlayout.errors import ParseError
from tensorlayout.indexing import Expr, IndexingMap, canonicalize, const, var, verify_equivalent

NUM_DIMS = 2
NUM_SYMS = 1


def exprs(num_vars: int) -> st.SearchStrategy[Expr]:
    leaves = st.one_of(
        st.integers(0, num_vars - 1).map(var),
        st.integers(-20, 40).map(const),
    )

    def extend(children: st.SearchStrategy[Expr]) -> st.SearchStrategy[Expr]:
        divisor = st.sampled_from([-7, -3, -2, 2, 3, 4, 5, 8, 16])
        return st.one_of(
            st.tuples(children, children).map(lambda p: p[0] + p[1]),
            st.tuples(children, children).map(lambda p: p[0] - p[1]),
            st.tuples(children, st.integers(-6, 12)).map(lambda p: p[0] * p[1]),
            st.tuples(children, divisor).map(lambda p: p[0] // p[1]),
            st.tuples(children, divisor.filter(lambda d: d > 0)).map(lambda p: p[0] % p[1]),
            st.tuples(children, children).map(lambda p: p[0].min(p[1])),
            st.tuples(children, children).map(lambda p: p[0].max(p[1])),
        )

    return st.recursive(leaves, extend, max_leaves=8)


@st.composite
def maps(draw: st.DrawFn) -> IndexingMap:
    n = NUM_DIMS + NUM_SYMS
    bounds = []
    for _ in range(n):
        lo = draw(st.integers(-8, 8))
        bounds.append((lo, lo + draw(st.integers(0, 12))))
    results = draw(st.lists(exprs(n), min_size=1, max_size=2))
    constraints = []
    if draw(st.booleans()):
        e = draw(exprs(n))
        lo = draw(st.integers(-10, 10))
        constraints.append((e, (lo, lo + draw(st.integers(0, 30)))))
    return IndexingMap(results, bounds[:NUM_DIMS], bounds[NUM_DIMS:], (), constraints)


@given(maps())
def test_simplify_keeps_meaning(m: IndexingMap) -> None:
    # XLA's negative-divisor constraint rewrite is unsound (spec §7 item 13); the exact option is not.
    s = m.simplify(exact_negative_divisor=True)
    result = verify_equivalent(m, s)
    assert result.equivalent, f"{m}\n{s}\n{result}"


@given(maps())
def test_simplify_preserve_keeps_meaning(m: IndexingMap) -> None:
    assert verify_equivalent(m, m.simplify("preserve", exact_negative_divisor=True)).equivalent


@given(maps())
def test_print_parse_round_trip(m: IndexingMap) -> None:
    # XLA's printer drops the parentheses of a sum on the right of "+" and prints a negated
    # right operand canonicalized, so an arbitrary tree round-trips to the same meaning; a
    # simplified (canonical) map round-trips to an equal map and the same text.
    again = IndexingMap.parse(str(m))
    assert verify_equivalent(m, again).equivalent
    s = m.simplify()
    back = IndexingMap.parse(str(s))
    assert back == s or s.is_known_empty
    assert str(back) == str(s)


@given(exprs(3))
def test_canonicalize_keeps_value(e: Expr) -> None:
    c = canonicalize(e)
    for point in ([0, 0, 0], [3, -5, 7], [-11, 13, 2], [17, 4, -9]):
        assert c.safe_evaluate(point) == e.safe_evaluate(point), (str(e), str(c))


@given(maps())
def test_simplify_is_idempotent_on_value(m: IndexingMap) -> None:
    s = m.simplify(exact_negative_divisor=True)
    assert verify_equivalent(s, s.simplify(exact_negative_divisor=True)).equivalent


@given(maps(), st.data())
def test_truncated_text_raises_parse_error_with_position(m: IndexingMap, data: st.DataObject) -> None:
    text = str(m)
    assume(not m.is_known_empty)
    cut = data.draw(st.integers(1, len(text) - 1))
    broken = text[:cut]
    try:
        IndexingMap.parse(broken)
    except ParseError as err:
        assert 0 <= err.offset <= len(broken)
        assert err.line == 1 and err.column >= 1


@pytest.mark.parametrize("text", [
    "", "(", "(d0", "(d0) ->", "(d0) -> (d0", "(d0) -> (d0) domain", "(d0) -> (d0), domain: d1 in [0, 1]",
    "(d0) -> (d0), domain: d0 in [0 1]", "(d0) -> (d0 + ), domain: d0 in [0, 1]",
    "(d0) -> (x), domain: d0 in [0, 1]", "(d0, d0) -> (d0), domain: d0 in [0, 1], d0 in [0, 1]",
    "(d0) -> (d0), domain: d0 in [0, 1], d0 + in [0, 1]", "(d0) -> (d0), domain: d0 in [0, 1] junk",
    "(d0) -> (max(d0, )), domain: d0 in [0, 1]", "(d0) -> (foo(3, 4)), domain: d0 in [0, 1]",
])
def test_malformed_text_raises_parse_error(text: str) -> None:
    with pytest.raises(ParseError) as info:
        IndexingMap.parse(text)
    assert 0 <= info.value.offset <= len(text)
