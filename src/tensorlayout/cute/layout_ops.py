"""CuTe's compact strides in any order (``stride.hpp``), coordinate iteration, and the rest of
``layout.hpp``: codomain shapes, identity and fragment layouts, domain helpers, mode surgery.

Each function follows CuTe's C++ case by case (every int counts as static, as in the rest of
:mod:`tensorlayout.cute`).

>>> compact_order((2, 3, 4), (1, 0, 2)), list(make_coord_iterator((2, 2)))
((3, 1, 6), [(0, 0), (1, 0), (0, 1), (1, 1)])
>>> L = Layout.parse("(4,(2,3)):(2,(1,8))")
>>> coshape(L), str(domain_distribute((15, 14), 6)), max_alignment(L)
(24, '(3,2):(1,15)', 24)
>>> str(make_identity_layout((2, 3))), make_identity_layout((2, 3))(4)
('(2,3):(_1@0,_1@1)', (0,2))
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterator
from typing import Any

from tensorlayout.core.intmath import trunc_div
from tensorlayout.cute import int_tuple as it
from tensorlayout.cute import int_tuple_ops as ops
from tensorlayout.cute.algebra import composition, logical_divide, right_inverse, tiled_product
from tensorlayout.cute.basis import CoordLayout, as_arithmetic_tuple, basis_add, make_basis_like
from tensorlayout.cute.coalescing import coalesce, filter_zeros
from tensorlayout.cute.int_tuple import IntTuple, format_int_tuple
from tensorlayout.cute.layout import (
    Layout,
    as_layout,
    compact_col_major,
    compact_row_major,
    cosize,
    get,
    make_layout,
)
from tensorlayout.errors import AlgebraError, LayoutError

__all__ = [
    "compact_major",
    "compact_order",
    "coprofile",
    "coshape",
    "domain_distribute",
    "domain_offset",
    "make_coord_iterator",
    "make_fragment_like",
    "make_identity_layout",
    "max_alignment",
    "replace",
    "tile_unzip",
    "transform_layout",
    "with_shape",
]

_MAJORS = ("LayoutLeft", "LayoutRight")


# ---------------------------------------------------------------- stride.hpp


def compact_major(major: str, shape: IntTuple, current: IntTuple = 1) -> IntTuple:
    """``compact_major<Major>(shape, current)``: compact strides, ``"LayoutLeft"`` (first mode
    fastest) or ``"LayoutRight"``, starting at ``current`` (a tuple: one start per mode).

    >>> compact_major("LayoutRight", (2, (3, 4))), compact_major("LayoutLeft", (2, 3), (5, 7))
    ((12, (4, 1)), (5, 7))
    """
    if not isinstance(major, str) or major not in _MAJORS:
        raise LayoutError(f"compact_major: expected 'LayoutLeft' or 'LayoutRight', got {it.describe(major)}")
    _check(shape, current)
    if isinstance(current, tuple):
        if not isinstance(shape, tuple) or len(shape) != len(current):
            raise AlgebraError(f"compact_major: mismatched ranks, {format_int_tuple(shape)} and "
                               f"{format_int_tuple(current)}")
        return tuple(compact_major(major, s, c) for s, c in zip(shape, current))
    return (compact_col_major if major == "LayoutLeft" else compact_row_major)(shape, current)


def compact_order(shape: IntTuple, order: IntTuple | str) -> IntTuple:
    """Compact strides visiting the modes by increasing ``order`` (``"LayoutLeft"`` and
    ``"LayoutRight"`` allowed). Each leaf of ``order`` owns the matching part of ``shape``
    (compact column-major inside); equal orders start at the same stride, as in C++.

    >>> compact_order((2, (3, 4)), (1, 0)), compact_order((2, 3), (0, 0))
    ((12, (1, 3)), (1, 1))
    """
    if isinstance(order, str):
        return compact_major(order, shape)
    _check(shape, order)
    ref_shape = it.flatten(ops.product_like(shape, order))
    ref_order = it.flatten(order)

    def go(s: IntTuple, o: IntTuple) -> IntTuple:
        if isinstance(o, tuple):
            return tuple(go(x, y) for x, y in zip(s, o))  # type: ignore[arg-type]
        start = it.product(tuple(n for n, r in zip(ref_shape, ref_order) if r < o))
        return compact_col_major(s, start)
    return go(shape, order)


def _check(*ts: Any) -> None:
    for t in ts:
        if not it._valid(t):
            raise LayoutError(f"expected an int or a nested tuple of ints, got {it.describe(t)}")


def make_coord_iterator(shape: IntTuple, order: IntTuple | None = None,
                        coord: IntTuple | None = None) -> Iterator[IntTuple]:
    """The coordinates of ``shape`` from ``coord`` (default all zeros), colexicographically or,
    with ``order``, fastest along the leaf of order 0, then 1, ... (C++'s ForwardCoordIterator).

    C++'s iterator never ends when an extent other than the last one visited is 0; here that
    is a LayoutError, as is a start outside the shape.

    >>> list(make_coord_iterator((2, 2), order=(1, 0)))
    [(0, 0), (0, 1), (1, 0), (1, 1)]
    """
    _check(shape)
    flat = it.flatten(shape)
    n = len(flat)
    visit = list(range(n))
    if order is not None:
        _check(order)
        flat_order = it.flatten(order)
        if not it.congruent(order, shape) or sorted(flat_order) != visit:
            raise LayoutError(f"order {format_int_tuple(order)} must be congruent with shape "
                              f"{format_int_tuple(shape)} and number its leaves 0..{n - 1}")
        visit = [flat_order.index(i) for i in range(n)]
    if coord is not None and (not it._valid(coord) or not it.congruent(coord, shape)):
        raise LayoutError(f"coordinate {it.describe(coord)} is not congruent with shape "
                          f"{format_int_tuple(shape)}")
    start = [0] * n if coord is None else list(it.flatten(coord))
    if n == 0:
        raise LayoutError("an empty shape has no coordinate iterator (C++ does not compile one)")
    if any(flat[k] == 0 for k in visit[:-1]):
        raise LayoutError(f"shape {format_int_tuple(shape)}: C++'s coordinate iterator never ends")
    if start[visit[-1]] != flat[visit[-1]] and not all(0 <= c < s for c, s in zip(start, flat)):
        raise LayoutError(f"start {format_int_tuple(coord)} is outside shape {format_int_tuple(shape)}")
    return _iterate(start, flat, visit, shape)


def _iterate(crd: list[int], flat: tuple[int, ...], visit: list[int], shape: IntTuple) -> Iterator[IntTuple]:
    last = visit[-1]
    while crd[last] != flat[last]:
        yield it.unflatten(crd, shape)
        crd[visit[0]] += 1
        for prev, nxt in itertools.pairwise(visit):
            if crd[prev] == flat[prev]:
                crd[prev] = 0
                crd[nxt] += 1


# ---------------------------------------------------------------- codomain


def make_identity_layout(shape: IntTuple) -> Layout | CoordLayout:
    """The layout mapping each coordinate of ``shape`` to itself: its strides are CuTe's unit
    bases (``_1@0``, ``_1@0@1``, ...); an int shape ``n`` gives ``n:_1`` (C++'s ``E<>`` is ``_1``).

    >>> I = make_identity_layout((2, (3, 4)))
    >>> str(I), str(I(5)), I(3) == (1, (1, 0)), str(make_identity_layout(5))
    ('(2,(3,4)):(_1@0,(_1@0@1,_1@1@1))', '(1,(2,0))', True, '5:_1')
    """
    _check(shape)
    if any(x < 0 for x in it.flatten(shape)):
        raise LayoutError(f"an identity layout needs extents >= 0, got {it.describe(shape)}")
    if isinstance(shape, tuple):
        return CoordLayout(shape, make_basis_like(shape))
    return make_layout(shape, it.Int(1))


def coshape(layout: Layout | CoordLayout, *path: int) -> IntTuple:
    """``coshape<path...>(layout)``: the :func:`cosize` of the sub-layout at ``path`` (an int
    for an integer-strided layout); one past the last coordinate for a scaled-basis layout.

    >>> coshape(Layout.parse("(2,3):(3,1)")), coshape(Layout.parse("(0,3):(1,5)"))
    (6, 10)
    """
    _check_path(path)
    if isinstance(layout, CoordLayout):
        return _sub_shape(_coshape(layout), path)
    return cosize(get(as_layout(layout), *path))


def coprofile(layout: Layout | CoordLayout, *path: int) -> IntTuple:
    """The profile of the codomain as zeros: 0 for an integer-strided layout, the shape's
    profile for an identity layout.

    >>> coprofile(Layout.parse("(2,3):(3,1)")), coprofile(make_identity_layout((2, (3, 4))))
    (0, (0, (0, 0)))
    """
    _check_path(path)
    if isinstance(layout, CoordLayout):
        return _zeros_like(_sub_shape(_coshape(layout), path))
    get(as_layout(layout), *path)  # the path must exist
    return 0


def _coshape(layout: CoordLayout) -> IntTuple:
    """CuTe's coshape of a scaled-basis layout: its coordinate at the last index, plus one."""
    last = as_arithmetic_tuple(layout(it.transform_leaf(
        layout.shape, lambda s: it.Int(s - 1) if type(s) is it.Int else s - 1)))
    return _plus_one(last)


def _plus_one(t: Any) -> Any:
    return tuple(_plus_one(x) for x in t) if isinstance(t, tuple) else basis_add(t, it.Int(1))


def _check_path(path: tuple[Any, ...]) -> None:
    if not all(it.is_int(k) for k in path):
        raise LayoutError(f"a mode path is ints, got {it.describe(path)}")


def _sub_shape(shape: IntTuple, path: tuple[int, ...]) -> IntTuple:
    for k in path:
        if not isinstance(shape, tuple) or not -len(shape) <= k < len(shape):
            raise LayoutError(f"mode {k} is out of range for shape {format_int_tuple(shape)}")
        shape = shape[k]
    return shape


def _zeros_like(t: IntTuple) -> IntTuple:
    return tuple(_zeros_like(x) for x in t) if isinstance(t, tuple) else 0


# ---------------------------------------------------------------- construction and domains


def with_shape(layout: Layout, *shapes: IntTuple) -> Layout:
    """``layout.with_shape(shape)``: ``composition(layout, make_layout(shape))``; several
    shapes are the modes of one shape.

    >>> str(with_shape(Layout.parse("12:1"), 3, 4))
    '(3,4):(1,3)'
    """
    if not shapes:
        raise LayoutError("with_shape needs a shape")
    shape = shapes[0] if len(shapes) == 1 else tuple(shapes)
    return composition(as_layout(layout), make_layout(shape))


def make_fragment_like(layout: Layout | IntTuple) -> Layout:
    """A compact layout of ``layout``'s shape: mode 0 column-major (keeping its stride-0 leaves),
    the other modes ordered as ``layout``'s strides (C++ for a static layout of rank > 1).

    >>> str(make_fragment_like(Layout.parse("((2,2),3,4):((0,1),20,4)")))
    '((2,2),3,4):((0,1),8,2)'
    """
    if not isinstance(layout, Layout):
        return make_layout(layout)
    if layout.rank() <= 1:
        return make_layout(layout.shape)
    modes = layout.modes()
    mode0 = modes[0]
    stride0 = compact_major("LayoutLeft", filter_zeros(mode0).shape)
    rest_shape = tuple(m.shape for m in modes[1:])
    rest = make_layout(rest_shape, compact_order(rest_shape, tuple(m.stride for m in modes[1:])))
    return tiled_product(make_layout(mode0.shape, stride0), rest)


def domain_distribute(a: Layout | IntTuple, b: int) -> Layout:
    """A layout of at most ``b`` elements of ``a``'s domain, spread over its leaves left to
    right (gcd by gcd), surjective and ordered.

    >>> str(domain_distribute((15, 14), 6)), str(domain_distribute((4, 8), 16))
    ('(3,2):(1,15)', '16:1')
    """
    shape = a.shape if isinstance(a, Layout) else a
    _check(shape, b)
    flat = it.flatten(shape)
    if isinstance(b, tuple):
        raise LayoutError(f"domain_distribute needs an int count, got {format_int_tuple(b)}")
    out = []
    rest = b
    for s in flat:
        g = ops.gcd(s, rest)
        if g == 0:
            raise AlgebraError("domain_distribute: gcd(0, 0) divides nothing")
        out.append(g)
        rest = trunc_div(rest, g)
    return coalesce(make_layout(tuple(out), compact_major("LayoutLeft", flat)))


def domain_offset(coord: IntTuple, layout: Layout) -> tuple[Layout, int]:
    """``(layout, layout(coord))``: the pointer offset of a coordinate, the layout unchanged.

    >>> domain_offset((1, 2), Layout.parse("(2,3):(3,1)"))
    (Layout((2,3):(3,1)), 5)
    """
    layout = as_layout(layout)
    return layout, layout(coord)


def replace(layout: Layout, n: int, x: Layout) -> Layout:
    """``replace<N>(layout, x)``: mode ``n`` replaced by the layout ``x`` (``n`` = rank appends).

    >>> str(replace(Layout.parse("(2,3,4):(1,2,6)"), 1, Layout(5, 7)))
    '(2,5,4):(1,7,6)'
    """
    layout, x = as_layout(layout), as_layout(x)
    if not it.is_int(n):
        raise LayoutError(f"replace: a mode index is an int, got {it.describe(n)}")
    if not isinstance(layout.shape, tuple):
        if n != 0:
            raise LayoutError(f"mode {n} is out of range for {layout} (rank 1)")
        return x
    if not 0 <= n <= len(layout.shape):
        raise LayoutError(f"mode {n} is out of range for {layout}")
    modes = list(layout.modes())
    modes[n:n + 1] = [x]  # n == rank appends, as C++'s replace<N> does
    return Layout(tuple(m.shape for m in modes), tuple(m.stride for m in modes))


def _modes_of(t: Any) -> tuple[Any, ...]:
    if isinstance(t, Layout):
        return t.modes()
    return t if isinstance(t, tuple) else (t,)


def transform_layout(t0: Any, f: Callable[..., Layout] | Any,
                     f2: Callable[..., Layout] | None = None) -> Layout:
    """``transform_layout(t, f)``: the layout of ``f`` of each mode; ``transform_layout(t0, t1, f)``:
    ``f`` of the paired modes, then the unpaired modes of ``t0`` and ``t1`` appended.

    >>> L = Layout.parse("(4,6):(1,4)")
    >>> str(transform_layout(L, lambda m: Layout(m.shape, 2 * m.stride)))
    '(4,6):(2,8)'
    >>> str(transform_layout(L, (Layout(2, 3),), lambda a, b: Layout(b.shape, a.stride)))
    '(2,6):(1,4)'
    """
    if not callable(f2 if f2 is not None else f):
        raise LayoutError("transform_layout needs a function of the modes")
    if f2 is None:
        out = [f(m) for m in _modes_of(t0)]
    else:
        m0, m1 = _modes_of(t0), _modes_of(f)
        r = min(len(m0), len(m1))
        out = [f2(a, b) for a, b in zip(m0, m1)] + list(m0[r:]) + list(m1[r:])
    if not out or not all(isinstance(m, Layout) for m in out):
        raise LayoutError("transform_layout: the result must have modes, each a Layout")
    return make_layout(*out)


def _zip2_by(t: IntTuple, guide: Any) -> tuple[Any, Any]:
    """CuTe's ``zip2_by``: the rank-2 modes at the leaves of ``guide`` split into (firsts, seconds)."""
    if isinstance(guide, tuple):
        if not isinstance(t, tuple) or len(t) < len(guide):
            raise AlgebraError(f"tile_unzip: {format_int_tuple(t)} has fewer modes than the tiler")
        split = [_zip2_by(x, g) for x, g in zip(t, guide)]
        return tuple(s[0] for s in split), tuple(s[1] for s in split) + t[len(guide):]
    if not isinstance(t, tuple) or len(t) != 2:
        raise AlgebraError(f"tile_unzip: expected a rank-2 mode at a tiler leaf, got {format_int_tuple(t)}")
    return t[0], t[1]


def tile_unzip(layout: Layout, tiler: Any) -> Layout:
    """Zip the rank-2 modes at the leaves of ``tiler`` into (tiles, rests): ``logical_divide``
    followed by ``tile_unzip`` is ``zipped_divide``.

    >>> L = logical_divide(Layout.parse("(8,6):(1,8)"), (2, 3))
    >>> str(L), str(tile_unzip(L, (2, 3)))
    ('((2,4),(3,2)):((1,2),(8,24))', '((2,3),(4,2)):((1,8),(2,24))')
    """
    layout = as_layout(layout)
    return Layout(_zip2_by(layout.shape, tiler), _zip2_by(layout.stride, tiler))


def max_alignment(layout: Layout) -> int:
    """The largest ``N`` for which ``upcast<N>(layout)`` compiles: the size of the contiguous
    run from offset 0 that ``right_inverse`` finds, gcd'd with the stride that follows it.

    >>> [max_alignment(Layout.parse(t)) for t in ("(4,8):(8,1)", "(3,5):(1,3)", "(4,8):(2,16)")]
    [32, 15, 1]
    """
    flat = coalesce(as_layout(layout))
    permuted = logical_divide(flat, right_inverse(flat))
    return ops.gcd(get(permuted, 0).size(), get(permuted, 1).stride)
