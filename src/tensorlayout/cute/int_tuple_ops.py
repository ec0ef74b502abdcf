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
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from tensorlayout.core.intmath import trunc_div, trunc_mod
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute.coords import crd2idx
from tensorlayout.cute.int_tuple import IntTuple, _, format_int_tuple
from tensorlayout.errors import AlgebraError, LayoutError

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
        raise AlgebraError(f"make_int_tuple needs a rank N > 0, got {it.describe(n_out)}")
    if not (it.is_int(n) and it.is_int(init)):
        raise AlgebraError(f"make_int_tuple needs an int count and init, got {it.describe(n)} and "
                           f"{it.describe(init)}")
    if not isinstance(values, (list, tuple)):
        raise AlgebraError(f"make_int_tuple reads a list or tuple of ints, got {type(values).__name__}")
    needed = builtins.min(builtins.max(n, 0), n_out)
    if len(values) < needed or not all(it.is_int(v) for v in values[:needed]):
        raise AlgebraError(f"make_int_tuple reads {needed} ints, got {it.describe(values)}")
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
        return tuple(crd2idx(c, s) for c, s in zip(crd, shape))
    return crd2idx(crd, shape)


# ---------------------------------------------------------------- tuple_algorithms.hpp
# The IntTuple forms of get/take/select/group/flatten/unflatten/append/prepend/zip/slice/dice,
# on checked IntTuples: the public functions of tensorlayout.cute.layout check their arguments and
# apply these to an IntTuple, or to a Layout's shape and stride (C++'s ``make_layout(f(shape),
# f(stride))``). Where C++ does not compile a call (an index out of range, B > E) they raise
# LayoutError.


def _modes(t: IntTuple) -> tuple[Any, ...]:
    """The top-level modes: an int is its own single mode (CuTe's ``rank(int) == 1``)."""
    return t if isinstance(t, tuple) else (t,)


def _index(i: Any, what: str) -> int:
    if not it.is_int(i):
        raise LayoutError(f"{what}: a mode index must be an int, got {it.describe(i)}")
    return int(i)


def tuple_get(t: IntTuple, *path: int) -> IntTuple:
    """CuTe's ``get<I0,I1,...>(t)``: mode ``I0``, then its mode ``I1``...; ``get<0>`` of an int
    is the int (negative indices count from the end).

    >>> tuple_get((2, (3, 4)), 1, 0), tuple_get(5, 0)
    (3, 5)
    """
    for p in path:
        i = _index(p, "get")
        ms = _modes(t)
        if not -len(ms) <= i < len(ms):
            raise LayoutError(f"get: mode {i} is out of range for {format_int_tuple(t)} (rank "
                              f"{len(ms)})")
        t = ms[i]
    return t


def tuple_select(t: IntTuple, modes: Iterable[int]) -> tuple[Any, ...]:
    """CuTe's ``select<I...>(t)``: the tuple of modes ``I...`` (repeats allowed).

    >>> tuple_select((2, (3, 4)), [1, 0, 1])
    ((3, 4), 2, (3, 4))
    """
    if not isinstance(modes, Iterable) or isinstance(modes, (str, bytes)):
        raise LayoutError(f"select: expected a sequence of mode indices, got {it.describe(modes)}")
    return tuple(tuple_get(t, m) for m in modes)


def _range(t: IntTuple, begin: Any, end: Any, what: str) -> tuple[int, int]:
    """``[begin, end)`` of C++'s ``take``/``group``: ``end == -1`` is the rank; in bounds, ordered."""
    b, e, r = _index(begin, what), _index(end, what), len(_modes(t))
    e = r if e == -1 else e
    if not 0 <= b <= e <= r:
        raise LayoutError(f"{what}: [{begin},{end}) is out of range for {format_int_tuple(t)} "
                          f"(rank {r})")
    return b, e


def tuple_take(t: IntTuple, begin: int, end: int) -> tuple[Any, ...]:
    """CuTe's ``take<B,E>(t)``: modes ``[B, E)`` as a tuple (``E == -1``: to the end).

    >>> tuple_take((2, 3, 4), 1, -1), tuple_take(5, 0, 1)
    ((3, 4), (5,))
    """
    b, e = _range(t, begin, end, "take")
    return _modes(t)[b:e]


def tuple_group(t: IntTuple, begin: int, end: int) -> tuple[Any, ...]:
    """CuTe's ``group<B,E>(t)``: modes ``[B, E)`` wrapped into one; ``B == E`` adds nothing.

    >>> tuple_group((2, 3, 4), 1, 3), tuple_group((2, 3, 4), 1, 1), tuple_group(5, 0, 1)
    ((2, (3, 4)), (2, 3, 4), ((5,),))
    """
    b, e = _range(t, begin, end, "group")
    ms = _modes(t)
    return ms[:b] + ((ms[b:e],) if b < e else ()) + ms[e:]


def tuple_flatten(t: IntTuple) -> IntTuple:
    """CuTe's ``flatten``: a tuple's leaves as a flat tuple; an int stays an int.

    >>> tuple_flatten((2, ((3,), 4))), tuple_flatten(5)
    ((2, 3, 4), 5)
    """
    return it.flatten(t) if isinstance(t, tuple) else t


