"""Algebraic laws of the CuTe operations, checked pointwise on random layouts."""

from __future__ import annotations

import random

import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

from tensorlayout import cute
from tensorlayout.cute import Layout
from tensorlayout.cute.inverses import stride_order
from tensorlayout.errors import AlgebraError, ParseError, TensorLayoutError


@st.composite
def int_tuples(draw: st.DrawFn, leaf: st.SearchStrategy[int], depth: int = 2) -> object:
    if depth == 0 or draw(st.booleans()):
        return draw(leaf)
    return tuple(draw(st.lists(int_tuples(leaf, depth - 1), min_size=1, max_size=3)))


@st.composite
def layouts(draw: st.DrawFn, max_size: int = 256) -> Layout:
    shape = draw(int_tuples(st.integers(1, 6)))
    assume(cute.size(shape) <= max_size)
    flat = cute.int_tuple.flatten(shape)
    strides = draw(st.lists(st.integers(0, 40), min_size=len(flat), max_size=len(flat)))
    return Layout(shape, cute.int_tuple.unflatten(strides, shape))


@st.composite
def compact_layouts(draw: st.DrawFn) -> Layout:
    """Injective layouts: a permutation of compact strides, possibly with gaps."""
    shape = draw(int_tuples(st.integers(1, 5)))
    assume(cute.size(shape) <= 256)
    flat = cute.int_tuple.flatten(shape)
    order = draw(st.permutations(range(len(flat))))
    gaps = draw(st.lists(st.sampled_from([1, 1, 2, 3]), min_size=len(flat), max_size=len(flat)))
    strides = [0] * len(flat)
    cur = 1
    for k in order:
        cur *= gaps[k]
        strides[k] = cur
        cur *= flat[k]
    return Layout(shape, cute.int_tuple.unflatten(strides, shape))


def values(layout: Layout) -> list[int]:
    return [int(v) for v in layout.offsets()]


@given(layouts())
def test_coalesce_preserves_the_function(a: Layout) -> None:
    c = cute.coalesce(a)
    assert c.size() == a.size() and values(c) == values(a)
    assert cute.depth(c) <= 1


@given(layouts(), layouts(64))
def test_composition_is_function_composition(a: Layout, b: Layout) -> None:
    assume(max(values(b)) < a.size())
    try:
        r = cute.composition(a, b)
    except AlgebraError:
        return
    assert r.size() == b.size()
    assert values(r) == [a(int(i)) for i in values(b)]
    assert cute.compatible(b.shape, r.shape)


@given(compact_layouts(), st.integers(1, 4))
def test_complement_is_disjoint_and_covers(a: Layout, extra: int) -> None:
    m = cute.cosize(a) * extra
    r = cute.complement(a, m)
    image_a, image_r = set(values(a)), set(values(r))
    assert image_a & image_r == {0}
    assert values(r) == sorted(values(r))
    both = set(values(cute.make_layout(a, r)))
    assert set(range(m)) <= both
    assert len(both) == a.size() * r.size()


@given(compact_layouts())
def test_inverses(a: Layout) -> None:
    right = cute.right_inverse(a)
    assert all(a(right(i)) == i for i in range(right.size()))
    left = cute.left_inverse(a)
    assert all(left(a(i)) == i for i in range(a.size()))


@given(compact_layouts(), compact_layouts())
def test_divide_and_product_sizes(a: Layout, b: Layout) -> None:
    try:
        d = cute.logical_divide(a, b)
    except AlgebraError:
        d = None
    if d is not None:
        assert d.size() >= a.size()
        assert values(d[0]) == values(cute.composition(a, b))
    try:
        p = cute.logical_product(a, b)
    except AlgebraError:
        return
    assert p.size() == a.size() * b.size()
    assert values(p[0]) == values(a)
    try:
        bp = cute.blocked_product(a, b)
    except AlgebraError as e:  # C++'s zip rejects a 1-tuple block against an int tile, and so do we
        assert "mismatched ranks" in str(e)
        return
    assert bp.size() == p.size() and sorted(values(bp)) == sorted(values(p))


