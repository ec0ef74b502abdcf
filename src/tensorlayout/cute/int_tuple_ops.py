"""The rest of CuTe's ``int_tuple.hpp``: reductions, leaf arithmetic and the orders on IntTuples.

Each function follows CuTe's C++ (``cute/int_tuple.hpp``) case by case, integer division
included (C++'s ``/`` rounds toward zero). Where C++ does not compile a call (mismatched
ranks, a tuple against an int where C++ needs ints) the function raises :class:`AlgebraError`.

>>> sum((2, (3, 4))), max((2, (7, 4)), 5), gcd((12, (18,)), 8), product_each((2, (3, 4)))
(9, 7, 2, (2, 12))
>>> lex_less((1, 5), (2, 0)), colex_less((1, 5), (2, 0)), elem_leq((1, 2), (1, 3))
(True, False, True)
>>> round_up((5, 7, 9), (4, 2)), evenly_divides((8, 6), (4, 3)), evenly_divides((8, 6), 5)
((8, 8, 9), True, False)
"""

from __future__ import annotations

import builtins
import math
from collections.abc import Callable, Sequence

from tensorlayout.core.intmath import trunc_div, trunc_mod
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.int_tuple import IntTuple, format_int_tuple
from tensorlayout.errors import AlgebraError

__all__ = [
    "colex_geq",
    "colex_gtr",
    "colex_leq",
    "colex_less",
    "elem_geq",
    "elem_gtr",
    "elem_leq",
    "elem_scale",
    "evenly_divides",
    "flat_coord",
    "gcd",
    "idx2crd_strided",
    "lex_geq",
    "lex_gtr",
    "lex_leq",
    "lex_less",
    "make_int_tuple",
    "max",
    "min",
    "product_each",
    "product_like",
    "round_up",
    "sum",
    "tuple_ceil_div",
]

_require = it._require


def _mismatch(what: str, a: IntTuple, b: IntTuple) -> AlgebraError:
    return AlgebraError(f"{what}: mismatched ranks, {format_int_tuple(a)} and {format_int_tuple(b)}")


def _has_empty(t: IntTuple) -> bool:
    return isinstance(t, tuple) and (not t or any(_has_empty(x) for x in t))


def _fold_leaves(fn: Callable[[int, int], int], t0: IntTuple, ts: Sequence[IntTuple], what: str) -> int:
    """CuTe's variadic fold of max/min/gcd: a tuple argument stands for the fold of its leaves
    (an empty tuple anywhere has no value: C++ does not compile it)."""
    if any(_has_empty(t) for t in (t0, *ts)):
        raise AlgebraError(f"{what} of an empty tuple has no value")
    leaves = [x for t in (t0, *ts) for x in it.flatten(t)]
    out = leaves[0]
    for x in leaves[1:]:
        out = fn(out, x)
    return out


@_require
def max(t0: IntTuple, *ts: IntTuple) -> int:
    """The greatest leaf of all arguments (CuTe's variadic ``max``).

    >>> max((3, (9, 1)), 4)
    9
    """
    return _fold_leaves(builtins.max, t0, ts, "max")


@_require
def min(t0: IntTuple, *ts: IntTuple) -> int:
    """The least leaf of all arguments (CuTe's variadic ``min``).

    >>> min((3, (9, 1)), 4)
    1
    """
    return _fold_leaves(builtins.min, t0, ts, "min")


@_require
def gcd(t0: IntTuple, *ts: IntTuple) -> int:
    """The greatest common divisor of all leaves (``gcd(0, x) == x``, as ``std::gcd``).

    >>> gcd((12, 18), 8)
    2
    """
    return _fold_leaves(math.gcd, t0, ts, "gcd")


@_require
def sum(t: IntTuple) -> int:
    """The sum of the leaves (0 for ``()``).

    >>> sum((2, (3, 4), ()))
    9
    """
    return builtins.sum(it.flatten(t)) if isinstance(t, tuple) else t