def tuple_unflatten(t: IntTuple, profile: IntTuple) -> IntTuple:
    """CuTe's ``unflatten(t, profile)``: the modes of ``t``, taken in order, one per leaf of
    ``profile`` and nested like it (all of them used).

    >>> tuple_unflatten((1, 2, 3), (0, (0, 0))), tuple_unflatten(5, 0)
    ((1, (2, 3)), 5)
    """
    ms = _modes(t)
    n = len(it.flatten(profile))
    if n != len(ms):
        raise AlgebraError(f"unflatten: {format_int_tuple(t)} has {len(ms)} modes, the profile "
                           f"{format_int_tuple(profile)} {n} leaves")
    return it.unflatten(ms, profile)


def tuple_append(t: IntTuple, x: IntTuple, n: int | None = None) -> IntTuple:
    """CuTe's ``append(t, x)``; with ``n``, ``append<N>``: ``x`` repeated up to rank ``n``.

    >>> tuple_append((2, 3), 4), tuple_append(5, 1, 3), tuple_append(5, 1, 1)
    ((2, 3, 4), (5, 1, 1), 5)
    """
    return _extend(t, x, n, "append", lambda ms, pad: ms + pad)


def tuple_prepend(t: IntTuple, x: IntTuple, n: int | None = None) -> IntTuple:
    """CuTe's ``prepend(t, x)``; with ``n``, ``prepend<N>``: ``x`` repeated up to rank ``n``.

    >>> tuple_prepend((2, 3), 4), tuple_prepend(5, (1, 2))
    ((4, 2, 3), ((1, 2), 5))
    """
    return _extend(t, x, n, "prepend", lambda ms, pad: pad + ms)


#: The most modes append/prepend add to reach a rank (a tuple of 2**20 entries is 8 MiB).
MAX_PAD = 1 << 20


def _extend(t: IntTuple, x: IntTuple, n: Any, what: str,
            join: Callable[[tuple[Any, ...], tuple[Any, ...]], tuple[Any, ...]]) -> IntTuple:
    """append/prepend: one ``x`` joined, or as many as reach rank ``n`` (``t`` itself at rank ``n``)."""
    ms = _modes(t)
    if n is None:
        return join(ms, (x,))
    k = _index(n, what) - len(ms)
    if not 0 <= k <= MAX_PAD:
        raise LayoutError(f"{what}: rank {n} is below the rank {len(ms)} of {format_int_tuple(t)} or "
                          f"more than {MAX_PAD} modes above it")
    return t if k == 0 else join(ms, (x,) * k)


def tuple_zip(a: IntTuple, b: IntTuple) -> IntTuple:
    """CuTe's ``zip(a, b)``: ``((a0,b0),(a1,b1),...)`` for tuples of one rank; an int ``a``
    gives ``((a,b))``.

    >>> tuple_zip((2, 3), (4, (5, 6))), tuple_zip(5, (3, 4))
    (((2, 4), (3, (5, 6))), ((5, (3, 4)),))
    """
    if not isinstance(a, tuple):
        return ((a, b),)
    if not isinstance(b, tuple) or len(a) != len(b):
        raise LayoutError(f"zip needs equal ranks, got {format_int_tuple(a)} and "
                          f"{format_int_tuple(b)}")
    return tuple(zip(a, b))


def _valid_slicer(c: Any, level: int = 0) -> bool:
    if type(c) is tuple:
        return level < it.MAX_DEPTH and builtins.all(_valid_slicer(x, level + 1) for x in c)
    return c is None or c is _ or it.is_int(c)


def _lift(c: Any, t: IntTuple, keep_wild: bool, out: list[Any]) -> list[Any]:
    """Append the parts of ``t`` that ``c`` pairs with ``_`` (or with ints, ``keep_wild`` false)."""
    if isinstance(c, tuple):
        if not isinstance(t, tuple) or len(c) != len(t):
            raise LayoutError(f"slice coordinate {format_int_tuple(c)} does not match "
                              f"{format_int_tuple(t)}")
        for x, y in zip(c, t):
            _lift(x, y, keep_wild, out)
    elif (c is _ or c is None) == keep_wild:
        out.append(t)
    return out


def tuple_slice(c: Any, t: IntTuple, keep_wild: bool = True) -> IntTuple:
    """CuTe's ``slice(c, t)``: the parts of ``t`` paired with ``_`` in ``c``, as a flat tuple of
    them; ``slice(_, t)`` is ``t`` itself. ``keep_wild=False`` is ``dice`` (the parts paired with
    ints; ``dice(int, t)`` is ``t``). ``None`` counts as ``_``.

    >>> tuple_slice((1, (_, 0), _), (2, (3, 4), 5)), tuple_slice((1, (_, 0), _), (2, (3, 4), 5), False)
    ((3, 5), (2, 4))
    """
    if not _valid_slicer(c):
        raise LayoutError(f"slice: a slice coordinate is ints and _ in tuples nested at most "
                          f"{it.MAX_DEPTH} levels, got {it.describe(c)}")
    if isinstance(c, tuple):
        return tuple(_lift(c, t, keep_wild, []))
    return t if (c is _ or c is None) == keep_wild else ()
