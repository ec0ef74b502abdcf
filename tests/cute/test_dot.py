"""The C inner product ``_dot.c`` against its reference, the Python ``coords._dot``, and
crd2idx on both paths against the sum written from its definition."""

from __future__ import annotations

import random
import tracemalloc
from typing import Any

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from tensorlayout import cute
from tensorlayout.cute import Layout, coords, int_tuple
from tensorlayout.cute.int_tuple import Int, flatten, unflatten
from tensorlayout.errors import LayoutError
from tests.cute.conftest import c_dot_built

needs_c = pytest.mark.skipif(not c_dot_built(), reason="the C extension tensorlayout.cute._dot was not built")

if c_dot_built():
    from tensorlayout.cute import _dot

    MAX_DEPTH = _dot.MAX_DEPTH
else:
    MAX_DEPTH = 0


class OtherInt(int):
    """An int subclass that is not cute's Int: no leaf anywhere."""


BIG = [0, 1, -1, 2, 7, -3, 2**31, 2**62, -(2**62), 2**63 - 1, 2**63, -(2**63), -(2**63) - 1, 2**64,
       -(2**64), 2**64 + 3, 3 * 2**70, -(5**40)]
ODD = [True, False, np.int64(3), np.int32(-2), Int(4), Int(-(2**63)), OtherInt(5), None, 1.0, [1], "2"]


def leaf(rng: random.Random, odd: float) -> Any:
    if rng.random() < odd:
        return rng.choice(ODD)
    return rng.choice(BIG) if rng.random() < 0.5 else rng.randint(-(2**66), 2**66) >> rng.randrange(67)


def tree(rng: random.Random, depth: int) -> Any:
    """A nested-tuple profile with None leaves."""
    if depth == 0 or rng.random() < 0.4:
        return None
    return tuple(tree(rng, depth - 1) for _k in range(rng.randint(0, 4)))


def fill(t: Any, rng: random.Random, odd: float) -> Any:
    return tuple(fill(x, rng, odd) for x in t) if type(t) is tuple else leaf(rng, odd)


def perturb(t: Any, rng: random.Random) -> Any:
    """``t`` with one change that may break congruence: a mode dropped, doubled, listed or flattened."""
    if type(t) is not tuple or not t or rng.random() < 0.3:
        return rng.choice([(t,), [t] if type(t) is not tuple else list(t), 0, (), Int(1), True])
    k = rng.randrange(len(t))
    how = rng.randrange(3)
    if how == 0:
        return t[:k] + t[k + 1:]
    if how == 1:
        return t + (t[k],)
    return t[:k] + (perturb(t[k], rng),) + t[k + 1:]


def triple(rng: random.Random) -> tuple[Any, Any, Any]:
    shape = tree(rng, rng.choice((0, 1, 3, 6)))
    odd = rng.choice((0.0, 0.0, 0.05, 0.3))
    out = [fill(shape, rng, odd) for _k in range(3)]
    if rng.random() < 0.3:
        k = rng.randrange(3)
        out[k] = perturb(out[k], rng)
    return out[0], out[1], out[2]


def by_definition(crd: Any, stride: Any) -> int:
    return sum(c * d for c, d in zip(flatten(crd), flatten(stride), strict=True))


def nest(x: Any, levels: int) -> Any:
    for _k in range(levels):
        x = (x,)
    return x


@needs_c
@given(st.integers(0, 2**32))
def test_c_dot_is_the_python_dot(seed: int) -> None:
    """Equal results, None included, on random congruent and broken triples (big ints, bools,
    numpy ints, Int, other int subclasses, lists, None, mismatched lengths)."""
    rng = random.Random(seed)
    for _k in range(20):
        crd, shape, stride = triple(rng)
        want = coords._dot(crd, shape, stride)
        got = coords._fast_dot(crd, shape, stride)
        assert got == want and type(got) is type(want), (crd, shape, stride)


@needs_c
def test_c_dot_exact_across_int64() -> None:
    """Products and partial sums that leave int64, come back, or stay on its edges."""
    m = 2**63
    cases = [((1, 1), (m - 1, 1)), ((-1, -1), (-m, -1)), ((-1,), (-m,)), ((1, 1, 1), (m - 1, 1, -2)),
             ((2**32, 2**32), (2**31, -(2**31))), ((m, 1), (1, -m)), ((3, 2**70), (2**62, 1)),
             ((2**62, 2**62, 2**62, -(2**62), 1), (2, 2, 2, 2, 5)), ((m, m), (m, -m)), ((0, 5), (2**200, 7))]
    for crd, stride in cases:
        shape = (1,) * len(crd)
        got = coords._fast_dot(crd, shape, stride)
        assert got == by_definition(crd, stride) and type(got) is int, (crd, stride)
    assert coords._fast_dot(-m, 1, -1) == m
    assert coords._fast_dot(3, Int(9), Int(-(2**63))) == -3 * m