@_require
def product_each(t: IntTuple) -> tuple[int, ...]:
    """The product of each top-level mode; an int ``n`` gives ``(n,)`` (CuTe wraps it).

    >>> product_each(((2, 3), 4, ()))
    (6, 4, 1)
    """
    return tuple(it.product(x) for x in (t if isinstance(t, tuple) else (t,)))


@_require
def product_like(t: IntTuple, guide: IntTuple) -> IntTuple:
    """``t`` reduced to the profile of ``guide``: each part of ``t`` at a leaf of ``guide``
    becomes its product.

    >>> product_like(((2, 3), (4, (5, 6))), (0, (0, 0)))
    (6, (4, 30))
    """
    if isinstance(guide, tuple):
        if not isinstance(t, tuple) or len(t) != len(guide):
            raise _mismatch("product_like", t, guide)
        return tuple(product_like(x, g) for x, g in zip(t, guide))
    return it.product(t)


@_require
def elem_scale(a: IntTuple, b: IntTuple) -> IntTuple:
    """``a`` scaled leaf by leaf: each leaf of ``a`` times the product of the matching part of ``b``.

    >>> elem_scale((2, (3, 4)), (5, ((2, 3), 1)))
    (10, (18, 4))
    """
    if isinstance(a, tuple):
        if not isinstance(b, tuple) or len(a) != len(b):
            raise _mismatch("elem_scale", a, b)
        return tuple(elem_scale(x, y) for x, y in zip(a, b))
    return a * it.product(b)


def _c_ceil_div(a: int, b: int) -> int:
    """C++'s ``(a + b - 1) / b``."""
    if b == 0:
        raise AlgebraError(f"division by zero ({a} / {b})")
    return trunc_div(a + b - 1, b)


@_require
def round_up(a: IntTuple, b: IntTuple) -> IntTuple:
    """``a`` rounded up to a multiple of ``b``, leaf by leaf; missing modes of ``b`` count as 1.

    >>> round_up((5, (3, 7)), (4, (2, 8)))
    (8, (4, 8))
    """
    if isinstance(a, tuple) and isinstance(b, tuple):
        if len(b) > len(a):
            raise _mismatch("round_up", a, b)
        return tuple(round_up(x, y) for x, y in zip(a, b + (1,) * (len(a) - len(b))))
    if isinstance(a, tuple) or isinstance(b, tuple):
        raise AlgebraError(f"round_up needs ints or two tuples, got {format_int_tuple(a)} and "
                           f"{format_int_tuple(b)}")
    return _c_ceil_div(a, b) * b