def test_pycute_bugs_are_not_reproduced() -> None:
    # pycute silently returns 4:3 here; C++ rejects the shape-divisibility violation.
    with pytest.raises(AlgebraError, match="shape divisibility"):
        cute.composition(Layout.parse("(4,3):(3,1)"), Layout.parse("6:1"))
    # pycute returns garbage for an overlapping layout.
    with pytest.raises(AlgebraError, match="not injective"):
        cute.complement(Layout.parse("(2,2):(1,1)"), 8)
    # C++ idx2crd keeps the overflow in the last mode; pycute wraps it.
    assert cute.idx2crd(20, (3, (2, 3))) == (2, (0, 3))
    assert cute.idx2crd((1, 5), (3, (2, 3))) == (1, (1, 2))


def test_strict_complement_rejects_non_nesting_strides() -> None:
    a = Layout.parse("(4,10):(1,10)")
    assert str(cute.complement(a)) == "2:4"  # C++ parity
    with pytest.raises(AlgebraError, match="not a multiple"):
        cute.complement(a, strict=True)


@pytest.mark.parametrize("text, column", [
    ("(4,2):(1", 9), ("(4,2):(1,2,3)", 7), ("((4,2):(1,2)", 7), ("(4,x):(1,2)", 4), ("4:", 3),
])
def test_malformed_layout_text(text: str, column: int) -> None:
    with pytest.raises(ParseError, match=r"at line 1, column") as info:
        Layout.parse(text)
    assert info.value.column == column


@given(st.text(alphabet="(),:_0123456789- x", max_size=30))
def test_random_text_raises_only_library_errors(text: str) -> None:
    try:
        layout = Layout.parse(text)
    except TensorLayoutError:
        return
    try:
        if layout.size() <= 4096:
            cute.coalesce(layout)
            cute.complement(layout)
    except TensorLayoutError:
        pass


def test_seed_examples() -> None:
    from tensorlayout.cute import tla
    w2xh4 = tla.make_layout(cute.parse_int_tuple("(_2,4)"), cute.parse_int_tuple("(_12,_1)"))
    assert str(w2xh4.layout) == "(_2,4):(_12,_1)"
    w32 = tla.make_layout(((16, 2), (16, 3)), ((16, 256), (1, 512)))
    assert str(w32.layout) == "((16,2),(16,3)):((16,256),(1,512))"
    row = cute.format_grid(Layout.parse("(2,3):(3,1)")).splitlines()
    assert row[3].split("|")[1:4] == [" 0 ", " 1 ", " 2 "]
    col = cute.grid_values(Layout.parse("(2,3):(1,2)")).tolist()
    assert col == [[0, 2, 4], [1, 3, 5]]
    zn = Layout.parse("((4,2),(4,3)):((4,16),(1,32))")
    grid = cute.grid_values(zn)
    assert grid[0].tolist() == [0, 1, 2, 3, 32, 33, 34, 35, 64, 65, 66, 67]
    assert grid[7].tolist() == [28, 29, 30, 31, 60, 61, 62, 63, 92, 93, 94, 95]
    assert tla.crd2offset((1, 5), zn) == 37
    assert str(tla.make_layout_tile(zn, (4, 4)).layout) == "((4,1),(4,1)):((4,16),(1,32))"


def test_stride_order_matches_the_exchange_sort() -> None:
    # the inverses order strides by any sort when distinct and by C++'s exchange sort otherwise:
    # on random keys (repeats, negatives, big ints past any machine word) both give C++'s order
    rng = random.Random(7)
    for _ in range(3000):
        n = rng.randint(0, 60)
        pool = rng.sample([-8, -1, 0, 1, 2, 3, 4, 6, 8, 2**70, 3 * 2**70, -(2**90)], rng.randint(1, 12))
        keys = [rng.choice(pool) for _ in range(n)] if rng.random() < 0.7 else rng.sample(range(-99, 99), n)
        order = list(range(n))
        for i in range(n):
            for j in range(i + 1, n):
                if keys[order[j]] < keys[order[i]]:
                    order[i], order[j] = order[j], order[i]
        assert stride_order(keys) == order