@needs_c
def test_c_dot_leaf_rule() -> None:
    """Exact ints in crd; exact ints or Int in shape and stride; a tuple crd leaf needs tuple modes."""
    f = coords._fast_dot
    assert f((1, (2, 0)), (2, (3, 4)), (1, (2, 6))) == 5
    assert f(3, (2, 2), (1, 2)) is None and f((3,), (2,), (Int(5),)) == 15
    assert f(Int(3), 4, 1) is None and f(True, 4, 1) is None and f(np.int64(3), 4, 1) is None
    assert f(3, OtherInt(4), 1) is None and f(3, 4, 1.0) is None and f([1], [2], [3]) is None
    assert f((), (), ()) == 0 and f((), (1,), (1,)) is None and f((1, 2), (1, 2), (1,)) is None


@needs_c
def test_c_dot_depth_bound() -> None:
    """Up to MAX_DEPTH levels it is the Python dot; deeper it is None (no deep C recursion, and
    crd2idx's general path refuses it: IntTuples nest at most int_tuple.MAX_DEPTH levels, the
    same bound); 10,000 levels do not crash it."""
    assert MAX_DEPTH == int_tuple.MAX_DEPTH
    x = nest(5, MAX_DEPTH), nest(9, MAX_DEPTH), nest(7, MAX_DEPTH)
    assert coords._fast_dot(*x) == coords._dot(*x) == cute.crd2idx(*x) == 35
    x = nest(5, MAX_DEPTH + 1), nest(9, MAX_DEPTH + 1), nest(7, MAX_DEPTH + 1)
    assert coords._fast_dot(*x) is None and coords._dot(*x) == 35
    with pytest.raises(LayoutError, match="nested at most"):
        cute.crd2idx(*x)
    deep = nest(1, 10_000)
    assert coords._fast_dot(deep, deep, deep) is None


@needs_c
def test_c_dot_keeps_no_references() -> None:
    """Big products, int64 sums carried out, big sums with an int64 rest, and broken triples
    leave no memory behind."""
    shape = (1, (1, 1), 1, 1)
    triples = [((2**70, (3, 2**80), 0, 0), shape, (2**65, (2**64, -7), 0, 0)),
               ((2**62, (2**62, 2**62), 1000, 0), shape, (1, (1, 1), 5, 0)),
               ((2**62, (3, 2**62), 1000, 2**70), shape, (1, (1, 1), 5, 1)),
               ((2**70, (3, 2**80), 0, 0), shape, (2**65, (2**64, [1]), 0, 0))]
    f = coords._fast_dot
    for t in triples:
        f(*t)
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        for _k in range(10_000):
            for t in triples:
                f(*t)
        grown = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert grown < 50_000, grown


@needs_c
def test_c_dot_arguments() -> None:
    with pytest.raises(TypeError, match=r"dot\(\) takes 3 arguments \(2 given\)"):
        coords._fast_dot(1, 2)  # type: ignore[call-arg]
    with pytest.raises(TypeError, match=r"make_dot\(\) takes a subclass of int"):
        _dot.make_dot(float)  # type: ignore[arg-type]


@pytest.mark.usefixtures("dot_path")
def test_crd2idx_is_the_sum_by_definition() -> None:
    """Random layouts (big, negative and Int strides) at random natural and 1-D coordinates, on
    each path, against the sum of products and the layout's call."""
    rng = random.Random(15)
    for _k in range(400):
        shape = tree(rng, 3)
        shape = unflatten([rng.randint(1, 5) for _ in flatten(shape)], shape) if shape is not None else 3
        stride = unflatten([rng.choice((0, 1, -3, 2**40, 2**63, -(2**64), Int(6))) for _ in flatten(shape)],
                           shape)
        crd = cute.idx2crd(rng.randrange(cute.size(shape)), shape)
        want = by_definition(crd, stride)
        assert cute.crd2idx(crd, shape, stride) == want == Layout(shape, stride)(crd)
        assert cute.crd2idx(cute.crd2idx(crd, shape), shape, stride) == want