@_require
def tuple_ceil_div(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's ``ceil_div`` on IntTuples (the scalar one is :func:`tensorlayout.cute.int_tuple.ceil_div`).

    Two tuples divide mode by mode (missing modes of ``b`` count as 1); a tuple by an int
    folds the divisor left to right (``ceil_div((4,5,6), 40)`` is ``(1,1,3)``); an int by a
    tuple divides by its product.

    >>> tuple_ceil_div((4, 5, 6), 40), tuple_ceil_div((7, 9), (2,))
    ((1, 1, 3), (4, 9))
    """
    if isinstance(a, tuple):
        if isinstance(b, tuple):
            if len(b) > len(a):
                raise _mismatch("ceil_div", a, b)
            return tuple(tuple_ceil_div(x, y) for x, y in zip(a, b + (1,) * (len(a) - len(b))))
        out = []
        for x in a:
            out.append(tuple_ceil_div(x, b))
            b = tuple_ceil_div(b, x)
        return tuple(out)
    if isinstance(b, tuple):
        return _c_ceil_div(a, it.product(b))
    return _c_ceil_div(a, b)


@_require
def evenly_divides(shape: IntTuple, tiler: IntTuple) -> bool:
    """Whether ``tiler`` tiles ``shape`` without a remainder, mode by mode of ``tiler``.

    >>> evenly_divides((8, (4, 3)), (4, 6)), evenly_divides((8, 6), (4, 6, 2))
    (True, False)
    """
    if isinstance(tiler, tuple):
        if len(tiler) > it.rank(shape):
            return False
        modes = shape if isinstance(shape, tuple) else (shape,)
        return all(evenly_divides(s, t) for s, t in zip(modes, tiler))
    return it.product(shape) == tiler * it.product(tuple_ceil_div(shape, tiler))


def make_int_tuple(n_out: int, values: Sequence[int], n: int, init: int) -> IntTuple:
    """``make_int_tuple<N>(t, n, init)``: the first ``n`` of ``values``, padded with ``init``
    to rank ``N``; ``N == 1`` gives an int.

    >>> make_int_tuple(5, [6, 3, 4], 3, 0), make_int_tuple(1, [6], 0, 9)
    ((6, 3, 4, 0, 0), 9)
    """
    if not it.is_int(n_out) or n_out <= 0:
        raise AlgebraError(f"make_int_tuple needs a rank N > 0, got {n_out!r}")
    if not (it.is_int(n) and it.is_int(init)):
        raise AlgebraError(f"make_int_tuple needs an int count and init, got {n!r} and {init!r}")
    if not isinstance(values, (list, tuple)):
        raise AlgebraError(f"make_int_tuple reads a list or tuple of ints, got {type(values).__name__}")
    needed = builtins.min(builtins.max(n, 0), n_out)
    if len(values) < needed or not all(it.is_int(v) for v in values[:needed]):
        raise AlgebraError(f"make_int_tuple reads {needed} ints, got {values!r}"[:200])
    out = tuple(values[i] if i < n else init for i in range(n_out))
    return out[0] if n_out == 1 else out


# ---------------------------------------------------------------- orders


def _lex(a: IntTuple, b: IntTuple, colex: bool) -> bool:
    what = "colex_less" if colex else "lex_less"
    it._same_leaf_kind(a, b, what)
    if not isinstance(a, tuple):
        return a < b  # type: ignore[operator]
    assert isinstance(b, tuple)
    n = builtins.min(len(a), len(b))
    pairs = list(zip(a[::-1], b[::-1]) if colex else zip(a, b))[:n]
    less = [_lex(x, y, colex) for x, y in pairs]  # C++ instantiates every pair
    for (x, y), lt in zip(pairs, less):
        if lt:
            return True
        if x != y:
            return False
    return len(a) < len(b)


@_require
def lex_less(a: IntTuple, b: IntTuple) -> bool:
    """Lexicographic ``a < b`` (first mode most significant); a proper prefix is less.

    >>> lex_less((1, (2, 3)), (1, (2, 4))), lex_less((1, 2), (1, 2, 0))
    (True, True)
    """
    return _lex(a, b, colex=False)


@_require
def lex_leq(a: IntTuple, b: IntTuple) -> bool:
    """``not lex_less(b, a)``."""
    return not _lex(b, a, colex=False)


@_require
def lex_gtr(a: IntTuple, b: IntTuple) -> bool:
    """``lex_less(b, a)``."""
    return _lex(b, a, colex=False)


@_require
def lex_geq(a: IntTuple, b: IntTuple) -> bool:
    """``not lex_less(a, b)``."""
    return not _lex(a, b, colex=False)


@_require
def colex_less(a: IntTuple, b: IntTuple) -> bool:
    """Colexicographic ``a < b`` (last mode most significant; modes aligned from the end).

    >>> colex_less((5, 1), (0, 2)), colex_less((2, 3), (1, 2, 3))
    (True, True)
    """
    return _lex(a, b, colex=True)


@_require
def colex_leq(a: IntTuple, b: IntTuple) -> bool:
    """``not colex_less(b, a)``."""
    return not _lex(b, a, colex=True)


@_require
def colex_gtr(a: IntTuple, b: IntTuple) -> bool:
    """``colex_less(b, a)``."""
    return _lex(b, a, colex=True)


@_require
def colex_geq(a: IntTuple, b: IntTuple) -> bool:
    """``not colex_less(a, b)``."""
    return not _lex(a, b, colex=True)


@_require
def elem_leq(a: IntTuple, b: IntTuple) -> bool:
    """``not elem_less(b, a)`` (CuTe's definition: not "every leaf ``<=``").

    >>> elem_leq((1, 5), (2, 3)), elem_gtr((3, 4), (1, 2)), elem_geq((0, 9), (1, 2))
    (True, True, True)
    """
    return not it._elem_less(b, a)


@_require
def elem_gtr(a: IntTuple, b: IntTuple) -> bool:
    """``elem_less(b, a)``."""
    return it._elem_less(b, a)


@_require
def elem_geq(a: IntTuple, b: IntTuple) -> bool:
    """``not elem_less(a, b)``."""
    return not it._elem_less(a, b)


# ---------------------------------------------------------------- index to coordinate


@_require
def idx2crd_strided(idx: IntTuple, shape: IntTuple, stride: IntTuple) -> IntTuple:
    """CuTe's three-argument ``idx2crd(i, s, d)``: each leaf coordinate is ``(i / d) % s``
    (C++ division; a static extent 1 gives 0). An int stride against a tuple shape is the start
    of compact column-major strides. Right for compact layouts only, as C++ notes.

    >>> idx2crd_strided(4, (2, 3), (3, 1)), idx2crd_strided(5, ((2, 2), 2), ((1, 2), 4))
    ((1, 1), ((1, 0), 1))
    """
    if isinstance(idx, tuple):
        if not (isinstance(shape, tuple) and isinstance(stride, tuple)
                and len(idx) == len(shape) == len(stride)):
            raise AlgebraError(f"idx2crd: coordinate {format_int_tuple(idx)} does not match shape "
                               f"{format_int_tuple(shape)} and stride {format_int_tuple(stride)}")
        return tuple(idx2crd_strided(i, s, d) for i, s, d in zip(idx, shape, stride))
    if isinstance(shape, tuple):
        if not isinstance(stride, tuple):
            stride = _zero_unit(shape, it.prefix_product(shape, stride))
        if len(stride) != len(shape):  # type: ignore[arg-type]
            raise _mismatch("idx2crd", shape, stride)
        return tuple(idx2crd_strided(idx, s, d) for s, d in zip(shape, stride))  # type: ignore[arg-type]
    if isinstance(stride, tuple):
        raise _mismatch("idx2crd", shape, stride)
    if shape == 1:
        return 0
    if stride == 0 or shape == 0:
        raise AlgebraError(f"idx2crd: division by zero (extent {shape}, stride {stride})")
    return trunc_mod(trunc_div(idx, stride), shape)


def _zero_unit(shape: IntTuple, stride: IntTuple) -> IntTuple:
    """Stride 0 at every extent-1 leaf (CuTe's compact strides of a static 1)."""
    if isinstance(shape, tuple):
        return tuple(_zero_unit(s, d) for s, d in zip(shape, stride))  # type: ignore[arg-type]
    return 0 if shape == 1 else stride


@_require
def flat_coord(crd: IntTuple, shape: IntTuple) -> IntTuple:
    """A natural coordinate of ``shape`` with each top-level mode as its 1-D (colexicographic)
    coordinate: C++'s ``crd2crd(crd, shape, repeat<rank>(_1))``; rank 1 gives an int.

    >>> flat_coord((1, (2, 1)), (2, (3, 4))), flat_coord(((1, 2),), ((2, 3),))
    ((1, 5), 5)
    """
    if isinstance(shape, tuple) and len(shape) > 1:
        if not isinstance(crd, tuple) or len(crd) != len(shape):
            raise _mismatch("crd2crd", crd, shape)
        return tuple(it.crd2idx(c, s) for c, s in zip(crd, shape))
    return it.crd2idx(crd, shape)
